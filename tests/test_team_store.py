"""The SQLite side of team memory: triggers fill the outbox in the write's own transaction,
sharing a project queues what it has, pulled rows apply once, tombstones and links carry."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import msgspec

from claude_mem.records import Summary
from claude_mem.store import Database
from claude_mem.store import team as team_store
from claude_mem.store import vectors as vector_store
from claude_mem.store.forget import forget_project
from claude_mem.store.observations import get_observation
from claude_mem.store.summaries import (
    insert_summary,
    replace_session_summary,
    session_summaries,
    summarized,
)
from claude_mem.team.records import TeamEvent, TeamRecord, machine_id, search_text
from tests.store_helpers import found, observation, session

MACHINE = "m-here"


def ops(db: Database) -> list[tuple[str, str, int]]:
    rows = db.read().execute("SELECT op, kind, row_id FROM team_outbox ORDER BY id")
    return [(str(r[0]), str(r[1]), int(r[2])) for r in rows]


def share(db: Database, project: str = "proj") -> int:
    with db.write() as conn:
        return team_store.share(conn, project)


def test_only_own_records_of_shared_projects_are_queued(db: Database) -> None:
    sid = session(db)
    other = session(db, "s-2", project="private")
    share(db)
    obs = observation(db, sid, title="shared work")
    observation(db, other, project="private", title="private work")
    with db.write() as conn:
        summary = insert_summary(conn, Summary(session_id=sid, project="proj", request="r"))
    assert ops(db) == [("record", "observation", obs), ("record", "summary", summary)]


def test_share_backfills_records_vectors_and_links_once(db: Database) -> None:
    sid = session(db)
    old = observation(db, sid, title="old")
    new = observation(db, sid, title="new")
    with db.write() as conn:
        conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?", (new, old))
        vector_store.upsert(conn, "observation", new, "model", b"\0" * 16)
    assert ops(db) == []  # nothing is queued before the project is shared
    assert share(db) == 4
    assert ops(db) == [
        ("record", "observation", old),
        ("record", "observation", new),
        ("vector", "observation", new),
        ("supersede", "observation", old),
    ]
    assert share(db) == 0  # already shared: nothing queued twice
    assert team_store.shared(db.read()) == ["proj"]


def test_links_vectors_and_deletes_are_queued_by_triggers(db: Database) -> None:
    sid = session(db)
    share(db)
    old = observation(db, sid, title="old")
    new = observation(db, sid, title="new")
    with db.write() as conn:
        team_store.ack(conn, [r[0] for r in conn.execute("SELECT id FROM team_outbox")])
        conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?", (new, old))
        vector_store.upsert(conn, "observation", new, "model", b"\0" * 16)
        vector_store.upsert(conn, "observation", new, "model", b"\1" * 16)  # replaced
        conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))  # cascades
    assert ops(db) == [
        ("supersede", "observation", old),
        ("vector", "observation", new),
        ("vector", "observation", new),
        ("forget", "observation", old),
        ("forget", "observation", new),
    ]


def test_outbox_batch_is_cleaned_and_skips_unshared_and_gone_rows(db: Database) -> None:
    sid = session(db)
    share(db)
    kept = observation(db, sid, title="kept", narrative="uses key sk-ant-api03-" + "a" * 90)
    gone = observation(db, sid, title="gone")
    with db.write() as conn:
        # A row written with redaction off (the user's setting) still leaves cleaned.
        conn.execute(
            "UPDATE observations SET narrative = ? WHERE id = ?",
            ("token ghp_" + "b" * 36 + " <private>secret plan</private> end", kept),
        )
        conn.execute("DELETE FROM observations WHERE id = ?", (gone,))
    batch = team_store.outbox(db.read(), MACHINE)
    assert len(batch.ids) == 3
    [record] = batch.records
    assert record.origin_id == f"{MACHINE}/observation/{kept}"
    assert (record.platform, record.source_session) == ("claude-code", "s-1")
    text = msgspec.json.encode(record).decode()
    assert "ghp_" not in text
    assert "secret plan" not in text
    assert "end" in text
    assert record.search_text == search_text("observation", record.fields)
    assert [(e.kind, e.origin_id) for e in batch.events] == [
        ("forget", f"{MACHINE}/observation/{gone}")
    ]
    with db.write() as conn:
        assert team_store.unshare(conn, "proj")
    assert ops(db) == [("forget", "observation", gone)]  # what waited for the project goes
    observation(db, sid, title="after unshare")
    assert team_store.outbox_size(db.read()) == 1  # nothing new is queued


def pulled(
    n: int, *, machine: str = "m-there", session_id: str = "their-s", **fields: object
) -> TeamRecord:
    values: dict[str, object] = {"type": "discovery", "title": f"their work {n}", "narrative": "x"}
    values.update(fields)
    return TeamRecord(
        kind="observation", origin_id=f"{machine}/observation/{n}", content_hash=f"h{n}",
        project="proj", type="discovery", title=f"their work {n}", created_at=1_000 + n,
        machine=machine, source_session=session_id, platform="codex", fields=values,
        search_text="", member="alice",
    )  # fmt: skip


def apply(
    db: Database,
    records: list[TeamRecord],
    events: list[TeamEvent] | None = None,
    position: tuple[str, int] = ("5", 9),
) -> team_store.Applied:
    with db.write() as conn:
        return team_store.apply_pulled(
            conn, records, events or [], {"records": position}, machine=MACHINE
        )


def test_apply_pulled_is_idempotent_and_queues_nothing(db: Database) -> None:
    share(db)
    first = apply(db, [pulled(1), pulled(2), pulled(3, session_id="other-s")])
    assert (first.records, first.newest) == (3, 1_003)
    again = apply(db, [pulled(1), pulled(2), pulled(3, session_id="other-s")], position=("6", 1))
    assert again.records == 0
    conn = db.read()
    rows = conn.execute(
        "SELECT o.author, o.origin_id, o.source, s.platform, s.host_session_id, s.status"
        " FROM observations o JOIN sessions s ON s.id = o.session_id ORDER BY o.id"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        ("alice", "m-there/observation/1", "team", "team", "m-there/codex/their-s", "completed"),
        ("alice", "m-there/observation/2", "team", "team", "m-there/codex/their-s", "completed"),
        ("alice", "m-there/observation/3", "team", "team", "m-there/codex/other-s", "completed"),
    ]
    assert team_store.outbox_size(conn) == 0  # a teammate's rows are never pushed back
    assert team_store.cursor(conn, "records") == ("6", 1)
    assert team_store.cursor(conn, "events") == team_store.START
    assert apply(db, [pulled(4, machine=MACHINE)]).records == 0  # our own echo


def test_apply_cleans_pulled_text(db: Database) -> None:
    apply(db, [pulled(1, narrative="<private>their secret</private> fine")])
    row = db.read().execute("SELECT narrative FROM observations").fetchone()
    assert row[0] == "fine"


def test_tombstone_deletes_a_teammates_copy_only(db: Database) -> None:
    share(db)
    own = observation(db, session(db), title="mine")
    apply(db, [pulled(1)])
    copy = (
        db.read().execute("SELECT id FROM observations WHERE origin_id IS NOT NULL").fetchone()[0]
    )
    with db.write() as conn:
        team_store.ack(conn, [r[0] for r in conn.execute("SELECT id FROM team_outbox")])
    forget = [
        TeamEvent(
            kind="forget",
            origin_id="m-there/observation/1",
            project="proj",
            machine="m-there",
            created_at=1,
        ),
        TeamEvent(
            kind="forget",
            origin_id=f"{MACHINE}/observation/{own}",
            project="proj",
            machine="x",
            created_at=1,
        ),
    ]
    assert apply(db, [], forget).events == 1
    assert get_observation(db.read(), copy) is None
    assert get_observation(db.read(), own) is not None
    assert ops(db) == []  # deleting a copy sends no tombstone of ours
    assert apply(db, [], forget).events == 0


def test_supersede_link_applies_when_both_rows_are_here(db: Database) -> None:
    share(db)
    own = observation(db, session(db), title="mine")
    link = TeamEvent(kind="supersede", origin_id=f"{MACHINE}/observation/{own}",
                     successor_origin_id="m-there/observation/2", machine="m-there",
                     project="proj", created_at=1)  # fmt: skip
    assert apply(db, [], [link]).events == 0  # the successor is not here yet
    apply(db, [pulled(1), pulled(2)])
    between = TeamEvent(kind="supersede", origin_id="m-there/observation/1",
                        successor_origin_id="m-there/observation/2", machine="m-there",
                        project="proj", created_at=1)  # fmt: skip
    with db.write() as conn:
        team_store.ack(conn, [r[0] for r in conn.execute("SELECT id FROM team_outbox")])
    assert apply(db, [], [link, between]).events == 2
    conn = db.read()
    newer = conn.execute("SELECT id FROM observations WHERE origin_id LIKE '%/2'").fetchone()[0]
    assert found(get_observation(conn, own))["superseded_by"] == newer
    assert found(get_observation(conn, own))["valid_to"] == 1_002  # when the successor was made
    assert ops(db) == []  # a teammate's link is not sent back
    assert apply(db, [], [link, between]).events == 0


def test_forgetting_a_shared_project_sends_tombstones(db: Database) -> None:
    sid = session(db)
    share(db)
    obs = observation(db, sid, title="t")
    apply(db, [pulled(1)])
    with db.write() as conn:
        team_store.ack(conn, [r[0] for r in conn.execute("SELECT id FROM team_outbox")])
        forget_project(conn, "proj")
    assert ops(db) == [("forget", "observation", obs)]


def test_machine_id_is_made_once_and_private(data_dir: Path) -> None:
    first = machine_id()
    assert len(first) == 32
    assert int(first, 16) >= 0
    assert machine_id() == first
    mode = os.stat(data_dir / "machine-id").st_mode
    assert stat.S_IMODE(mode) == 0o600


def test_search_text_is_what_full_text_indexes() -> None:
    fields = {"title": "T", "facts": ["a", "b"], "request": "R", "learned": "L", "type": "x"}
    assert search_text("observation", fields) == "T\na\nb"
    assert search_text("summary", fields) == "R\nL"


def test_what_one_store_pushes_another_applies_as_it_was(db: Database, tmp_path: Path) -> None:
    sid = session(db, platform="codex")
    share(db)
    observation(db, sid, title="found it", facts=["a fact"], files_read=["src/a.py"])
    with db.write() as conn:
        insert_summary(conn, Summary(session_id=sid, project="proj", request="fix a",
                                     learned="how", prompt_number=2))  # fmt: skip
    batch = team_store.outbox(db.read(), MACHINE)
    pushed = [msgspec.structs.replace(r, member="bob") for r in batch.records]
    with Database(tmp_path / "teammate.db") as other:
        with other.write() as conn:
            team_store.apply_pulled(conn, pushed, [], {}, machine="m-teammate")
        theirs = other.read()
        obs = found(theirs.execute("SELECT * FROM observations").fetchone())
        assert (obs["title"], obs["facts"], obs["files_read"]) == (
            "found it", '["a fact"]', '["src/a.py"]')  # fmt: skip
        assert (obs["author"], obs["source"]) == ("bob", "team")
        summary = found(theirs.execute("SELECT * FROM session_summaries").fetchone())
        assert (summary["request"], summary["learned"], summary["prompt_number"]) == (
            "fix a", "how", 2)  # fmt: skip
        assert summary["author"] == "bob"
        assert summary["origin_id"] == pushed[1].origin_id
        assert summary["session_id"] == obs["session_id"]  # one local session per source session


def test_a_sessions_updated_summary_reaches_the_team_as_one_record(db: Database) -> None:
    sid = session(db)
    share(db)
    with db.write() as conn:
        first, _ = replace_session_summary(
            conn, Summary(session_id=sid, project="proj", request="turn one", prompt_number=1)
        )
        second, replaced = replace_session_summary(
            conn, Summary(session_id=sid, project="proj", request="turn two", prompt_number=2)
        )
        assert summarized(conn, sid, 1)  # a re-sent Stop of either turn adds nothing
        assert summarized(conn, sid, 2)
        assert not summarized(conn, sid, 3)
    assert replaced == [first]
    assert second > first  # a newer id: the old one, forgotten by the team, is never reused
    assert [row.request for row in session_summaries(db.read(), sid)] == ["turn two"]
    batch = team_store.outbox(db.read(), MACHINE)
    assert [record.origin_id for record in batch.records] == [f"{MACHINE}/summary/{second}"]
    assert [(e.kind, e.origin_id) for e in batch.events] == [
        ("forget", f"{MACHINE}/summary/{first}")
    ]
