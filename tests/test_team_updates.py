"""Team rows that change after they were pushed, against a real PostgreSQL, two members'
stores syncing by hand (`sync_once`): an observation edited in place, a supersede link made
later and a project shared again after the pull cursor passed its rows each reach the
teammate as a new record would, once, with nothing doubled."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from claude_mem.records import Observation
from claude_mem.store import Database, supersede
from claude_mem.store import team as team_store
from claude_mem.store.observations import insert_observation
from claude_mem.team import admin, embedded, pg, schema
from claude_mem.team.sync import TeamSync
from claude_mem.vocabulary import HISTORY_SOURCE
from tests.store_helpers import found, observation, session
from tests.team_pg import TeamDatabase

RULE = "retries with backoff in the fetch loop"


@dataclass
class Member:
    db: Database
    sync: TeamSync

    def share(self, project: str = "proj") -> None:
        with self.db.write() as conn:
            team_store.share(conn, project)

    def decision(self, session_id: int, title: str, **fields: Any) -> int:
        values: dict[str, Any] = {"project": "proj", "narrative": f"rule: {title}",
                                  "concepts": ["subject:fetch.py"]}  # fmt: skip
        values.update(fields)
        with self.db.write() as conn:
            obs_id, _ = insert_observation(
                conn, Observation(session_id=session_id, type="decision", title=title, **values)
            )
        return obs_id

    def copies(self) -> list[tuple[str, str | None, str | None]]:
        """Teammates' rows here: (title, author, title of what supersedes it)."""
        rows = self.db.read().execute(
            """SELECT o.title, o.author, s.title FROM observations o
               LEFT JOIN observations s ON s.id = o.superseded_by
               WHERE o.origin_id IS NOT NULL ORDER BY o.title"""
        )
        return [(str(r[0]), r[1], r[2]) for r in rows]


@pytest.fixture
def team(
    db: Database, team_db: TeamDatabase, unique_name: Callable[[str], str], tmp_path: Path
) -> Iterator[tuple[Member, Member]]:
    """Alice (the test's store) and Bob (a store of his own, another machine) in one team."""
    name = unique_name("team")
    admin.init(team_db.owner_url, name)
    alice = admin.add_member(team_db.owner_url, unique_name("alice"), name)
    bob = admin.add_member(team_db.owner_url, unique_name("bob"), name)
    bob_db = Database(tmp_path / "bob" / "claude-mem.db")
    members = Member(db, TeamSync(db, alice)), Member(bob_db, TeamSync(bob_db, bob))
    members[1].sync.machine = "bob-machine"
    try:
        yield members
    finally:
        for member in members:
            member.sync.stop()
        bob_db.close()


def records(team_db: TeamDatabase) -> list[tuple[Any, ...]]:
    with pg.connect(team_db.owner_url, autocommit=True) as conn:
        return conn.execute(
            "SELECT r.title, count(w.seq) FROM claude_mem.records r"
            " LEFT JOIN claude_mem.record_words w ON w.seq = r.seq GROUP BY r.title ORDER BY 1"
        ).fetchall()


def test_an_observation_edited_in_place_reaches_the_teammate_as_an_update(
    team: tuple[Member, Member], team_db: TeamDatabase
) -> None:
    alice, bob = team
    alice.share()
    sid = session(alice.db)
    first = alice.decision(sid, f"use {RULE}")
    alice.sync.sync_once()
    bob.sync.sync_once()
    assert [title for title, _, _ in bob.copies()] == [f"use {RULE}"]

    # The session decides again: its earlier decision takes the new content, in place.
    later = alice.decision(sid, f"drop {RULE}", narrative=f"rule: no {RULE}")
    with alice.db.write() as conn:
        assert supersede.settle(conn, later) == first
    alice.sync.sync_once()
    bob.sync.sync_once()
    assert [title for title, _, _ in bob.copies()] == [f"drop {RULE}"]  # the same row, edited
    assert records(team_db) == [(f"drop {RULE}", 1)]  # rewritten, its words with it
    alice.sync.sync_once()
    bob.sync.sync_once()
    assert [title for title, _, _ in bob.copies()] == [f"drop {RULE}"]


