"""Reading a history again: nothing doubles, a rebase or an amend replaces, a stopped import
resumes, `--since`/`--max` bound what is read, and a HEAD read in full is not read again."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from claude_mem.history import gitlog, importer
from claude_mem.history.importer import import_history
from claude_mem.store import Database
from claude_mem.store.forget import forget_project
from tests.git_repos import Repo
from tests.test_history_commits import by_sha


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = Repo(tmp_path / "shop")
    for n in range(5):
        made.commit({f"m{n}.py": f"x = {n}\n"}, f"Add module {n}\n\nModule {n} holds rule {n}.")
    return made


def observations(db: Database) -> list[tuple[str, str]]:
    rows = db.read().execute("SELECT title, narrative FROM observations ORDER BY created_at")
    return [(row[0], row[1]) for row in rows]


def test_running_again_adds_nothing(db: Database, repo: Repo) -> None:
    first = import_history(db, str(repo.path))
    again = import_history(db, str(repo.path))
    assert (first.commits, first.complete) == (5, True)
    assert (again.commits, again.rewritten, again.complete) == (0, 0, True)
    assert sum(again.skipped.values()) == 0  # nothing read at all: HEAD's history is known
    assert len(observations(db)) == 5
    repo.commit({"new.py": "n = 1\n"}, "Add the new module\n\nIt is new.")
    third = import_history(db, str(repo.path))
    assert (third.commits, third.skipped["known"]) == (1, 5)
    assert len(observations(db)) == 6


def test_an_amended_commit_replaces_its_observation(db: Database, repo: Repo) -> None:
    old = repo.git("rev-parse", "HEAD")
    import_history(db, str(repo.path))
    repo.git("commit", "-q", "--amend", "-m", "Add module four\n\nModule 4 holds the tax rule.")
    new = repo.git("rev-parse", "HEAD")
    stats = import_history(db, str(repo.path))
    rows = by_sha(db)
    assert (stats.commits, stats.rewritten) == (0, 1)
    assert len(observations(db)) == 5
    assert ("Add module four", "Module 4 holds the tax rule.") in observations(db)
    assert ("Add module 4", "Module 4 holds rule 4.") not in observations(db)
    assert rows[new]["title"] == "Add module four"
    assert rows[old]["skipped"] == "rewritten"
    assert rows[old]["observation_id"] is None


def test_a_rebase_does_not_double_even_twice(db: Database, repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "topic", "HEAD~2")
    repo.commit({"topic.py": "t = 1\n"}, "Add the topic\n\nThe topic explains itself.")
    repo.git("checkout", "-q", "main")
    repo.commit({"main.py": "m = 1\n"}, "Add main work\n\nMain moves on.")
    import_history(db, str(repo.path))
    assert len(observations(db)) == 6
    replayed = repo.git("rev-list", "HEAD~3..HEAD").split()  # modules 3 and 4, main work

    repo.git("rebase", "-q", "topic")
    first = import_history(db, str(repo.path))
    assert (first.commits, first.rewritten) == (1, 3)  # the topic is new, three replayed
    assert len(observations(db)) == 7
    rows = by_sha(db)
    assert all(rows[sha]["skipped"] == "rewritten" for sha in replayed)
    assert all(rows[sha]["observation_id"] for sha in repo.git("rev-list", "HEAD").split())

    # Reword the topic and rebase again: commits rewritten once are rewritten again.
    repo.git("checkout", "-q", "topic")
    repo.git("commit", "-q", "--amend", "-m", "Add the topic, reworded\n\nReworded.")
    repo.git("checkout", "-q", "main")
    repo.git("rebase", "-q", "topic")
    second = import_history(db, str(repo.path))
    assert (second.commits, second.rewritten) == (0, 4)
    assert len(observations(db)) == 7
    titles = [title for title, _ in observations(db)]
    assert "Add the topic, reworded" in titles
    assert "Add the topic" not in titles
    assert len(by_sha(db)) == 6 + 4 + 4  # every hash read stays known


def test_a_cherry_pick_that_keeps_its_original_is_not_a_rewrite(db: Database, repo: Repo) -> None:
    """Same author, same time, same subject, both still in history: two commits."""
    repo.git("checkout", "-q", "-b", "topic")
    picked = repo.commit({"fix.py": "f = 1\n"}, "Fix the rounding\n\nRound half to even.")
    repo.git("checkout", "-q", "main")
    import_history(db, str(repo.path))  # main only: five commits
    repo.clock += 60
    repo.git("cherry-pick", picked)
    repo.clock += 60
    repo.git("merge", "-q", "--no-ff", "-m", "Merge topic", "topic")
    stats = import_history(db, str(repo.path))
    assert (stats.commits, stats.rewritten) == (2, 0)
    assert len(observations(db)) == 7


def test_since_a_revision_a_date_and_max(db: Database, repo: Repo) -> None:
    shas = repo.git("rev-list", "--reverse", "HEAD").split()
    by_rev = import_history(db, str(repo.path), since=shas[2])
    assert by_rev.commits == 2
    assert not by_rev.complete
    assert set(by_sha(db)) == set(shas[3:])
    by_date = import_history(db, str(repo.path), since=f"@{repo.clock - 150}")  # the last 3
    assert (by_date.commits, by_date.skipped["known"]) == (1, 2)
    newest = import_history(db, str(repo.path), max_commits=4)
    assert (newest.commits, newest.skipped["known"]) == (1, 3)
    assert len(by_sha(db)) == 4
    rest = import_history(db, str(repo.path))
    assert (rest.commits, rest.complete) == (1, True)


def test_a_deadline_stops_between_batches_and_the_next_run_reads_the_rest(
    db: Database, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importer, "BATCH", 2)
    stopped = import_history(db, str(repo.path), deadline=time.monotonic() - 1)
    assert (stopped.commits, stopped.pending, stopped.complete) == (2, 3, False)
    assert stopped.as_dict()["pending"] == 3
    assert stopped.as_dict()["complete"] is False
    first = set(by_sha(db))
    read: list[str] = []
    real = gitlog.read

    def counted(root: str | Path, shas: Iterable[str]) -> Iterator[gitlog.Commit]:
        wanted = list(shas)
        read.extend(wanted)
        return real(root, wanted)

    monkeypatch.setattr(gitlog, "read", counted)
    rest = import_history(db, str(repo.path))
    assert (rest.commits, rest.skipped["known"], rest.pending, rest.complete) == (3, 2, 0, True)
    assert len(read) == 3
    assert not set(read) & first
    assert len(observations(db)) == 5


def test_a_head_read_in_full_is_not_read_again(
    db: Database, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_history(db, str(repo.path))
    calls: list[tuple[str, ...]] = []
    real = gitlog.git

    def counted(root: str | Path, *args: str, stdin: bytes | None = None) -> bytes:
        calls.append(args)
        return real(root, *args, stdin=stdin)

    monkeypatch.setattr(gitlog, "git", counted)
    monkeypatch.setattr(gitlog, "read", lambda *a: pytest.fail("git log ran"))
    again = import_history(db, str(repo.path))
    assert again.complete
    assert (again.commits, again.rewritten, sum(again.skipped.values())) == (0, 0, 0)
    assert not [args for args in calls if args[0] in ("log", "rev-list")]


def test_forgetting_the_project_then_importing_brings_it_back(db: Database, repo: Repo) -> None:
    import_history(db, str(repo.path))
    with db.write() as conn:
        forget_project(conn, "shop")
    assert observations(db) == []
    assert by_sha(db) == {}
    back = import_history(db, str(repo.path))
    assert (back.commits, back.complete) == (5, True)
    assert len(observations(db)) == 5
