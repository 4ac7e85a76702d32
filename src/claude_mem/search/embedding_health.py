"""The running worker's embedder as `status` and `doctor` show it (/api/health's `embedding`).

Only the worker knows whether its model loaded: `doctor`'s own model check reads the files,
but an onnxruntime that cannot load them, or a store locked for minutes, shows only here.
"""

from __future__ import annotations

from typing import Any

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
