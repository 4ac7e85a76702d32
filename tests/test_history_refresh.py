"""The worker reads a project's new commits in the background when a session starts there."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_mem.store import Database
from claude_mem.worker import history_refresh
from tests.polling import wait_until
from tests.worker_fixtures import RunningWorker, running_worker


def _git(repo: Path, *args: str) -> None:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo),
           "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
           "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com",
           "PATH": "/usr/bin:/bin"}  # fmt: skip
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def _commit(repo: Path, name: str, text: str, message: str) -> None:
    (repo / name).write_text(text)
    _git(repo, "add", name)
    _git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "billing"
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    _commit(
        path,
        "retry.py",
        "RETRIES = 3\n",
        "Keep the retry count at 3\n\nThe gateway bans clients above it.",
    )
    _commit(path, "invoice.py", "def total():\n    return 1\n", "Add invoice totals")
    return path


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningWorker]:
    monkeypatch.setenv("CLAUDE_MEM_GIT_HISTORY", "true")
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    monkeypatch.setattr(history_refresh, "QUIET_S", 0.0)
    with running_worker() as running:
        yield running


def _titles(worker: RunningWorker) -> list[str]:
    db = worker.state.db
    assert db is not None
    rows = db.read().execute("SELECT title FROM observations WHERE source = 'git' ORDER BY id")
    return [str(row[0]) for row in rows]


def _start(worker: RunningWorker, host: str, cwd: Path) -> None:
    body = {"host_session_id": host, "cwd": str(cwd), "prompt": "how do retries work?"}
    worker.client.post("/api/sessions/init", json=body).raise_for_status()


def _runs(worker: RunningWorker) -> int:
    history = worker.state.history
    assert history is not None
    return history.runs


def test_a_session_start_reads_the_projects_history(worker: RunningWorker, repo: Path) -> None:
    _start(worker, "s1", repo / "")
    assert wait_until(lambda: len(_titles(worker)) == 2)
    assert set(_titles(worker)) == {"Keep the retry count at 3", "Add invoice totals"}


def test_the_next_session_reads_only_new_commits(
    worker: RunningWorker, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history_refresh, "AGAIN_S", 0.0)
    _start(worker, "s1", repo)
    assert wait_until(lambda: _runs(worker) == 1)
    _commit(
        repo,
        "retry.py",
        "RETRIES = 4\n",
        "Raise the retry count to 4\n\nThe gateway allows it now.",
    )
    _start(worker, "s2", repo)
    assert wait_until(lambda: _runs(worker) == 2)
    titles = _titles(worker)
    assert len(titles) == 3
    assert titles[-1] == "Raise the retry count to 4"


def test_a_project_read_moments_ago_is_not_read_again(worker: RunningWorker, repo: Path) -> None:
    _start(worker, "s1", repo)
    assert wait_until(lambda: _runs(worker) == 1)
    _commit(repo, "notes.md", "# Notes\n", "Write down the release checklist")
    _start(worker, "s2", repo)
    worker.client.get("/api/context/session-start", params={"cwd": str(repo)}).raise_for_status()
    assert not wait_until(lambda: _runs(worker) > 1, timeout=0.5)
    assert len(_titles(worker)) == 2


def test_session_start_context_asks_too(worker: RunningWorker, repo: Path) -> None:
    worker.client.get("/api/context/session-start", params={"cwd": str(repo)}).raise_for_status()
    assert wait_until(lambda: len(_titles(worker)) == 2)


def test_a_worktree_reads_its_main_checkouts_history(worker: RunningWorker, repo: Path) -> None:
    tree = repo.parent / "billing-wt"
    _git(repo, "worktree", "add", "-q", "-b", "side", str(tree))
    _start(worker, "s1", tree)
    assert wait_until(lambda: len(_titles(worker)) == 2)
    db = worker.state.db
    assert db is not None
    projects = {str(r[0]) for r in db.read().execute(
        "SELECT DISTINCT project FROM observations WHERE source = 'git'")}  # fmt: skip
    assert projects == {"billing"}


@pytest.mark.parametrize(
    ("key", "value"),
    [("CLAUDE_MEM_GIT_HISTORY", "false"), ("CLAUDE_MEM_MODE", "recall-only"),
     ("CLAUDE_MEM_EXCLUDED_PROJECTS", "**/billing")],
)  # fmt: skip
def test_switched_off_or_excluded_reads_nothing(
    key: str, value: str, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_GIT_HISTORY", "true")
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    monkeypatch.setenv(key, value)
    with running_worker() as worker:
        worker.client.get("/api/context/session-start", params={"cwd": str(repo)})
        _start(worker, "s1", repo)
        assert not wait_until(lambda: _runs(worker) > 0, timeout=0.5)
    with Database() as db:
        count = db.read().execute("SELECT count(*) FROM observations WHERE source = 'git'")
        assert count.fetchone()[0] == 0


def test_a_folder_that_is_no_checkout_is_left_alone(worker: RunningWorker, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    _start(worker, "s1", plain)
    assert wait_until(lambda: _runs(worker) == 1)
    assert _titles(worker) == []


def test_a_long_history_is_read_over_several_runs(
    worker: RunningWorker, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_mem.history import importer

    monkeypatch.setattr(history_refresh, "RUN_S", 0.0)  # every run stops after one batch
    monkeypatch.setattr(importer, "BATCH", 1)
    _start(worker, "s1", repo)
    assert wait_until(lambda: len(_titles(worker)) == 2)
    assert wait_until(lambda: _runs(worker) >= 2)
