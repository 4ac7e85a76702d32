from __future__ import annotations

from pathlib import Path

from claude_mem.records import Summary, SummaryDraft, ToolUse
from claude_mem.store import Database
from claude_mem.store.observations import delete_observation
from claude_mem.store.summaries import insert_summary, list_summaries
from claude_mem.store.tool_uses import get_tool_use, link_observation, record_tool_use
from tests.store_helpers import found, observation, session


def test_tool_use_unique_per_session_and_round_trips_json(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        event = ToolUse(
            session_id=sid,
            tool_use_id="toolu_1",
            tool_name="Bash",
            tool_input={"command": "pytest -q", "nested": [1, {"x": None}]},
            tool_response={"stdout": "3 passed", "exit": 0},
            cwd="/w",
            prompt_number=1,
        )
        with db.write() as conn:
            first = record_tool_use(conn, event)
            again = record_tool_use(conn, event)
        assert first[1]
        assert again == (first[0], False)
        row = get_tool_use(db.read(), first[0])
        assert row is not None
        assert row["tool_input"] == event.tool_input
        assert row["tool_response"] == event.tool_response


def test_tool_use_strips_private_inside_json_values(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            row_id, _ = record_tool_use(
                conn,
                ToolUse(
                    session_id=sid,
                    tool_use_id="t",
                    tool_name="Read",
                    tool_input={"file_path": "a.py"},
                    tool_response="code <private>API_KEY=abc</private> more",
                ),
            )
        row = get_tool_use(db.read(), row_id)
        assert row is not None
        assert row["tool_response"] == "code  more"


def test_tool_use_link_survives_observation_delete(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        obs_id = observation(db, sid)
        with db.write() as conn:
            row_id, _ = record_tool_use(
                conn, ToolUse(session_id=sid, tool_use_id="t", tool_name="Edit")
            )
            link_observation(conn, row_id, obs_id)
            assert found(get_tool_use(conn, row_id))["observation_id"] == obs_id
            delete_observation(conn, obs_id)
            assert found(get_tool_use(conn, row_id))["observation_id"] is None


def test_summaries_insert_list_and_search(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db, project="p")
        with db.write() as conn:
            first = insert_summary(
                conn,
                Summary(
                    session_id=sid,
                    project="p",
                    request="fix login",
                    investigated="auth.py",
                    learned="exp is in seconds",
                    completed="fixed compare",
                    next_steps="add tests",
                    notes="<private>customer name</private>",
                    created_at=1000,
                ),
            )
            insert_summary(
                conn, Summary(session_id=sid, project="p", request="second", created_at=2000)
            )
        rows = list_summaries(db.read(), projects=("p",))
        assert [r["request"] for r in rows] == ["second", "fix login"]
        assert rows[1]["id"] == first
        assert rows[1]["notes"] == ""
        assert set(SummaryDraft.__struct_fields__) <= set(rows[0])
        hits = (
            db.read()
            .execute(
                "SELECT rowid FROM session_summaries_fts"
                " WHERE session_summaries_fts MATCH 'comparing'"  # stemmed: finds 'compare'
            )
            .fetchall()
        )
        assert [h[0] for h in hits] == [first]
