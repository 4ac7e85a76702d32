"""Backups on real databases: `claude-mem backup` while a writer is busy, `claude-mem restore`
(refused while a worker holds the lock, safety copy kept), the worker's daily backups with
retention, and the copy taken before a schema migration."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from claude_mem import backup, paths
from claude_mem.records import Observation
from claude_mem.store.db import Database, connect, open_database
from claude_mem.store.migrations import applied, migrate
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session
from claude_mem.worker import lifecycle
from tests.polling import wait_until
from tests.worker_fixtures import running_worker

BIN = Path(sys.executable).with_name("claude-mem")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN), *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=60, check=False)  # fmt: skip


def add(db: Database, title: str) -> int:
    with db.write() as conn:
        sid = ensure_session(conn, platform="claude-code", host_session_id="h", project="p")
        return insert_observation(
            conn, Observation(session_id=sid, project="p", type="change", title=title)
        )[0]


def titles(path: Path) -> list[str]:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT title FROM observations ORDER BY id")]
    finally:
        conn.close()


def test_backup_copies_a_database_in_use(data_dir: Path, tmp_path: Path) -> None:
    db = open_database()
    try:
        add(db, "first")
        add(db, "second")  # still in the WAL: nothing has checkpointed it
        assert (data_dir / "claude-mem.db-wal").stat().st_size > 0
        done = cli("backup", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        made = json.loads(done.stdout)
        path = Path(made["path"])
        assert path.parent == paths.backups_dir()
        assert path.name.startswith("manual-")
        assert made["counts"]["observations"] == 2
        assert titles(path) == ["first", "second"]
        assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no -wal/-shm
        assert path.stat().st_mode & 0o077 == 0

        chosen = cli("backup", str(tmp_path))  # a folder: the copy goes inside it
        assert chosen.returncode == 0
        assert "bytes: 1 session, 0 prompts, 2 observations, 0 summaries)" in chosen.stdout
        assert "user_prompts" not in chosen.stdout
        [inside] = tmp_path.glob("claude-mem-*.db")
        assert titles(inside) == ["first", "second"]
        refused = cli("backup", str(inside))
        assert refused.returncode == 2
        assert "already exists" in refused.stdout
    finally:
        db.close()


def test_restore_replaces_the_database_and_keeps_a_safety_copy(
    data_dir: Path, tmp_path: Path
) -> None:
    with open_database() as db:
        add(db, "kept in the backup")
        saved = backup.backup(db, tmp_path / "saved.db").path
        add(db, "written after the backup")

    lock = lifecycle.acquire_instance_lock()  # as a running worker holds it
    assert lock is not None
    try:
        refused = cli("restore", str(saved))
    finally:
        os.close(lock)
    assert refused.returncode == 2
    assert "the worker is running" in refused.stdout
    assert titles(paths.db_path()) == ["kept in the backup", "written after the backup"]

    done = cli("restore", str(saved), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert titles(paths.db_path()) == ["kept in the backup"]
    safety = Path(result["safety_copy"])
    assert safety.name.startswith("pre-restore-")
    assert titles(safety) == ["kept in the backup", "written after the backup"]
    with open_database() as db:  # the restored database opens and takes writes
        add(db, "after the restore")
    assert titles(paths.db_path()) == ["kept in the backup", "after the restore"]
    shown = cli("restore", str(saved))
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert f"restored {saved}: 1 session, 0 prompts, 1 observation, 0 summaries" in shown.stdout


def test_restore_over_a_damaged_database_keeps_its_raw_bytes(
    data_dir: Path, tmp_path: Path
) -> None:
    with open_database() as db:
        add(db, "good")
        saved = backup.backup(db, tmp_path / "saved.db").path
    damaged = b"this is not a database any more" * 200
    paths.db_path().write_bytes(damaged)
    for suffix in ("-wal", "-shm"):
        paths.db_path().with_name(paths.db_path().name + suffix).unlink(missing_ok=True)
    done = cli("restore", str(saved), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert Path(json.loads(done.stdout)["safety_copy"]).read_bytes() == damaged
    assert titles(paths.db_path()) == ["good"]


def test_restore_refuses_what_is_not_a_good_backup(data_dir: Path, tmp_path: Path) -> None:
    with open_database() as db:
        add(db, "precious")
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"x" * 4096)
    newer = tmp_path / "newer.db"
    conn = connect(newer)
    migrate(conn)
    conn.execute("INSERT INTO schema_migrations VALUES ('9999_future', 1)")
    conn.close()
    for path, message in [
        (tmp_path / "missing.db", "no such file"),
        (garbage, "not a claude-mem-py database"),
        (newer, "newer claude-mem"),
    ]:
        done = cli("restore", str(path))
        assert done.returncode == 2
        assert message in done.stdout
    assert titles(paths.db_path()) == ["precious"]
    assert not paths.backups_dir().exists()  # nothing replaced, so no safety copy either


def test_daily_backups_are_made_once_a_day_and_pruned(data_dir: Path) -> None:
    with open_database() as db:
        add(db, "daily")
        assert backup.daily(db, 0) is None  # retention 0: daily backups are off
        now = time.time()
        first = backup.daily(db, 3, now=now)
        assert first is not None
        assert titles(first) == ["daily"]
        assert backup.daily(db, 3, now=now + 3600) is None  # not a day old yet
        made = [first]
        for day in range(1, 5):
            later = backup.daily(db, 3, now=now + day * backup.DAY_S + 1)
            assert later is not None
            os.utime(later, (now + day * backup.DAY_S, now + day * backup.DAY_S))
            made.append(later)
    assert backup.daily_backups() == made[-3:]
    assert not made[0].exists()


def test_the_worker_makes_the_daily_backup(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    monkeypatch.setenv("CLAUDE_MEM_BACKUP_RETENTION", "2")
    monkeypatch.setattr(backup, "FIRST_CHECK_S", 0.0)
    with open_database() as db:
        add(db, "from before the start")
    with running_worker():
        wait_until(backup.daily_backups)
        [daily] = backup.daily_backups()
    assert titles(daily) == ["from before the start"]


def test_a_migration_is_preceded_by_a_backup(data_dir: Path) -> None:
    path = paths.ensure_data_dir() / "claude-mem.db"
    conn = connect(path)
    migrate(conn, stop_before="0007_corpora")
    conn.execute(
        "INSERT INTO sessions (id, platform, host_session_id, project, started_at, updated_at)"
        " VALUES (1, 'claude-code', 'h', 'p', 1, 1)"
    )
    conn.close()
    with Database(path) as db:
        assert db.migrated[0] == "0007_corpora"
    [copy] = paths.backups_dir().glob("pre-migration-0006_vectors-*.db")
    old = sqlite3.connect(copy)
    assert applied(old)[-1] == "0006_vectors"
    assert old.execute("SELECT host_session_id FROM sessions").fetchall() == [("h",)]
    old.close()
