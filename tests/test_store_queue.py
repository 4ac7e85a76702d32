from __future__ import annotations

from pathlib import Path

import pytest

from claude_mem.store import Database
from claude_mem.store.queue import (
    claim,
    complete,
    counts,
    drop_dead,
    enqueue,
    fail,
    release_stale,
    retry_dead,
)
from tests.store_helpers import session


def test_enqueue_dedups_by_key_but_not_keyless(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            a = enqueue(conn, sid, "observation", {"n": 1}, dedup_key="tu-1")
            b = enqueue(conn, sid, "observation", {"n": 2}, dedup_key="tu-1")
            c = enqueue(conn, sid, "summary", {"m": "x"})
            d = enqueue(conn, sid, "summary", {"m": "x"})
        assert a == (a[0], True)
        assert b == (a[0], False)
        assert c[0] != d[0]
        assert counts(db.read()) == {"pending": 3, "processing": 0, "dead": 0}


def test_unknown_kind_rejected(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn, pytest.raises(ValueError, match="observation, summary"):
            enqueue(conn, sid, "poem", {})


def test_claim_complete_cycle_oldest_first(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            for i in range(5):
                enqueue(conn, sid, "observation", {"i": i}, dedup_key=str(i), now=1000)
            got = claim(conn, limit=3, now=2000)
            assert [item.payload["i"] for item in got] == [0, 1, 2]
            assert all(item.attempts == 1 for item in got)
            assert claim(conn, limit=10, now=2000)[0].payload["i"] == 3
            assert counts(conn)["processing"] == 5
            assert complete(conn, [item.id for item in got]) == 3
            assert complete(conn, []) == 0
            assert counts(conn) == {"pending": 0, "processing": 2, "dead": 0}


def test_claim_scoped_to_session(data_dir: Path) -> None:
    with Database() as db:
        s1, s2 = session(db, "a"), session(db, "b")
        with db.write() as conn:
            enqueue(conn, s1, "observation", {}, dedup_key="x")
            enqueue(conn, s2, "observation", {}, dedup_key="y")
            got = claim(conn, session_id=s2)
            assert [item.session_id for item in got] == [s2]


def test_fail_retries_later_then_goes_dead(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            item_id, _ = enqueue(conn, sid, "observation", {}, dedup_key="x", now=1000)
            for attempt in range(1, 4):
                (item,) = claim(conn, now=1000 * attempt * 10)
                status = fail(
                    conn, item.id, f"boom {attempt}", max_attempts=3, now=1000 * attempt * 10
                )
                assert status == ("dead" if attempt == 3 else "pending")
                assert claim(conn, now=1000 * attempt * 10) == []  # not before retry delay
            assert counts(conn)["dead"] == 1
            row = conn.execute("SELECT last_error FROM queue WHERE id = ?", (item_id,)).fetchone()
            assert row[0] == "boom 3"
            assert fail(conn, 999, "x") == "missing"
            assert retry_dead(conn) == 1
            assert claim(conn, now=10**13)[0].attempts == 1
            fail(conn, item_id, "again", max_attempts=1)
            assert drop_dead(conn, [item_id]) == 1
            assert counts(conn) == {"pending": 0, "processing": 0, "dead": 0}


def test_error_text_is_cleaned_and_capped(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            item_id, _ = enqueue(conn, sid, "observation", {}, dedup_key="x")
            claim(conn)
            fail(conn, item_id, "<private>secret</private>" + "e" * 5000)
            error = conn.execute("SELECT last_error FROM queue").fetchone()[0]
            assert "secret" not in error
            assert len(error) == 500


def test_rows_claimed_by_a_dead_worker_are_released(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            enqueue(conn, sid, "observation", {"a": 1}, dedup_key="x", now=1000)
            claim(conn, now=1000)
    # A new process (the restarted worker) opens the same file.
    with Database() as db, db.write() as conn:
        assert release_stale(conn, older_than_ms=60_000, now=2000) == 0
        assert release_stale(conn, now=2000) == 1
        (item,) = claim(conn, now=3000)
        assert item.payload == {"a": 1}
        assert item.attempts == 2


def test_payload_is_privacy_cleaned(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            enqueue(conn, sid, "summary", {"msg": "done <private>token xyz</private>"})
            assert "xyz" not in conn.execute("SELECT payload FROM queue").fetchone()[0]
