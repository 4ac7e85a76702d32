"""`claude-mem reindex`: embed every observation, summary and prompt again with the current
model (after a model change, or to repair vectors). Resumable with --resume.

With a worker running, the worker does it (its embedder owns the vectors: a second process
would embed the same rows and delete vectors under it) and this command shows its progress;
Ctrl-C stops watching and leaves the worker's reindex running (`reindex --resume` watches it
again). Without a worker it embeds here, holding the embedding lock, so a worker started
meanwhile waits for it. Nothing to embed means no model load: it answers at once.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

KIND_CHOICES = ("observation", "summary", "prompt")
POLL_S = 0.25
READY_WAIT_S = 15.0  # a worker still opening its store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kind",
        action="append",
        choices=KIND_CHOICES,
        help="only this kind (repeatable; default: all)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep vectors already made by the current model; embed only the rest",
    )


def _progress() -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )


def _label(kind: str) -> str:
    return "summaries" if kind == "summary" else f"{kind}s"


# --- through the worker ----------------------------------------------------------------------


def _worker() -> tuple[Any, str] | None:
    """(the running worker, its token) once its store is open, or None without a worker."""
    from claude_mem.worker import lifecycle
    from claude_mem.worker.token import read_token

    deadline = time.monotonic() + READY_WAIT_S
    while (found := lifecycle.find_running(timeout=1.0)) is not None and not found.ready:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the worker (pid {found.pid}) is still opening its database")
        time.sleep(POLL_S)
    token = read_token()
    if found is None:
        return None
    if token is None:
        raise RuntimeError(f"the worker (pid {found.pid}) runs but its token is unreadable")
    return found, token


def _call(worker: tuple[Any, str], method: str, body: dict[str, Any] | None = None) -> Any:
    from claude_mem.worker import client

    found, token = worker
    raw = json.dumps(body).encode() if body is not None else None
    response = client.request(
        method, "/api/embedding/reindex", port=found.port, host=found.host, body=raw,
        token=token, timeout=10,
    )  # fmt: skip
    answer = response.json()
    if response.status != 200:
        error = answer.get("error") if isinstance(answer, dict) else None
        raise RuntimeError(str(error or f"the worker answered HTTP {response.status}"))
    return answer


def _via_worker(worker: tuple[Any, str], kinds: tuple[str, ...], resume: bool) -> int:
    from claude_mem.worker import client

    job = _call(worker, "POST", {"kinds": list(kinds), "resume": resume})
    try:
        print(
            f"the worker (pid {worker[0].pid}) is re-embedding "
            f"{', '.join(map(_label, job['kinds']))} (Ctrl-C stops watching; it carries on)",
            flush=True,
        )
        with _progress() as progress:
            bar = progress.add_task("records", total=job["total"] or None)
            while job["state"] in ("queued", "running"):
                progress.update(bar, total=job["total"] or None, completed=job["done"])
                time.sleep(POLL_S)
                job = _call(worker, "GET")
            progress.update(bar, total=job["total"], completed=job["done"])
    except KeyboardInterrupt:
        print(
            "stopped watching; the worker goes on re-embedding in the background "
            "(`claude-mem reindex --resume` shows its progress again)",
            file=sys.stderr,
        )
        return 130
    except client.WorkerUnavailable:
        print(
            "the worker stopped before the reindex finished; `claude-mem reindex --resume` "
            "continues where it stopped",
            file=sys.stderr,
        )
        return 1
    if job["state"] == "failed":
        print(f"reindex failed: {job['error']}", file=sys.stderr)
        return 1
    return _done(job["done"], job["model_id"])


def _done(count: int, model_id: str) -> int:
    if count:
        print(f"embedded {count:,} rows with {model_id}")
    else:
        print(f"nothing to embed: every record has a vector from {model_id}")
    return 0


# --- here, without a worker -----------------------------------------------------------------


def _here(name: str, kinds: tuple[str, ...], resume: bool) -> int:
    from claude_mem.search import embed
    from claude_mem.search.embedding_task import EmbeddingLock, count_missing, embed_batch
    from claude_mem.store import vectors as store
    from claude_mem.store.db import open_database

    _, sha256 = embed.locate(name)  # the checksum, not the model: cheap
    model_id = embed.model_id(name, sha256)
    with open_database() as db:
        lock = EmbeddingLock(db.path)
        if not lock.acquire():
            print(
                f"another process (pid {lock.holder()}) is embedding this memory: a worker "
                "starting or another `claude-mem reindex`; try again once it is done",
                file=sys.stderr,
            )
            return 1
        try:
            with db.write() as conn:
                store.reset(conn, model_id, kinds, keep=resume)
            totals = {kind: count_missing(db, model_id, (kind,)) for kind in kinds}
            if not any(totals.values()):
                return _done(0, model_id)
            embedder = embed.load_embedder(name)
            assert embedder is not None  # the name is not 'none'
            done = 0
            with _progress() as progress:
                for kind in kinds:
                    bar = progress.add_task(_label(kind), total=totals[kind])
                    below = None  # newest first, each batch below the last: no rescans
                    while batch := embed_batch(db, embedder, kind, below):
                        below = batch.lowest
                        progress.advance(bar, len(batch.ids))
                        done += len(batch.ids)
        finally:
            lock.release()
    return _done(done, model_id)


def run(args: argparse.Namespace) -> int:
    from claude_mem import settings
    from claude_mem.search.embed import ModelUnavailable

    name = settings.load().get_str("CLAUDE_MEM_EMBEDDING_MODEL")
    if name == "none":
        print(
            "embeddings are off (CLAUDE_MEM_EMBEDDING_MODEL=none); nothing to do", file=sys.stderr
        )
        return 1
    kinds = tuple(k for k in KIND_CHOICES if k in (args.kind or KIND_CHOICES))
    try:
        worker = _worker()
        if worker is not None:
            return _via_worker(worker, kinds, args.resume)
        return _here(name, kinds, args.resume)
    except (RuntimeError, ModelUnavailable, ValueError, OSError) as exc:
        print(f"claude-mem reindex: {exc}", file=sys.stderr)
        return 1