def test_a_supersede_link_made_later_reaches_the_teammate(
    team: tuple[Member, Member], team_db: TeamDatabase
) -> None:
    """Alice reads her project's git history after Bob's session decided otherwise: her
    history decision is superseded by Bob's, and Bob learns it."""
    alice, bob = team
    alice.share()
    bob.share()
    bob.decision(session(bob.db), f"no {RULE}", created_at=2_000_000_000_000)
    bob.sync.sync_once()
    alice.sync.sync_once()
    history = session(alice.db, "git:proj", platform="git")
    with alice.db.write() as conn:
        old, _ = insert_observation(conn, Observation(
            session_id=history, project="proj", type="decision", title=f"use {RULE}",
            narrative=f"rule: {RULE}", concepts=["subject:fetch.py"], source=HISTORY_SOURCE,
            created_at=1_000_000_000_000,
        ))  # fmt: skip
        supersede.settle_in_time(conn, old)
    assert found(alice.db.read().execute(
        "SELECT s.title FROM observations o JOIN observations s ON s.id = o.superseded_by"
        " WHERE o.id = ?", (old,)).fetchone())[0] == f"no {RULE}"  # fmt: skip
    alice.sync.sync_once()
    bob.sync.sync_once()
    assert [(title, by) for title, _, by in bob.copies()] == [(f"use {RULE}", f"no {RULE}")]
    assert team_store.outbox_size(bob.db.read()) == 0  # the team's link is not sent back


def test_a_project_shared_again_is_pulled_from_its_start(
    team: tuple[Member, Member], team_db: TeamDatabase
) -> None:
    """Alice stops sharing a project, her later work elsewhere moves Bob's cursor past its
    rows, and she shares it again: Bob pulls it, once."""
    alice, bob = team
    alice.share()
    sid = session(alice.db)
    alice.decision(sid, "kept in proj")
    alice.sync.sync_once()
    with alice.db.write() as conn:
        team_store.unshare(conn, "proj")
    alice.sync.sync_once()  # nobody shares it now: nobody reads its rows
    alice.share("other")
    alice.decision(session(alice.db, "s-2", project="other"), "in other", project="other")
    alice.sync.sync_once()
    bob.sync.sync_once()
    assert [title for title, _, _ in bob.copies()] == ["in other"]

    alice.share()
    alice.sync.sync_once()
    bob.sync.sync_once()
    assert [title for title, _, _ in bob.copies()] == ["in other", "kept in proj"]
    bob.sync.sync_once()
    assert [title for title, _, _ in bob.copies()] == ["in other", "kept in proj"]
    assert records(team_db) == [("in other", 1), ("kept in proj", 1)]


def test_a_server_schema_older_than_this_version_says_how_to_update_it(
    db: Database,
    team_server: embedded.EmbeddedServer,
    unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server set up by an earlier claude-mem takes no rewrites: the sync says what the
    owner runs, and works once it has."""
    server = TeamDatabase(team_server, unique_name("older"))
    with pg.connect(team_server.url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{server.name}"')
    try:
        with monkeypatch.context() as older:
            older.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:-1])
            admin.init(server.owner_url, "core")
        sync = TeamSync(db, admin.add_member(server.owner_url, unique_name("alice"), "core"))
        try:
            with db.write() as conn:
                team_store.share(conn, "proj")
            observation(db, session(db), title="waits for the update")
            with pytest.raises(schema.TeamSchemaError, match="claude-mem team init OWNER_URL"):
                sync.sync_once()
            assert team_store.outbox_size(db.read()) == 1  # kept for the next round
            assert admin.init(server.owner_url, "core") == [schema.MIGRATIONS[-1].name]
            sync.sync_once()
            assert team_store.outbox_size(db.read()) == 0
        finally:
            sync.stop()
    finally:
        with pg.connect(team_server.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{server.name}" WITH (FORCE)')


def test_a_link_pointed_elsewhere_before_its_push_goes_as_the_newest_one(
    team: tuple[Member, Member], team_db: TeamDatabase
) -> None:
    alice, bob = team
    alice.share()
    sid = session(alice.db)
    old, first, second = (alice.decision(sid, title) for title in ("old", "first", "second"))
    with alice.db.write() as conn:
        for successor in (first, second):  # two links of one row wait in one batch
            conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?",
                         (successor, old))  # fmt: skip
    alice.sync.sync_once()
    assert team_store.outbox_size(alice.db.read()) == 0
    bob.sync.sync_once()
    assert [(title, by) for title, _, by in bob.copies()] == [
        ("first", None), ("old", "second"), ("second", None),
    ]  # fmt: skip
