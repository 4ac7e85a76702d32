"""The push against a real PostgreSQL: a record goes with its vector in one INSERT (the row is
written once, its vector op acknowledged with it), a vector made later follows as an UPDATE,
a batch that fails part-way leaves nothing on the server and is pushed again whole, a push
whose acknowledgement was lost adds nothing but the vector the server still lacked, and
batches of records go two at a time while a batch naming earlier rows waits for them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
import pytest

from claude_mem.store import Database
from claude_mem.store import team as team_store
from claude_mem.store import vectors as vector_store
from claude_mem.team import admin, pg, schema
from claude_mem.team import sync as team_sync
from claude_mem.team.sync import TeamSync
from tests.polling import wait_until
from tests.store_helpers import observation, session
from tests.team_pg import TeamDatabase


@pytest.fixture
def member(team_db: TeamDatabase, unique_name: Callable[[str], str]) -> str:
    team = unique_name("team")
    admin.init(team_db.owner_url, team)
    return admin.add_member(team_db.owner_url, unique_name("pusher"), team)


@pytest.fixture
def sync(db: Database, member: str) -> Iterator[TeamSync]:
    """The sync of the test's store as `member` (run by hand: `sync_once`, no thread)."""
    syncing = TeamSync(db, member)
    try:
        yield syncing
    finally:
        syncing.stop()


def rows(team_db: TeamDatabase, query: str, *args: object) -> list[tuple[Any, ...]]:
    with pg.connect(team_db.owner_url, autocommit=True) as conn:
        return conn.execute(query.encode(), args).fetchall()


def unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=schema.DIMENSIONS).astype(np.float32)
    return vector / np.linalg.norm(vector)


def embed(db: Database, obs_id: int, vector: np.ndarray) -> None:
    with db.write() as conn:
        vector_store.upsert(conn, "observation", obs_id, "m", vector)


def pushed_vector(team_db: TeamDatabase, obs_id: int) -> np.ndarray | None:
    [(text,)] = rows(
        team_db,
        "SELECT embedding::text FROM claude_mem.records WHERE origin_id LIKE %s",
        f"%/observation/{obs_id}",
    )
    return None if text is None else np.array([float(v) for v in text.strip("[]").split(",")])


def vector_of(team_db: TeamDatabase, obs_id: int) -> np.ndarray:
    vector = pushed_vector(team_db, obs_id)
    assert vector is not None
    return vector


def share(db: Database) -> None:
    with db.write() as conn:
        team_store.share(conn, "proj")


def outbox(db: Database) -> int:
    return team_store.outbox_size(db.read())


# Row versions on the server: a fresh table's rows sit at (0,1), (0,2)...; an UPDATE writes a
# new version of the row further on, so these tell an INSERT alone from an INSERT then UPDATE.
VERSIONS = "SELECT ctid::text FROM claude_mem.records ORDER BY ctid"
EVENTS = "SELECT count(*) FROM claude_mem.events"


