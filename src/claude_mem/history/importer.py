"""Bring a project's memory of its git history up to date: new commits only, in batches.

`claude-mem import --git` and the worker's background refresh both call `import_history`.
It lists HEAD's commits (`git rev-list`), drops those already read (`git_commits`), and reads
the rest newest first through one `git log`, writing a batch of `BATCH` commits per
transaction (the worker keeps capturing meanwhile): a killed import keeps what it wrote and the
next run reads only the rest; a `deadline` stops between batches the same way. A commit whose
change key was read before under another hash (a rebase, an amend) replaces that observation
instead of adding one. A worktree reads its main checkout's history, under the main project.
When HEAD's whole history is read it is recorded, so the next run with the same HEAD reads
nothing at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from claude_mem.history import draft, gitlog, rules
from claude_mem.project import resolve_project
from claude_mem.store import git_history, supersede
from claude_mem.store.db import Database
from claude_mem.store.observations import insert_observation

BATCH = 250
SKIPS = ("known", rules.MERGE, rules.BOT, rules.FORMAT, rules.TRIVIAL, rules.FOLDED)


class HistoryRefused(ValueError):
    """The path's project is excluded from memory: its history is not read either."""


@dataclass(frozen=True, slots=True)
class Repository:
    root: str  # the main checkout (a worktree's history is its main checkout's)
    project: str


@dataclass(slots=True)
class HistoryStats:
    source: str
    project: str
    commits: int = 0  # new observations
    rewritten: int = 0  # observations replaced by a rebased or amended commit
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SKIPS, 0))
    pending: int = 0  # commits left for a later run (a deadline passed)
    complete: bool = False  # HEAD's whole history is read
    seconds: float = 0.0

    @property
    def read(self) -> int:
        """Commits git read in this run."""
        return self.commits + self.rewritten + sum(self.skipped.values()) - self.skipped["known"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "project": self.project,
            "imported": {"commits": self.commits, "rewritten": self.rewritten},
            "skipped": dict(self.skipped),
            "pending": self.pending,
            "complete": self.complete,
            "seconds": round(self.seconds, 3),
        }


def locate(path: str, *, excluded: str = "") -> Repository:
    """The repository holding `path` and the project its history belongs to."""
    identity = resolve_project(gitlog.toplevel(path), excluded=excluded)
    if identity.excluded:
        raise HistoryRefused(f"{path}: the project is excluded ({identity.excluded_reason})")
    if identity.parent_root:
        return Repository(identity.parent_root, identity.all_projects[0])
    return Repository(identity.root or path, identity.name)


def import_history(
    db: Database,
    path: str,
    *,
    since: str | None = None,
    max_commits: int | None = None,
    deadline: float | None = None,
    excluded: str = "",
    progress: Callable[[int], None] = lambda n: None,
    on_total: Callable[[int], None] = lambda n: None,
) -> HistoryStats:
    """Read what memory lacks of `path`'s history; `deadline` is a `time.monotonic()` value."""
    started = time.monotonic()
    repo = locate(path, excluded=excluded)
    stats = HistoryStats(source=path, project=repo.project)
    head = gitlog.head(repo.root)
    whole = since is None and max_commits is None
    known_state = git_history.state(db.read(), repo.project)
    if head is None or (whole and known_state is not None and known_state["head"] == head):
        stats.complete = head is None or known_state is not None
        stats.seconds = time.monotonic() - started
        return stats
    listed = gitlog.revisions(repo.root, since=since, max_count=max_commits)
    known = git_history.known_shas(db.read(), repo.project)
    new = [sha for sha in listed if sha not in known]
    stats.skipped["known"] = len(listed) - len(new)
    del known
    on_total(len(new))
    with db.write() as conn:
        session_id = git_history.history_session(conn, repo.project, repo.root)
    done = 0
    commits = gitlog.read(repo.root, new)
    try:
        for batch in _batches(commits):
            with db.write() as conn:
                _store(conn, batch, session_id, repo.project, stats)
            done += len(batch)
            progress(len(batch))
            if deadline is not None and time.monotonic() > deadline and done < len(new):
                break
    finally:
        commits.close()
    stats.pending = len(new) - done
    stats.complete = whole and not stats.pending
    with db.write() as conn:
        previous = known_state["head"] if known_state else None
        git_history.save_state(conn, repo.project, repo.root, head if stats.complete else previous)
    stats.seconds = time.monotonic() - started
    return stats


def _batches(commits: Iterator[gitlog.Commit]) -> Iterator[list[gitlog.Commit]]:
    while batch := list(islice(commits, BATCH)):
        yield batch


def _store(
    conn: Any, batch: list[gitlog.Commit], session_id: int, project: str, stats: HistoryStats
) -> None:
    """One transaction: the batch's observations and its `git_commits` records."""
    keys = {commit.sha: draft.change_key(commit) for commit in batch}
    earlier = git_history.by_change(conn, project, keys.values())
    reads: list[git_history.ReadCommit] = []
    for commit in batch:
        key = keys[commit.sha]
        at = commit.authored_at * 1000
        reason = rules.skip_reason(commit)
        if reason is not None:
            target = None
            if reason == rules.FOLDED:
                target = git_history.observation_titled(
                    conn, session_id, rules.fold_target(commit) or ""
                )
            stats.skipped[reason] += 1
            reads.append(git_history.ReadCommit(commit.sha, key, at, target, reason))
            continue
        before = earlier.get(key)
        if before is not None and before.sha != commit.sha and before.observation_id is not None:
            git_history.drop_rewritten(conn, project, before)
            stats.rewritten += 1
        else:
            stats.commits += 1
        obs = draft.observation(commit, session_id=session_id, project=project)
        obs_id, created = insert_observation(conn, obs)
        if created and obs.type == "decision":
            supersede.settle_in_time(conn, obs_id)
        reads.append(git_history.ReadCommit(commit.sha, key, at, obs_id))
    git_history.remember(conn, project, reads)
