"""The worker keeps each project's git history current, in the background.

When a session starts in a project (its first prompt, or the session-start context), the
project's checkout is queued; one thread reads its new commits (`history.importer`), at most
`RUN_S` per run, then lets others go first, and comes back to a long history until it is read.
Never on the hook path: asking only queues. A project is looked at again at most every
`AGAIN_S`; nothing happens when `CLAUDE_MEM_GIT_HISTORY` is false or in recall-only mode, for
an excluded project or a folder that is no checkout. The thread runs at a low priority (so
does git, which it starts) and waits for a calm moment between hooks, as the embedder does; a
burst of hooks ends a run after the batch in hand (the rest comes in the next run).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import deque
from collections.abc import Callable

from claude_mem import log
from claude_mem.project import ProjectIdentity
from claude_mem.settings import Settings
from claude_mem.store import Database

RUN_S = 10.0  # one run's share of time; a longer history goes on in the next run
BATCH = 50  # commits per transaction: a hook's ingest waits for the writer at most this long
AGAIN_S = 300.0  # a project read less than this ago is not read again on a session start
QUIET_S = 0.5  # hooks' calm needed before a run starts
NICE = 10


class HistoryRefresh:
    """One background thread reading new commits of the projects sessions start in."""

    def __init__(
        self,
        db: Database,
        settings: Callable[[], Settings],
        *,
        on_stored: Callable[[], None] = lambda: None,
        since_last_event: Callable[[], float] = lambda: float("inf"),
    ) -> None:
        self.db = db
        self._settings = settings
        self._on_stored = on_stored
        self._since_last_event = since_last_event
        self._queue: deque[str] = deque()  # checkouts to read, in turn
        self._queued: set[str] = set()
        self._last_run: dict[str, float] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.runs = 0  # runs finished (status, tests)

    def asked(self, identity: ProjectIdentity) -> None:
        """A session started in `identity`: queue its checkout unless recently read."""
        if identity.excluded or not identity.root:
            return
        settings = self._settings()
        if settings.get_str("CLAUDE_MEM_MODE") == "recall-only" or not settings.get_bool(
            "CLAUDE_MEM_GIT_HISTORY"
        ):
            return  # recall-only captures nothing, history included
        root = identity.parent_root or identity.root
        with self._lock:
            last = self._last_run.get(root)
            if root in self._queued or (last is not None and time.monotonic() - last < AGAIN_S):
                return
            self._queued.add(root)
            self._queue.append(root)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="claude-mem-history", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the batch in hand (a run's batches are short)."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        while not self._stopping.is_set():
            root = self._next()
            if root is None:
                self._wake.wait()
                self._wake.clear()
                continue
            while self._busy() and not self._stopping.is_set():
                self._stopping.wait(QUIET_S / 5)
            if not self._stopping.is_set():
                self._read(root)

    def _busy(self) -> bool:
        return self._since_last_event() < QUIET_S

    def _next(self) -> str | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None

    def _read(self, root: str) -> None:
        from claude_mem.history.importer import import_history  # noqa: PLC0415 - when used

        settings = self._settings()
        pending = False
        try:
            stats = import_history(
                self.db,
                root,
                deadline=time.monotonic() + RUN_S,
                excluded=settings.get_str("CLAUDE_MEM_EXCLUDED_PROJECTS"),
                progress=lambda n: self._on_stored(),
                stop=lambda: self._stopping.is_set() or self._busy(),  # hooks come first
                batch=BATCH,
            )
        except Exception as exc:  # no checkout, git missing, a locked store: try at the next start
            log.info("history", "history not read", root=root, error=str(exc))
        else:
            pending = stats.pending > 0 and not self._stopping.is_set()
            if stats.commits or stats.rewritten:
                log.info("history", "history read", project=stats.project, commits=stats.commits,
                         rewritten=stats.rewritten, pending=stats.pending)  # fmt: skip
        with self._lock:
            self.runs += 1
            self._last_run[root] = time.monotonic()
            if pending:
                self._queue.append(root)  # after the others: a long history goes on next
            else:
                self._queued.discard(root)
