"""The worker reads a project's new commits in the background when a session starts there."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_mem.store import Database
from claude_mem.worker import history_refresh
from tests.git_repos import Repo
from tests.polling import wait_until
from tests.worker_fixtures import RunningWorker, running_worker


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = Repo(tmp_path / "billing")
    made.commit({"retry.py": "RETRIES = 3\n"},
                "Keep the retry count at 3\n\nThe gateway bans clients above it.")  # fmt: skip
    made.commit({"invoice.py": "def total():\n    return 1\n"}, "Add invoice totals")
    return made


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


def test_a_session_start_reads_the_projects_history(worker: RunningWorker, repo: Repo) -> None:
    _start(worker, "s1", repo.path / "")
    assert wait_until(lambda: len(_titles(worker)) == 2)
    assert set(_titles(worker)) == {"Keep the retry count at 3", "Add invoice totals"}


def test_the_next_session_reads_only_new_commits(
    worker: RunningWorker, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history_refresh, "AGAIN_S", 0.0)
    _start(worker, "s1", repo.path)
    assert wait_until(lambda: _runs(worker) == 1)
    repo.commit({"retry.py": "RETRIES = 4\n"}, "Raise the retry count to 4\n\nIt allows it now.")
    _start(worker, "s2", repo.path)
    assert wait_until(lambda: _runs(worker) == 2)
    titles = _titles(worker)
    assert len(titles) == 3
    assert titles[-1] == "Raise the retry count to 4"


def test_a_project_read_moments_ago_is_not_read_again(worker: RunningWorker, repo: Repo) -> None:
    _start(worker, "s1", repo.path)
    assert wait_until(lambda: _runs(worker) == 1)
    repo.commit({"notes.md": "# Notes\n"}, "Write down the release checklist")
    _start(worker, "s2", repo.path)
    worker.client.get(
        "/api/context/session-start", params={"cwd": str(repo.path)}
    ).raise_for_status()
    assert not wait_until(lambda: _runs(worker) > 1, timeout=0.5)
    assert len(_titles(worker)) == 2


def test_session_start_context_asks_too(worker: RunningWorker, repo: Repo) -> None:
    worker.client.get(
        "/api/context/session-start", params={"cwd": str(repo.path)}
    ).raise_for_status()
    assert wait_until(lambda: len(_titles(worker)) == 2)


def test_a_worktree_reads_its_main_checkouts_history(worker: RunningWorker, repo: Repo) -> None:
    tree = repo.path.parent / "billing-wt"
    repo.git("worktree", "add", "-q", "-b", "side", str(tree))
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
    key: str, value: str, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_GIT_HISTORY", "true")
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    monkeypatch.setenv(key, value)
    with running_worker() as worker:
        worker.client.get("/api/context/session-start", params={"cwd": str(repo.path)})
        _start(worker, "s1", repo.path)
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
    worker: RunningWorker, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.setattr(history_refresh, "RUN_S", 0.0)  # every run stops after one batch
    monkeypatch.setattr(history_refresh, "BATCH", 1)
    _start(worker, "s1", repo.path)
    assert wait_until(lambda: len(_titles(worker)) == 2)
    assert wait_until(lambda: _runs(worker) >= 2)


def test_a_burst_of_hooks_ends_a_run_after_the_batch_in_hand(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_mem import settings
    from claude_mem.project import resolve_project

    monkeypatch.setenv("CLAUDE_MEM_GIT_HISTORY", "true")
    monkeypatch.setattr(history_refresh, "BATCH", 1)
    calm = threading.Event()  # hooks are busy until the test says otherwise
    stored: list[int] = []
    with Database() as db:
        refresh = history_refresh.HistoryRefresh(
            db, settings.load, on_stored=lambda: stored.append(1),
            since_last_event=lambda: float("inf") if calm.is_set() or not stored else 0.0,
        )  # fmt: skip
        refresh.asked(resolve_project(str(repo.path)))
        assert wait_until(lambda: refresh.runs == 1)
        assert len(stored) == 1  # one batch, then the hooks' burst ended the run
        calm.set()
        assert wait_until(lambda: len(stored) == 2 and refresh.runs == 2)
        refresh.stop()
        rows = db.read().execute("SELECT count(*) FROM observations WHERE source = 'git'")
        assert rows.fetchone()[0] == 2
