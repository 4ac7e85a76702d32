"""Connections: WAL, a busy timeout, foreign keys; one serialized writer and per-thread readers.

SQLite allows one writer at a time; funnelling every write through one connection and a lock
turns "database is locked" errors into short waits, while WAL lets readers go on meanwhile.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from claude_mem import paths
from claude_mem.settings import Settings
from claude_mem.settings import load as load_settings
from claude_mem.store.migrations import MIGRATIONS, SchemaError, applied, migrate, pending

__all__ = [
    "BUSY_TIMEOUT_MS",
    "NON_BLOCKING",
    "Database",
    "SchemaError",
    "WouldBlock",
    "connect",
    "open_database",
]

BUSY_TIMEOUT_MS = 5000

# Set while code runs on the worker's event loop: anything that would wait (the writer lock,
# another process's SQLite lock, a slow lookup) raises WouldBlock instead, and the caller
# redoes the work on a thread. Nothing is written before the one write transaction, so a
# retry repeats only pure work.
NON_BLOCKING: ContextVar[bool] = ContextVar("claude_mem_non_blocking", default=False)


class WouldBlock(Exception):
    """Raised under NON_BLOCKING instead of waiting."""


def connect(path: Path | str, *, readonly: bool = False) -> sqlite3.Connection:
    """Open `path` in autocommit mode with this project's pragmas."""
    conn = sqlite3.connect(
        path,
        isolation_level=None,
        check_same_thread=False,
        timeout=BUSY_TIMEOUT_MS / 1000,
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if readonly:
        conn.execute("PRAGMA query_only = ON")
    else:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA journal_size_limit = 4194304")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA temp_store = MEMORY")
    return conn


def fts5_available() -> bool:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE probe USING fts5 (x)")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


class Database:
    """The memory database: migrated on open, privacy settings carried to every write."""

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        redact_secrets: bool = True,
        migrate_schema: bool = True,
    ) -> None:
        self.path = Path(path) if path is not None else paths.db_path()
        self.redact_secrets = redact_secrets
        paths.ensure_dir(self.path.parent)
        paths.touch_private_file(self.path)
        self._lock = threading.RLock()  # the writer
        self._readers_lock = threading.Lock()  # never held across I/O, so readers never wait
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._writer = connect(self.path)
        self.migrated: list[str] = []
        if migrate_schema:
            with self._lock:
                self.migrated = migrate(self._writer, backup=self._backup_before_migration)

    def _backup_before_migration(self, conn: sqlite3.Connection) -> Path:
        done = applied(conn)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        label = done[-1] if done else "unversioned"
        target = paths.ensure_dir(paths.backups_dir()) / f"pre-migration-{label}-{stamp}.db"
        return self.backup(target, conn)

    def backup(self, target: Path, source: sqlite3.Connection | None = None) -> Path:
        """A consistent copy through SQLite's online backup API (WAL contents included)."""
        paths.touch_private_file(target)
        dest = sqlite3.connect(target)
        try:
            with self._lock:
                (source or self._writer).backup(dest)
        finally:
            dest.close()
        return target

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE … COMMIT), serialized across threads.
        Under NON_BLOCKING it raises WouldBlock rather than wait for the lock."""
        non_blocking = NON_BLOCKING.get()
        if not self._lock.acquire(blocking=not non_blocking):
            raise WouldBlock("the writer is busy")
        try:
            conn = self._writer
            if conn.in_transaction:  # nested use joins the outer transaction
                yield conn
                return
            self._begin(conn, non_blocking)
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            self._lock.release()

    @staticmethod
    def _begin(conn: sqlite3.Connection, non_blocking: bool) -> None:
        """BEGIN IMMEDIATE; without waiting on another process's lock when non-blocking (once
        it succeeds, COMMIT in WAL mode never waits)."""
        if not non_blocking:
            conn.execute("BEGIN IMMEDIATE")
            return
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise WouldBlock(str(exc)) from None
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def read(self) -> sqlite3.Connection:
        """This thread's read-only connection; WAL lets it read while a write is in progress."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path, readonly=True)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def schema_state(self) -> tuple[list[str], list[str]]:
        """(applied, pending) migration names."""
        with self._lock:
            return applied(self._writer), pending(self._writer, MIGRATIONS)

    def checkpoint(self) -> None:
        """Fold the WAL back into the main file (on shutdown, before backups)."""
        with self._lock:
            self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()
        with self._lock:
            self._writer.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_database(settings: Settings | None = None) -> Database:
    """The user's database, with their privacy settings."""
    settings = settings or load_settings()
    return Database(redact_secrets=settings.get_bool("CLAUDE_MEM_REDACT_SECRETS"))
