from __future__ import annotations

import sqlite3
import stat
import threading
from pathlib import Path

import pytest

from claude_mem import paths
from claude_mem.store import Database
from claude_mem.store.db import connect, fts5_available, open_database


def test_pragmas_on_every_connection(data_dir: Path) -> None:
    with Database() as db:
        writer = connect(db.path)
        for conn in (writer, db.read()):
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
            assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
            assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        writer.close()


def test_files_are_private(data_dir: Path) -> None:
    with Database() as db, db.write() as conn:
        conn.execute(
            "INSERT INTO sessions (platform, host_session_id, project, started_at, updated_at)"
            " VALUES ('p', 'h', 'x', 1, 1)"
        )
    for path in data_dir.iterdir():
        if path.is_file():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700


def test_reader_is_read_only(data_dir: Path) -> None:
    with Database() as db, pytest.raises(sqlite3.OperationalError, match="readonly"):
        db.read().execute(
            "INSERT INTO sessions (platform, host_session_id, project, started_at, updated_at)"
            " VALUES ('p', 'h', 'x', 1, 1)"
        )


def test_write_rolls_back_on_error(data_dir: Path) -> None:
    with Database() as db:

        def failing_write() -> None:
            with db.write() as conn:
                conn.execute(
                    "INSERT INTO sessions (platform, host_session_id, project, started_at,"
                    " updated_at) VALUES ('p', 'h', 'x', 1, 1)"
                )
                raise RuntimeError("boom")

        with pytest.raises(RuntimeError):
            failing_write()
        assert db.read().execute("SELECT count(*) FROM sessions").fetchone()[0] == 0


def test_readers_see_committed_data_while_writer_holds_transaction(data_dir: Path) -> None:
    with Database() as db:
        insert = (
            "INSERT INTO sessions (platform, host_session_id, project, started_at, updated_at)"
            " VALUES ('p', ?, 'x', 1, 1)"
        )
        with db.write() as conn:
            conn.execute(insert, ("a",))
        inside = threading.Event()
        release = threading.Event()

        def long_write() -> None:
            with db.write() as conn:
                conn.execute(insert, ("b",))
                inside.set()
                release.wait(5)

        thread = threading.Thread(target=long_write)
        thread.start()
        assert inside.wait(5)
        # A reader in this thread is not blocked and sees only committed rows.
        assert db.read().execute("SELECT count(*) FROM sessions").fetchone()[0] == 1
        release.set()
        thread.join()
        assert db.read().execute("SELECT count(*) FROM sessions").fetchone()[0] == 2


def test_concurrent_writers_from_threads_all_commit(data_dir: Path) -> None:
    with Database() as db:

        def work(n: int) -> None:
            for i in range(50):
                with db.write() as conn:
                    conn.execute(
                        "INSERT INTO sessions (platform, host_session_id, project, started_at,"
                        " updated_at) VALUES ('p', ?, 'x', 1, 1)",
                        (f"{n}-{i}",),
                    )

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert db.read().execute("SELECT count(*) FROM sessions").fetchone()[0] == 400


def test_second_process_connection_waits_instead_of_failing(data_dir: Path) -> None:
    with Database() as db:
        other = connect(db.path)
        other.execute("BEGIN IMMEDIATE")
        timer = threading.Timer(0.3, lambda: other.execute("COMMIT"))
        timer.start()
        with db.write() as conn:  # busy_timeout makes this wait for the other writer
            conn.execute(
                "INSERT INTO sessions (platform, host_session_id, project, started_at, updated_at)"
                " VALUES ('p', 'h', 'x', 1, 1)"
            )
        timer.join()
        other.close()


def test_fts5_present() -> None:
    assert fts5_available()


def test_open_database_uses_redaction_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_MEM_REDACT_SECRETS", "false")
    with open_database() as db:
        assert db.redact_secrets is False
        assert db.path == paths.db_path()


def test_backup_is_a_consistent_copy(data_dir: Path, tmp_path: Path) -> None:
    with Database() as db:
        with db.write() as conn:
            conn.execute(
                "INSERT INTO sessions (platform, host_session_id, project, started_at, updated_at)"
                " VALUES ('p', 'h', 'x', 1, 1)"
            )
        target = db.backup(tmp_path / "copy.db")
    copy = sqlite3.connect(target)
    assert copy.execute("SELECT host_session_id FROM sessions").fetchall() == [("h",)]
    copy.close()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_non_blocking_write_raises_instead_of_waiting(data_dir: Path) -> None:

    from claude_mem.store.db import NON_BLOCKING, WouldBlock

    database = Database()
    with database.write() as conn:
        conn.execute("CREATE TABLE t (x)")

    def attempt() -> str:
        token = NON_BLOCKING.set(True)
        try:
            with database.write() as conn:
                conn.execute("INSERT INTO t VALUES (1)")
            return "wrote"
        except WouldBlock:
            return "would block"
        finally:
            NON_BLOCKING.reset(token)

    # Another thread holds the writer: no wait.
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with database.write():
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    assert attempt() == "would block"
    release.set()
    holder.join(10)

    # Another process's connection holds SQLite's write lock: no busy wait either (the writer
    # turns its busy timeout off for the attempt).
    other = connect(database.path)
    other.execute("BEGIN IMMEDIATE")
    statements: list[str] = []
    database._writer.set_trace_callback(statements.append)
    assert attempt() == "would block"
    database._writer.set_trace_callback(None)
    assert statements[:2] == ["PRAGMA busy_timeout = 0", "BEGIN IMMEDIATE"]
    other.execute("ROLLBACK")
    other.close()
    # The writer's own busy timeout is back for ordinary writes, and nothing was written.
    assert database._writer.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    assert database.read().execute("SELECT count(*) FROM t").fetchone()[0] == 0
    assert attempt() == "wrote"
    database.close()
