"""The embedder as `status` and `doctor` show it: the running worker's state (/api/health's
`embedding`) and the backlog, the records the configured model has not embedded yet.

Only the worker knows whether its model loaded: `doctor`'s own model check reads the files,
but an onnxruntime that cannot load them, or a store locked for minutes, shows only here. The
backlog is read from the store, worker or not, by one function for both commands, so a
"ready" embedder with thousands of records still to do says so in each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from claude_mem.text import counted

if TYPE_CHECKING:
    from claude_mem.settings import Settings
    from claude_mem.store.db import Database

_STATES = {
    "waiting": "idle: nothing to embed yet",
    "loading": "loading the model",
    "ready": "ready",
    "locked": "waiting for `claude-mem reindex` to finish",
}


def from_worker() -> dict[str, Any] | None:
    """The running worker's embedder state; None without a worker or with vectors off."""
    from claude_mem.worker import lifecycle  # noqa: PLC0415 - only when asked

    found = lifecycle.find_running(timeout=0.5)
    embedding = found.health.get("embedding") if found is not None else None
    return embedding if isinstance(embedding, dict) else None


def describe(embedding: dict[str, Any]) -> tuple[str, str]:
    """(ok | warn, one line) for the embedder state the worker reported."""
    state, error = embedding.get("state"), embedding.get("error")
    if state == "failed":
        return "warn", (
            f"stopped, the model did not load ({error}); search uses full text only "
            "(fix the model, then `claude-mem worker restart`)"
        )
    if state == "retrying":
        tries = embedding.get("failures", 0)
        return "warn", f"waiting for the database ({error}; {tries} tries so far, retrying)"
    return "ok", _STATES.get(str(state), str(state))


def doctor_check() -> tuple[str, str, str] | None:
    """`doctor`'s line for the worker's embedder, or None when no worker embeds."""
    embedding = from_worker()
    if embedding is None:
        return None
    status, detail = describe(embedding)
    return "worker embedding", status, detail


def configured_model(settings: Settings) -> str | None:
    """The configured model's id as its vectors record it; None when vectors are off or its
    files cannot be read (doctor's model check says why)."""
    from claude_mem.search import embed  # noqa: PLC0415 - only when asked

    name = settings.get_str("CLAUDE_MEM_EMBEDDING_MODEL")
    if name == "none":
        return None
    try:
        _, sha256 = embed.locate(name)
    except (embed.ModelUnavailable, ValueError):
        return None
    return embed.model_id(name, sha256)


def backlog(db: Database, model_id: str) -> int:
    """Records with no vector from `model_id` yet: the backlog `status` and `doctor` show."""
    from claude_mem.store import vectors  # noqa: PLC0415 - only when asked
    from claude_mem.store.search_queries import KINDS  # noqa: PLC0415

    conn = db.read()
    return sum(vectors.count_missing(conn, kind, model_id) for kind in KINDS)


def describe_backlog(missing: int) -> str:
    """The backlog in people's words, the same in `status` and `doctor`."""
    return (
        f"{counted(missing, 'record')} not embedded yet "
        "(the worker embeds them; or `claude-mem reindex --resume`)"
    )
