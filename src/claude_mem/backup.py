"""Backups of the memory database: on demand, daily by the worker, and restoring one.

Every copy goes through SQLite's online backup API (`Database.backup`), so it is consistent
even while the worker writes, WAL contents included. Files in `backups/`:
`manual-<time>.db` (`claude-mem backup`), `daily-<time>.db` (the worker, at most one a day,
the newest `CLAUDE_MEM_BACKUP_RETENTION` kept), `pre-migration-…` (before any schema change,
see store/db.py) and `pre-restore-<time>.db` (the database a restore replaced).

A restore holds the worker's single-instance lock for its whole duration: it refuses while a
worker runs, and no worker can start half-way through it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from claude_mem import log, paths
from claude_mem.settings import Settings
from claude_mem.store import stats
from claude_mem.store.db import Database, connect
from claude_mem.store.migrations import SchemaError, pending

DAILY_PREFIX = "daily-"
DAY_S = 86_400
CHECK_EVERY_S = 3600.0  # how often the worker asks whether a daily backup is due
FIRST_CHECK_S = 60.0  # after the worker starts: let the start itself finish first


class BackupError(RuntimeError):
    """A backup or restore that cannot be done; the message says why and what to do."""


def _stamp(now: float | None = None) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now if now is not None else time.time()))


def _copy(db: Database, target: Path) -> None:
    """`db` copied to `target` as a self-contained file (rollback journal, not WAL), so the
    copy can be read, even read-only, without side files appearing next to it."""
    db.backup(target)
    conn = sqlite3.connect(target)
    try:
        conn.execute("PRAGMA journal_mode = DELETE")
    finally:
        conn.close()


def _check(path: Path) -> dict[str, int]:
    """Row counts of a database file, after proving it is intact and one of ours."""
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BackupError(f"{path}: cannot open ({exc})") from None
    try:
        if conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            raise BackupError(f"{path}: the database is damaged (integrity check failed)")
        pending(conn)  # SchemaError if a newer claude-mem-py wrote it
        return stats.table_counts(conn, stats.MEMORY_TABLES)
    except SchemaError as exc:
        raise BackupError(f"{path}: {exc}") from None
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path}: not a claude-mem-py database ({exc})") from None
    finally:
        conn.close()


@dataclass(frozen=True, slots=True)
class BackupResult:
    path: Path
    bytes: int
    counts: dict[str, int]


def backup(db: Database, target: Path | None = None) -> BackupResult:
    """Copy the database to `target` (a file, or a folder to put one in; default backups/)."""
    if target is None:
        target = paths.ensure_dir(paths.backups_dir()) / f"manual-{_stamp()}.db"
    elif target.is_dir():
        target = target / f"claude-mem-{_stamp()}.db"
    if target.exists():
        raise BackupError(f"{target} already exists; choose another path")
    if target.absolute() == db.path.absolute():
        raise BackupError("the backup cannot replace the database itself")
    _copy(db, target)
    return BackupResult(target, target.stat().st_size, _check(target))


def daily_backups() -> list[Path]:
    """The worker's daily backups, oldest first (names sort by time)."""
    folder = paths.backups_dir()
    if not folder.is_dir():
        return []
    return sorted(folder.glob(f"{DAILY_PREFIX}*.db"))


def daily(db: Database, retention: int, *, now: float | None = None) -> Path | None:
    """Make today's backup if the newest is a day old or missing, then keep the newest
    `retention`; None when nothing was due (or retention is 0: daily backups are off)."""
    if retention <= 0:
        return None
    now = time.time() if now is None else now
    existing = daily_backups()
    if existing and now - existing[-1].stat().st_mtime < DAY_S:
        return None
    target = paths.ensure_dir(paths.backups_dir()) / f"{DAILY_PREFIX}{_stamp(now)}.db"
    _copy(db, target)
    for old in daily_backups()[:-retention]:
        old.unlink(missing_ok=True)
    return target


async def run_daily(
    database: Callable[[], Database | None], settings: Callable[[], Settings]
) -> None:
    """The worker's task: check every hour whether a daily backup is due (ends with the store)."""
    await asyncio.sleep(FIRST_CHECK_S)
    while (db := database()) is not None:
        retention = settings().get_int("CLAUDE_MEM_BACKUP_RETENTION")
        try:
            made = await asyncio.to_thread(daily, db, retention)
        except (OSError, sqlite3.Error) as exc:  # a full disk must not stop the worker
            log.error("backup", "daily backup failed", error=str(exc))
        else:
            if made is not None:
                log.info("backup", "daily backup written", path=str(made), keep=retention)
        await asyncio.sleep(CHECK_EVERY_S)


def restore(source: Path, *, redact_secrets: bool = True) -> tuple[Path | None, dict[str, int]]:
    """Replace the database with the backup at `source`; returns (safety copy of the old
    one or None if there was none, counts now in the database)."""
    from claude_mem.worker import lifecycle  # noqa: PLC0415 - only restore needs it

    source = source.expanduser()
    if not source.is_file():
        raise BackupError(f"{source}: no such file")
    counts = _check(source)
    lock = lifecycle.acquire_instance_lock()
    if lock is None:
        raise BackupError("the worker is running; stop it (`claude-mem worker stop`) and retry")
    try:
        target = paths.db_path()
        if source.absolute() == target.absolute():
            raise BackupError("that is the database itself")
        safety = None
        if target.exists() and target.stat().st_size > 0:
            safety = paths.ensure_dir(paths.backups_dir()) / f"pre-restore-{_stamp()}.db"
            if not _keep(target, safety):  # damaged: start the file afresh
                for suffix in ("", "-wal", "-shm"):
                    target.with_name(target.name + suffix).unlink(missing_ok=True)
        src = sqlite3.connect(f"{source.absolute().as_uri()}?mode=ro", uri=True)
        dest = connect(_new_file(target))
        try:
            src.backup(dest)
            dest.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            src.close()
            dest.close()
        with Database(target, redact_secrets=redact_secrets):
            pass  # an older backup is migrated now (with its own pre-migration copy)
        log.info("backup", "database restored", source=str(source), safety=str(safety))
        return safety, counts
    finally:
        os.close(lock)


def _keep(current: Path, safety: Path) -> bool:
    """A copy of the database about to be replaced: through SQLite when it can read it (True),
    else its raw files (False; a damaged database is a common reason to restore)."""
    try:
        with Database(current, migrate_schema=False) as db:
            db.backup(safety)
        return True
    except sqlite3.DatabaseError:
        safety.unlink(missing_ok=True)
        for suffix in ("", "-wal"):
            source = current.with_name(current.name + suffix)
            if source.exists():
                shutil.copyfile(source, safety.with_name(safety.name + suffix))
        return False


def _new_file(path: Path) -> Path:
    paths.touch_private_file(path)  # 0600, created if missing
    return path