def test_records_go_with_their_vectors_in_one_write(
    db: Database, sync: TeamSync, team_db: TeamDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(team_sync, "PUSH_BATCH", 2)  # the vector ops wait two batches further on
    sid = session(db)
    ids = [observation(db, sid, title=f"t{n}") for n in range(3)]
    for obs_id in ids:
        embed(db, obs_id, unit(obs_id))
    share(db)
    assert [op for op, *_ in db.read().execute("SELECT op FROM team_outbox ORDER BY id")] == [
        "record", "record", "record", "vector", "vector", "vector",
    ]  # fmt: skip
    sync.sync_once()
    assert outbox(db) == 0  # every vector op acknowledged with its record
    assert rows(team_db, VERSIONS) == [("(0,1)",), ("(0,2)",), ("(0,3)",)]  # no UPDATE
    for obs_id in ids:
        assert np.allclose(vector_of(team_db, obs_id), unit(obs_id), atol=1e-7)


def test_a_vector_made_after_the_push_follows_as_an_update(
    db: Database, sync: TeamSync, team_db: TeamDatabase
) -> None:
    sid = session(db)
    share(db)
    early, late = observation(db, sid, title="early"), observation(db, sid, title="late")
    embed(db, early, unit(1))
    sync.sync_once()
    assert pushed_vector(team_db, early) is not None
    assert pushed_vector(team_db, late) is None
    embed(db, late, unit(2))
    embed(db, early, unit(3))  # embedded again (another model): the new vector replaces it
    assert outbox(db) == 2
    sync.sync_once()
    assert outbox(db) == 0
    assert np.allclose(vector_of(team_db, late), unit(2), atol=1e-7)
    assert np.allclose(vector_of(team_db, early), unit(3), atol=1e-7)
    assert rows(team_db, "SELECT count(*) FROM claude_mem.records") == [(2,)]


def test_a_batch_failing_part_way_pushes_nothing_and_is_retried_whole(
    db: Database, sync: TeamSync, team_db: TeamDatabase
) -> None:
    sid = session(db)
    share(db)
    kept = observation(db, sid, title="kept")
    embed(db, kept, unit(1))
    gone = observation(db, sid, title="gone")
    with db.write() as conn:
        conn.execute("DELETE FROM observations WHERE id = ?", (gone,))  # a tombstone to push
    waiting = outbox(db)
    grant = f"INSERT ON claude_mem.events TO {schema.WRITER}"
    with pg.connect(team_db.owner_url, autocommit=True) as owner:
        owner.execute(f"REVOKE {grant.replace(' TO ', ' FROM ')}".encode())
        with pytest.raises(Exception, match="permission denied"):
            sync.sync_once()  # the records went first; the events statement fails
        assert rows(team_db, "SELECT count(*) FROM claude_mem.records") == [(0,)]
        assert outbox(db) == waiting  # nothing acknowledged
        owner.execute(f"GRANT {grant}".encode())
    sync.sync_once()
    assert outbox(db) == 0
    assert rows(team_db, "SELECT title, embedding IS NOT NULL FROM claude_mem.records") == [
        ("kept", True)
    ]
    assert rows(team_db, "SELECT kind FROM claude_mem.events") == [("forget",)]


def test_a_lost_acknowledgement_adds_nothing_but_the_missing_vector(
    db: Database, sync: TeamSync, team_db: TeamDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = session(db)
    share(db)
    obs_id = observation(db, sid, title="once")

    def crash(conn: object, ids: object) -> None:
        raise RuntimeError("the worker died after the commit")

    with monkeypatch.context() as patch:
        patch.setattr(team_store, "ack", crash)
        with pytest.raises(RuntimeError):
            sync.sync_once()
    assert pushed_vector(team_db, obs_id) is None  # committed without a vector
    embed(db, obs_id, unit(5))  # now the batch again carries the record with its vector
    assert outbox(db) == 2
    sync.sync_once()
    assert outbox(db) == 0
    assert rows(team_db, "SELECT count(*), count(DISTINCT origin_id) FROM claude_mem.records") == [
        (1, 1)
    ]
    assert np.allclose(vector_of(team_db, obs_id), unit(5), atol=1e-7)
    sync.sync_once()  # and again: still one row
    assert rows(team_db, "SELECT count(*) FROM claude_mem.records") == [(1,)]


def test_batches_read_ahead_are_sent_once_and_acknowledged_after_their_own_commit(
    db: Database, sync: TeamSync, team_db: TeamDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next batch is read while the server takes the batches in flight: it leaves them
    out (no record is sent twice, no vector it carried follows as an UPDATE), and when one
    fails, every other batch that committed is acknowledged and the failed one is not."""
    monkeypatch.setattr(team_sync, "PUSH_BATCH", 2)
    sid = session(db)
    ids = [observation(db, sid, title=f"t{n}") for n in range(7)]
    for obs_id in ids:
        embed(db, obs_id, unit(obs_id))
    share(db)
    with db.write() as conn:
        conn.execute("DELETE FROM observations WHERE id = ?", (ids[6],))  # a tombstone last
    with pg.connect(team_db.owner_url, autocommit=True) as owner:
        owner.execute(
            b"""CREATE TABLE claude_mem.attempts (title text);
            CREATE FUNCTION claude_mem.attempt() RETURNS trigger LANGUAGE plpgsql
            SECURITY DEFINER AS $$ BEGIN
                IF NEW.title = 't4' AND NOT EXISTS (SELECT 1 FROM claude_mem.attempts
                                                    WHERE title = 'open') THEN
                    RAISE EXCEPTION 'the server failed on t4';
                END IF;
                INSERT INTO claude_mem.attempts VALUES (NEW.title);
                RETURN NEW;
            END $$;
            CREATE TRIGGER attempt BEFORE INSERT ON claude_mem.records
                FOR EACH ROW EXECUTE FUNCTION claude_mem.attempt();"""
        )
        with pytest.raises(Exception, match="the server failed on t4"):
            sync.sync_once()  # batches t0 t1 and t2 t3 commit, t4 t5 fails
        assert rows(team_db, "SELECT title FROM claude_mem.records ORDER BY title") == [
            ("t0",), ("t1",), ("t2",), ("t3",),
        ]  # fmt: skip
        # The batch after the failed one (t6's record and vector: t6 is gone, nothing to send)
        # went beside it and is acknowledged; the tombstone waits for both.
        waiting = db.read().execute("SELECT op, row_id FROM team_outbox ORDER BY id").fetchall()
        assert [tuple(r) for r in waiting] == [
            ("record", ids[4]), ("record", ids[5]),
            ("vector", ids[4]), ("vector", ids[5]), ("forget", ids[6]),
        ]  # fmt: skip
        owner.execute(b"INSERT INTO claude_mem.attempts VALUES ('open')")
    sync.sync_once()
    assert outbox(db) == 0
    assert rows(team_db, "SELECT title FROM claude_mem.attempts ORDER BY title") == [
        ("open",), ("t0",), ("t1",), ("t2",), ("t3",), ("t4",), ("t5",),
    ]  # fmt: skip  # each record sent once (the failed t4 rolled back with its log row)
    assert rows(team_db, VERSIONS) == [(f"(0,{n})",) for n in range(1, 7)]  # no UPDATE
    for obs_id in ids[:6]:
        assert np.allclose(vector_of(team_db, obs_id), unit(obs_id), atol=1e-7)
    assert rows(team_db, "SELECT kind FROM claude_mem.events") == [("forget",)]


def backends(team_db: TeamDatabase, member_url: str, *, on_lock: bool = False) -> int:
    """The member's server backends (those waiting for a lock: each a batch in flight)."""
    role = psycopg.conninfo.conninfo_to_dict(member_url)["user"]
    waiting = " AND wait_event_type = 'Lock'" if on_lock else ""
    query = f"SELECT count(*) FROM pg_stat_activity WHERE usename = %s{waiting}"
    return int(rows(team_db, query, role)[0][0])


@contextmanager
def pushing_while_locked(
    team_db: TeamDatabase, sync: TeamSync, member_url: str, queued: int
) -> Iterator[None]:
    """`sync_once` in a thread while the owner holds the records table locked against inserts
    (SHARE): the block runs once `queued` of the member's transactions wait on the lock (a
    transaction waiting there has written nothing); then the lock goes and the push finishes
    (its error raised here). The lock goes first on any failure, so the push never waits on it."""
    with ThreadPoolExecutor(1) as pool, pg.connect(team_db.owner_url) as owner:
        owner.execute(b"LOCK TABLE claude_mem.records IN SHARE MODE")
        pushed = pool.submit(sync.sync_once)
        assert wait_until(lambda: backends(team_db, member_url, on_lock=True) >= queued, 60)
        yield
        owner.commit()
        pushed.result()


def test_batches_of_records_go_two_at_a_time_on_two_connections(
    db: Database,
    sync: TeamSync,
    member: str,
    team_db: TeamDatabase,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server backend indexes a batch on one core: two batches in flight use two. The second
    connection lasts as long as the push that needed it."""
    monkeypatch.setattr(team_sync, "PUSH_BATCH", 2)
    sid = session(db)
    ids = [observation(db, sid, title=f"t{n}") for n in range(6)]
    for obs_id in ids:
        embed(db, obs_id, unit(obs_id))
    share(db)
    with pushing_while_locked(team_db, sync, member, queued=2):
        pass  # both batches sent before either could commit
    assert outbox(db) == 0
    assert rows(team_db, "SELECT title FROM claude_mem.records ORDER BY title") == [
        (f"t{n}",) for n in range(6)
    ]
    assert rows(team_db, "SELECT count(embedding) FROM claude_mem.records") == [(6,)]
    # The push's own connection is closed (a backend ends just after its client leaves); the
    # sync's connection is kept for the next round.
    assert wait_until(lambda: backends(team_db, member) <= 1, 60)
    assert backends(team_db, member) == 1


def test_a_batch_naming_earlier_rows_waits_for_the_batches_before_it(
    db: Database,
    sync: TeamSync,
    member: str,
    team_db: TeamDatabase,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tombstone (or a link, or a later vector) is sent only once every batch before it has
    committed: its transaction is newer than theirs, so a teammate's pull (in transaction
    order) never meets it before the records it names."""
    monkeypatch.setattr(team_sync, "PUSH_BATCH", 2)
    sid = session(db)
    kept = [observation(db, sid, title=f"t{n}") for n in range(2)]
    gone = observation(db, sid, title="gone")
    share(db)
    with db.write() as conn:
        conn.execute("DELETE FROM observations WHERE id = ?", (gone,))  # its tombstone queued
    with pushing_while_locked(team_db, sync, member, queued=1):  # the records' batch
        # A push sending the tombstone beside it would have it on the server by now, or
        # waiting on its second connection; given a moment to, this one does neither.
        sent = wait_until(
            lambda: backends(team_db, member) > 1 or rows(team_db, EVENTS) != [(0,)], 1.0
        )
        assert not sent
    assert outbox(db) == 0
    assert len(kept) == rows(team_db, "SELECT count(*) FROM claude_mem.records")[0][0]
    [(records_txid, events_txid)] = rows(
        team_db,
        "SELECT (SELECT max(txid::text::bigint) FROM claude_mem.records),"
        " (SELECT min(txid::text::bigint) FROM claude_mem.events)",
    )
    assert events_txid > records_txid


def test_a_stopped_sync_starts_again_and_goes_on(
    db: Database, sync: TeamSync, team_db: TeamDatabase
) -> None:
    """One start/stop that works again and again in one process: what was written while
    the sync was stopped goes once it is started again."""
    sid = session(db)
    share(db)

    def pushed(count: int) -> Callable[[], bool]:
        query = "SELECT count(*) FROM claude_mem.records"
        return lambda: rows(team_db, query) == [(count,)] and outbox(db) == 0

    for n in range(3):
        sync.start()
        assert wait_until(pushed(n), 30)
        sync.stop()
        observation(db, sid, title=f"while stopped {n}")
        assert outbox(db) == 1
    sync.start()
    assert wait_until(pushed(3), 30)
