"""`claude-mem reindex`: the worker does it when one runs (the CLI only watches), a worker
started meanwhile waits for a reindex done without one, and nothing to do costs no model load."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from claude_mem.commands import reindex
from claude_mem.search.embedding_task import EmbeddingLock
from claude_mem.store import Database
from claude_mem.store import vectors as store
from claude_mem.store.db import open_database
from tests.net import free_port
from tests.polling import wait_until
from tests.store_helpers import observation, session
from tests.worker_fixtures import RunningWorker, running_worker

# The CLI in a process of its own, saying whether it loaded the model (onnxruntime) itself.
SCRIPT = (
    "import sys\n"
    "from claude_mem.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "print('onnxruntime imported' if 'onnxruntime' in sys.modules else 'no model loaded here')\n"
    "sys.exit(rc)\n"
)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def _rows(db: Database, count: int) -> list[int]:
    sid = session(db)
    return [observation(db, sid, title=f"reindexed change {i}") for i in range(count)]


def _vectors(db: Database) -> int:
    return sum(store.models(db.read()).values())


@pytest.fixture
def no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(free_port()))


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningWorker]:
    """A worker with the real model, where the CLI looks for one."""
    with running_worker() as running:
        monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(running.port))
        yield running


def _local(resume: bool = False) -> int:
    return reindex.run(argparse.Namespace(kind=None, resume=resume))


def test_resume_with_nothing_to_do_answers_without_loading_the_model(no_worker: None) -> None:
    with open_database() as db:
        _rows(db, 2)
    assert _local() == 0  # embeds both, here
    done = _cli("reindex", "--resume")
    assert done.returncode == 0, done.stderr
    assert "nothing to embed: every record has a vector from minilm-l6-int8@" in done.stdout
    assert "no model loaded here" in done.stdout


def test_without_a_worker_reindex_embeds_here_under_the_lock(
    no_worker: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_database() as db:
        _rows(db, 3)
        lock = EmbeddingLock(db.path)
        assert lock.acquire()  # another reindex, or a worker's embedder, at work
        try:
            assert _local() == 1
            assert f"another process (pid {os.getpid()}) is embedding" in capsys.readouterr().err
            assert _vectors(db) == 0
        finally:
            lock.release()
        assert _local() == 0
        assert "embedded 3 rows with minilm-l6-int8@" in capsys.readouterr().out
        assert _vectors(db) == 3
        assert lock.acquire()  # released again
        lock.release()


def _progress(worker: RunningWorker) -> dict[str, Any]:
    answer = worker.client.get("/api/embedding/reindex")
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_with_a_worker_running_the_worker_reindexes_and_the_cli_watches(
    worker: RunningWorker,
) -> None:
    assert worker.state.db is not None
    assert worker.state.embedding is not None
    ids = _rows(worker.state.db, 3)
    embedding = worker.state.embedding
    embedding.notify()
    assert wait_until(lambda: embedding.status()["embedded"]["observation"] == 3, timeout=60)

    done = _cli("reindex")
    assert done.returncode == 0, done.stderr
    assert f"the worker (pid {os.getpid()}) is re-embedding" in done.stdout
    assert "embedded 3 rows with minilm-l6-int8@" in done.stdout
    assert "no model loaded here" in done.stdout  # the worker's embedder did the work
    progress = _progress(worker)
    assert progress | {"state": "done", "total": 3, "done": 3, "resume": False} == progress
    assert _vectors(worker.state.db) == 3
    assert sorted(embedding.index("observation").ids()) == sorted(ids)

    again = _cli("reindex", "--resume", "--kind", "observation")
    assert again.returncode == 0, again.stderr
    assert "nothing to embed" in again.stdout
    assert _progress(worker)["kinds"] == ["observation"]


def test_ctrl_c_stops_watching_and_the_worker_finishes(worker: RunningWorker) -> None:
    assert worker.state.db is not None
    _rows(worker.state.db, 150)
    with subprocess.Popen(
        [sys.executable, "-c", SCRIPT, "reindex"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as cli:  # fmt: skip
        assert cli.stdout is not None
        assert "is re-embedding" in cli.stdout.readline()  # the worker has the job
        cli.send_signal(signal.SIGINT)
        _, stderr = cli.communicate(timeout=60)
    assert cli.returncode == 130
    assert "stopped watching; the worker goes on re-embedding" in stderr
    assert wait_until(lambda: _progress(worker)["state"] == "done", timeout=120)
    assert _progress(worker)["done"] == 150
    assert _vectors(worker.state.db) == 150


def test_a_worker_started_during_a_reindex_without_one_waits_for_it() -> None:
    with open_database() as db:
        _rows(db, 2)
        lock = EmbeddingLock(db.path)
        assert lock.acquire()  # what `claude-mem reindex` holds while it embeds
    try:
        with running_worker() as worker:
            embedding = worker.state.embedding
            assert embedding is not None
            assert wait_until(lambda: embedding.health()["state"] == "locked", timeout=30)
            assert not embedding.loaded
            assert worker.client.get("/api/health").json()["embedding"]["state"] == "locked"
            lock.release()
            assert wait_until(lambda: embedding.status()["embedded"]["observation"] == 2, 60)
    finally:
        lock.release()


def test_reindex_routes_refuse_without_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    with running_worker() as worker:
        answer = worker.client.post("/api/embedding/reindex", json={})
        assert answer.status_code == 409
        assert "embeddings are off" in answer.json()["error"]
        assert worker.client.get("/api/embedding/reindex").status_code == 409
