"""Supersede on a real database: amended decisions, reverts, unrelated rules, one decision per
discussion, and the conservative rule for units of work."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_mem.pipeline.local.decisions import decision
from claude_mem.pipeline.providers.base import Turn
from claude_mem.records import Observation, ToolUse
from claude_mem.store import Database
from claude_mem.store.observations import get_observation, insert_observation
from claude_mem.store.supersede import settle
from claude_mem.store.tool_uses import link_observation, record_tool_use
from tests.store_helpers import found, observation, session


@pytest.fixture
def db(data_dir: Path) -> Iterator[Database]:
    database = Database()
    yield database
    database.close()


def _said(db: Database, session_id: int, prompt: str, reply: str = "Understood.") -> int:
    """A decision turn as the consumer stores it: the draft inserted, then settled."""
    draft = found(decision(Turn(prompt_number=1, prompt=prompt, reply=reply)))
    fields = {name: getattr(draft, name) for name in Observation.__struct_fields__
              if hasattr(draft, name) and name != "source_event_ids"}  # fmt: skip
    with db.write() as conn:
        obs_id, _ = insert_observation(
            conn, Observation(session_id=session_id, project="proj", **fields)
        )
        return settle(conn, obs_id)


def _row(db: Database, obs_id: int) -> dict[str, Any]:
    return found(get_observation(db.read(), obs_id))


def _current(db: Database) -> list[str]:
    rows = db.read().execute(
        "SELECT title FROM observations WHERE superseded_by IS NULL ORDER BY id"
    )
    return [row[0] for row in rows]


def test_an_amended_decision_supersedes_the_old_one_in_a_later_session(db: Database) -> None:
    old = _said(db, session(db, "s-1"), "no — timeouts are retried twice, never more")
    new = _said(db, session(db, "s-2"), "From now on we retry timeouts three times.")
    assert new != old
    assert _row(db, old)["superseded_by"] == new  # kept, with the link
    assert _row(db, new)["superseded_by"] is None


def test_a_revert_supersedes_again_and_is_current(db: Database) -> None:
    first = _said(db, session(db, "s-1"), "always write the header row in exports")
    second = _said(db, session(db, "s-2"), "never write the header row in exports")
    third = _said(db, session(db, "s-3"), "Actually, always write the header row in exports.")
    assert _row(db, first)["superseded_by"] == second
    assert _row(db, second)["superseded_by"] == third
    assert _current(db) == ["Always write the header row in exports."]


def test_unrelated_decisions_are_untouched(db: Database) -> None:
    sid = session(db, "s-1")
    rules = [
        _said(db, sid, "no — timeouts are retried twice, never more"),
        _said(db, session(db, "s-2"), "keep the header row even when empty"),
        _said(db, session(db, "s-3"), "never commit generated files to the repo"),
        _said(db, session(db, "s-4"), "always run the tests before committing"),
        _said(db, session(db, "s-5"), "in src/export.py, `write_rows` must always quote ids"),
        _said(db, session(db, "s-6"), "in src/export.py, `read_rows` must always quote ids"),
    ]
    assert len(set(rules)) == len(rules)
    assert all(_row(db, r)["superseded_by"] is None for r in rules)


def test_another_projects_decision_is_never_superseded(db: Database) -> None:
    theirs = session(db, "s-other", project="other")
    other = observation(db, theirs, project="other", type="decision",
                        title="Keep the header row even when empty")  # fmt: skip
    mine = _said(db, session(db, "s-1"), "don't write the header row when the export is empty")
    assert _row(db, other)["superseded_by"] is None
    assert _row(db, mine)["superseded_by"] is None


def test_a_discussion_in_one_session_leaves_one_current_decision(db: Database) -> None:
    earlier = _said(db, session(db, "s-0"), "we should always retry timeouts five times")
    sid = session(db, "s-1")
    first = _said(db, sid, "timeouts should be retried three times, always",
                  "Three retries it is, in `fetch_page`.")  # fmt: skip
    assert _row(db, earlier)["superseded_by"] == first
    second = _said(db, sid, "no — timeouts are retried twice, never more",
                   "Two retries, then the error surfaces.")  # fmt: skip
    assert second == first  # folded: the discussion's row now states the final rule
    row = _row(db, first)
    assert row["title"] == "Timeouts are retried twice, never more"
    assert "Two retries" in row["narrative"]
    assert "Earlier in the discussion: Timeouts should be retried three times" in row["narrative"]
    assert "Symbol: fetch_page" in row["facts"]
    mine = db.read().execute(
        "SELECT count(*) FROM observations WHERE session_id = ? AND type = 'decision'", (sid,)
    )
    assert mine.fetchone()[0] == 1
    assert _current(db) == ["Timeouts are retried twice, never more"]
    assert _row(db, earlier)["superseded_by"] == first  # the older link still holds
    hits = db.read().execute(
        "SELECT rowid FROM observations_fts WHERE observations_fts MATCH 'twice'"
    )
    assert [r[0] for r in hits] == [first]  # the index follows the folded content


def test_a_fold_keeps_the_tool_events_of_the_folded_turn(db: Database) -> None:
    sid = session(db, "s-1")
    first = _said(db, sid, "keep the header row even when empty")
    with db.write() as conn:
        obs_id, _ = insert_observation(conn, Observation(
            session_id=sid, project="proj", type="decision",
            title="Keep the header row, even for an empty export",
            concepts=["decision", "subject:header row"],
        ))  # fmt: skip
        row_id, _ = record_tool_use(
            conn, ToolUse(session_id=sid, tool_use_id="toolu_1", tool_name="Edit")
        )
        link_observation(conn, row_id, obs_id)
        assert settle(conn, obs_id) == first
    assert get_observation(db.read(), obs_id) is None
    linked = db.read().execute("SELECT observation_id FROM tool_uses WHERE id = ?", (row_id,))
    assert linked.fetchone()[0] == first


def test_settle_is_idempotent_and_leaves_other_types_alone(db: Database) -> None:
    sid = session(db, "s-1")
    old = _said(db, sid, "keep the header row even when empty")
    with db.write() as conn:
        assert settle(conn, old) == old
        assert settle(conn, 999_999) == 999_999
    finding = observation(db, sid, type="discovery", title="The header row is kept when empty")
    with db.write() as conn:
        assert settle(conn, finding) == finding
    assert _row(db, old)["superseded_by"] is None


def _unit(db: Database, sid: int, title: str, **fields: Any) -> int:
    values = {"type": "bugfix", "title": title, "files_modified": ["src/invoicer/total.py"]}
    obs_id = observation(db, sid, **(values | fields))
    with db.write() as conn:
        return settle(conn, obs_id)


def test_a_unit_supersedes_an_older_unit_only_when_clearly_the_same(db: Database) -> None:
    old = _unit(db, session(db, "s-1"), "invoice_total rounds each line half up before summing")
    sid = session(db, "s-2")
    other_type = _unit(db, sid, "invoice_total rounds each line half up before summing",
                       type="refactor")  # fmt: skip
    other_file = _unit(db, sid, "invoice_total rounds each line half up before summing",
                       files_modified=["src/invoicer/tax.py"])  # fmt: skip
    log_like = _unit(db, sid, "Edited src/invoicer/total.py: added 3 lines")
    log_again = _unit(db, sid, "Edited src/invoicer/total.py: added 5 lines")
    assert all(
        _row(db, i)["superseded_by"] is None for i in (old, other_type, other_file, log_like)
    )
    assert _row(db, log_again)["superseded_by"] is None
    new = _unit(db, sid, "invoice_total now rounds each line half up, then sums")
    assert _row(db, old)["superseded_by"] == new
