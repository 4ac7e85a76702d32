"""The file-read gate with the project's git history: a real repository made with `git`, its
history imported, the real hook process asking a real worker."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from claude_mem.history.importer import import_history
from tests.git_repos import Repo, epoch
from tests.test_file_gate import BIG, index_ids, read_hook, remember
from tests.worker_fixtures import RunningWorker

RETRY_BODY = (
    "The gateway bans clients above it. We keep it at 3 on purpose; see the outage notes.\n\n"
    "Signed-off-by: Dev <dev@example.com>"
)


@pytest.fixture
def env(hook_env: dict[str, str]) -> dict[str, str]:
    return hook_env


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "ledger")


def change(repo: Repo, n: int, message: str, when: str, name: str = "src/post.py") -> str:
    """Commit version `n` of a big file."""
    return repo.commit({name: f"{BIG}# version {n}\n"}, message, date=epoch(when))


def imported(worker: RunningWorker, path: Path) -> None:
    assert worker.state.db is not None
    stats = import_history(worker.state.db, str(path))
    assert stats.commits > 0


def commit_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"- (last )?changed in ", line)]


def test_a_fresh_clone_gets_the_commits_that_explain_the_file(
    worker: RunningWorker, env: dict[str, str], repo: Repo
) -> None:
    first = change(repo, 1, "Add the batch poster", "2023-01-10T10:00:00+00:00")
    retry = change(
        repo, 2, f"Keep the retry count at 3\n\n{RETRY_BODY}", "2023-04-02T10:00:00+00:00"
    )
    bare = change(repo, 3, "Tidy the poster's imports", "2023-05-01T10:00:00+00:00")
    imported(worker, repo.path)
    path = repo.path / "src" / "post.py"  # checked out now: newer than every commit
    text = read_hook(env, repo.path, str(path))
    assert text is not None
    assert "git history of src/post.py" in text
    assert "earlier sessions' memory" not in text  # no session ever touched it
    lines = commit_lines(text)
    assert len(lines) == 3
    # Newest first; the newest commit of all says so; a reason follows its subject.
    assert lines[0].startswith(f"- last changed in {bare[:7]} (2023-05-01, #")
    assert lines[1].startswith(f"- changed in {retry[:7]} (2023-04-02, #")
    assert lines[1].endswith("Keep the retry count at 3 — The gateway bans clients above it.")
    assert lines[2].startswith(f"- changed in {first[:7]} (2023-01-10, #")
    assert index_ids(text) == []  # commits are not listed as session observations


def test_commits_with_a_reason_rank_above_bare_ones_and_at_most_three_show(
    worker: RunningWorker, env: dict[str, str], repo: Repo
) -> None:
    explained = [
        change(repo, n, f"Bound the batch size to {n}00\n\nThe ledger times out on bigger "
               f"batches, seen in incident {n}.", f"2023-0{n}-01T10:00:00+00:00")
        for n in range(1, 5)
    ]  # fmt: skip
    change(repo, 5, "Rename the poster's helpers", "2023-06-01T10:00:00+00:00")
    change(repo, 6, "Move the poster's constants up", "2023-07-01T10:00:00+00:00")
    imported(worker, repo.path)
    text = read_hook(env, repo.path, str(repo.path / "src" / "post.py"))
    assert text is not None
    lines = commit_lines(text)
    shas = [line.split(" in ", 1)[1][:7] for line in lines]
    assert shas == [sha[:7] for sha in reversed(explained[1:])]  # the 3 newest with a reason
    assert not any(line.startswith("- last changed") for line in lines)  # newest is bare
    assert lines[0].endswith("Bound the batch size to 400 — The ledger times out on bigger "
                             "batches, seen in incident 4.")  # fmt: skip


def test_the_mtime_rule_hides_old_sessions_but_never_the_commits(
    worker: RunningWorker, env: dict[str, str], repo: Repo
) -> None:
    retry = change(
        repo, 1, f"Keep the retry count at 3\n\n{RETRY_BODY}", "2023-04-02T10:00:00+00:00"
    )
    imported(worker, repo.path)
    path = repo.path / "src" / "post.py"
    session_at = 1_700_000_100_000
    obs = remember(worker, "s-old", session_at, modified=["src/post.py"],
                   title="Capped the retry backoff in src/post.py")  # fmt: skip
    os.utime(path, (session_at / 1000, session_at / 1000))  # not newer than the session's
    both = read_hook(env, repo.path, str(path), session="s-1")
    assert both is not None
    assert index_ids(both) == [obs]  # the session part lists the session's observation only
    assert "Capped the retry backoff" in both
    assert [line[18:25] for line in commit_lines(both)] == [retry[:7]]
    later = session_at + 60_000
    os.utime(path, (later / 1000, later / 1000))  # edited since the session's observation
    after = read_hook(env, repo.path, str(path), session="s-2")
    assert after is not None
    assert "earlier sessions' memory" not in after
    assert index_ids(after) == []
    assert len(commit_lines(after)) == 1


def test_a_worktree_finds_its_main_checkouts_history(
    worker: RunningWorker, env: dict[str, str], repo: Repo, tmp_path: Path
) -> None:
    retry = change(
        repo, 1, f"Keep the retry count at 3\n\n{RETRY_BODY}", "2023-04-02T10:00:00+00:00"
    )
    tree = tmp_path / "trees" / "fix-retries"
    repo.git("worktree", "add", "-q", "-b", "fix-retries", str(tree))
    imported(worker, tree)  # stored under the main checkout's project
    text = read_hook(env, tree, str(tree / "src" / "post.py"))
    assert text is not None
    assert [line[18:25] for line in commit_lines(text)] == [retry[:7]]
    elsewhere = repo.path / "src" / "other.py"
    elsewhere.write_text(BIG)
    assert read_hook(env, repo.path, str(elsewhere)) is None  # no commit touched it
