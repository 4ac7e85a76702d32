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

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from claude_mem.history import draft, gitlog, rules
from claude_mem.project import resolve_project
from claude_mem.store import git_history, supersede
from claude_mem.store.db import Database
from claude_mem.store.observations import insert_observation

BATCH = 250
AHEAD = 2  # batches read ahead of the one being stored
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
    empty: bool = False  # the repository has no commit yet
    kept: int = 0  # the project's commits in memory after this run (new and earlier ones)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "project": self.project,
            "imported": {"commits": self.commits, "rewritten": self.rewritten},
            "skipped": dict(self.skipped),
            "pending": self.pending,
            "complete": self.complete,
            "kept": self.kept,
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
    stop: Callable[[], bool] = lambda: False,
    excluded: str = "",
    progress: Callable[[int], None] = lambda n: None,
    on_total: Callable[[int], None] = lambda n: None,
    batch: int | None = None,
) -> HistoryStats:
    """Read what memory lacks of `path`'s history, `batch` commits (default BATCH) per
    transaction. Between batches it stops when `deadline` (a `time.monotonic()` value) has
    passed or `stop()` says so; the rest waits for a later run."""
    started = time.monotonic()
    repo = locate(path, excluded=excluded)
    stats = HistoryStats(source=path, project=repo.project)
    head = gitlog.head(repo.root)
    whole = since is None and max_commits is None
    known_state = git_history.state(db.read(), repo.project)
    if head is None or (whole and known_state is not None and known_state["head"] == head):
        stats.empty, stats.complete = head is None, True  # nothing to read, or all read
        stats.kept = known_state["commits"] if known_state else 0
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
    run = _Run(repo, session_id, stats, set(listed) if whole else None)
    done = 0
    batches = _read_ahead(gitlog.read(repo.root, new), batch or BATCH)
    try:
        for commits in batches:
            with db.write() as conn:
                run.store(conn, commits)
            done += len(commits)
            progress(len(commits))
            late = deadline is not None and time.monotonic() > deadline
            if (late or stop()) and done < len(new):
                break
    finally:
        batches.close()
    stats.pending = len(new) - done
    stats.complete = whole and not stats.pending
    with db.write() as conn:
        previous = known_state["head"] if known_state else None
        git_history.save_state(conn, repo.project, repo.root, head if stats.complete else previous)
        saved = git_history.state(conn, repo.project)
    stats.kept = saved["commits"] if saved else 0
    stats.seconds = time.monotonic() - started
    return stats


def _read_ahead(commits: Generator[gitlog.Commit], size: int) -> Generator[list[gitlog.Commit]]:
    """Batches of `size` commits, read and parsed by a thread up to `AHEAD` batches ahead while the
    caller stores the previous ones: git's work and the store's overlap instead of taking
    turns. Closing this generator stops the thread, and git with it."""
    ready: queue.Queue[list[gitlog.Commit] | BaseException | None] = queue.Queue(AHEAD)
    stopping = threading.Event()

    def hand(item: list[gitlog.Commit] | BaseException | None) -> bool:
        while not stopping.is_set():
            with contextlib.suppress(queue.Full):
                ready.put(item, timeout=0.1)
                return True
        return False

    def read() -> None:
        try:
            while batch := list(islice(commits, size)):
                if not hand(batch):
                    return
            hand(None)
        except BaseException as exc:  # git failed: the caller raises it
            hand(exc)
        finally:
            commits.close()

    reader = threading.Thread(target=read, name="claude-mem-git-log", daemon=True)
    reader.start()
    try:
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stopping.set()
        reader.join()


@dataclass(slots=True)
class _Run:
    """One import's state across its batches."""

    repo: Repository
    session_id: int
    stats: HistoryStats
    reachable: set[str] | None  # HEAD's whole history, listed when first needed
    waiting: dict[str, list[str]] = field(default_factory=dict)  # fixups, by target subject

    def store(self, conn: Any, batch: list[gitlog.Commit]) -> None:
        """One transaction: the batch's observations and its `git_commits` records."""
        project, stats = self.repo.project, self.stats
        keys = {commit.sha: draft.change_key(commit) for commit in batch}
        earlier = git_history.by_change(conn, project, keys.values())
        settle = git_history.has_session_decisions(conn, project)  # none: nothing to settle
        reads: list[git_history.ReadCommit] = []
        for commit in batch:
            key, at = keys[commit.sha], commit.authored_at * 1000
            replaced = [old for old in earlier.get(key, ()) if self._rewritten(old.sha)]
            reason = rules.skip_reason(commit)
            if reason is not None:
                stats.skipped[reason] += 1
                target = self._fold(conn, commit) if reason == rules.FOLDED else None
                for old in replaced:  # reworded into a commit that is no memory
                    git_history.drop_rewritten(conn, project, old, None)
                reads.append(git_history.ReadCommit(commit.sha, key, at, target, reason))
                continue
            obs = draft.observation(commit, session_id=self.session_id, project=project)
            obs_id, created = insert_observation(conn, obs)
            for old in replaced:
                git_history.drop_rewritten(conn, project, old, obs_id)
            if replaced:
                stats.rewritten += 1
            else:
                stats.commits += 1
            if settle and created and obs.type == "decision":
                supersede.settle_in_time(conn, obs_id)
            reads.append(git_history.ReadCommit(commit.sha, key, at, obs_id))
        git_history.remember(conn, project, reads)
        self._settle_folds(conn)

    def _rewritten(self, sha: str) -> bool:
        """An earlier commit with the same change key is rewritten when HEAD lost it."""
        if self.reachable is None:
            self.reachable = set(gitlog.revisions(self.repo.root))
        return sha not in self.reachable

    def _fold(self, conn: Any, commit: gitlog.Commit) -> int | None:
        """The observation a fixup folds into; None (and waiting) while it is not read yet
        (history is read newest first, the target is older)."""
        subject = rules.fold_target(commit) or ""
        target = git_history.observation_titled(conn, self.session_id, subject)
        if target is None:
            self.waiting.setdefault(subject, []).append(commit.sha)
        return target

    def _settle_folds(self, conn: Any) -> None:
        for subject in list(self.waiting):
            target = git_history.observation_titled(conn, self.session_id, subject)
            if target is not None:
                git_history.fold(conn, self.repo.project, self.waiting.pop(subject), target)
