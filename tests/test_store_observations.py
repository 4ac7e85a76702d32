from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_mem.records import Observation
from claude_mem.store import Database
from claude_mem.store.limits import RECORD_TEXT_CHARS, truncate_text
from claude_mem.store.observations import (
    content_hash,
    count_observations,
    delete_observation,
    get_observation,
    get_observations,
    insert_observation,
    list_observations,
)
from tests.store_helpers import observation, session


def new(session_id: int, **fields: Any) -> Observation:
    values: dict[str, Any] = {"project": "proj", "type": "bugfix", "title": "Fixed race"}
    values.update(fields)
    return Observation(session_id=session_id, **values)


def test_insert_round_trips_every_field(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        obs = new(
            sid,
            subtitle="in scheduler.py",
            narrative="Added a lock around the queue.",
            facts=["lock added", "tests pass"],
            concepts=["gotcha"],
            files_read=["src/a.py"],
            files_modified=["src/scheduler.py"],
            prompt_number=2,
            discovery_tokens=1234,
            agent_type="Explore",
            agent_id="agent-1",
            generated_by="local",
            created_at=1_700_000_000_000,
        )
        with db.write() as conn:
            obs_id, created = insert_observation(conn, obs)
        assert created
        row = get_observation(db.read(), obs_id)
        assert row is not None
        for key in (
            "subtitle", "narrative", "facts", "concepts", "files_read", "files_modified",
            "prompt_number", "discovery_tokens", "agent_type", "agent_id", "generated_by",
            "created_at",
        ):  # fmt: skip
            assert row[key] == getattr(obs, key), key
        assert row["content_hash"] == content_hash(obs)


def test_same_content_in_same_session_returns_existing_id(data_dir: Path) -> None:
    with Database() as db:
        s1, s2 = session(db, "a"), session(db, "b")
        with db.write() as conn:
            first = insert_observation(conn, new(s1, narrative="n"))
            again = insert_observation(conn, new(s1, narrative="n", discovery_tokens=5))
            other_session = insert_observation(conn, new(s2, narrative="n"))
            different = insert_observation(conn, new(s1, narrative="changed"))
        assert first == (first[0], True)
        assert again == (first[0], False)
        assert other_session[1]
        assert different[1]
        assert count_observations(db.read()) == 3


def test_dedup_sees_through_private_parts(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            a = insert_observation(conn, new(sid, narrative="x <private>one</private>"))
            b = insert_observation(conn, new(sid, narrative="x <private>two</private>"))
        assert a[0] == b[0]


def test_empty_list_items_dropped_and_type_defaulted(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            obs_id, _ = insert_observation(
                conn, new(sid, type="", facts=["", "<private>p</private>", "kept"])
            )
        row = get_observation(db.read(), obs_id)
        assert row is not None
        assert row["facts"] == ["kept"]
        assert row["type"] == "discovery"


def test_get_by_ids_keeps_order_and_skips_missing(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        ids = [observation(db, sid, title=f"t{i}") for i in range(3)]
        got = get_observations(db.read(), [ids[2], 999, ids[0]])
        assert [r["id"] for r in got] == [ids[2], ids[0]]
        assert get_observations(db.read(), []) == []


def test_list_newest_first_with_project_filter_and_paging(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        for i in range(5):
            observation(db, sid, title=f"a{i}", project="a", created_at=1000 + i)
        observation(db, sid, title="b", project="b", created_at=2000)
        conn = db.read()
        assert [r["title"] for r in list_observations(conn, projects=("a",), limit=2)] == [
            "a4",
            "a3",
        ]
        page = list_observations(conn, projects=("a",), limit=2, offset=2)
        assert [r["title"] for r in page] == ["a2", "a1"]
        assert count_observations(conn, ("a", "b")) == 6


def test_delete_removes_fts_row(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        obs_id = observation(db, sid, title="unique zebra title")
        conn = db.read()
        match = "SELECT count(*) FROM observations_fts WHERE observations_fts MATCH 'zebra'"
        assert conn.execute(match).fetchone()[0] == 1
        with db.write() as w:
            assert delete_observation(w, obs_id)
            assert not delete_observation(w, obs_id)
        assert conn.execute(match).fetchone()[0] == 0


def test_hostile_text_is_stored_not_crashed_on(data_dir: Path) -> None:
    decoded = b'"\\ud800 lone \\udfff surrogates"'.decode()
    import json

    lone = json.loads(decoded)  # what a JSON payload with broken escapes decodes to
    huge = "line of tool output\n" * 550_000  # ~10 MB
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            a, _ = insert_observation(conn, new(sid, title=lone, narrative="nul\x00byte"))
            b, _ = insert_observation(conn, new(sid, title="huge", narrative=huge))
        rows = {r["id"]: r for r in get_observations(db.read(), [a, b])}
    assert rows[a]["title"] == "\ufffd lone \ufffd surrogates"
    assert rows[a]["narrative"] == "nul\x00byte"
    # Stored, within the store's generous bound for a narrative, its cut said in the text.
    assert rows[b]["narrative"] == truncate_text(huge.strip(), RECORD_TEXT_CHARS)
