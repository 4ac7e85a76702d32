"""Decisions from whole chats (tests/fixtures/chats/decisions.toml): each turn through the real
local compressor, its drafts stored and settled on a real database as the consumer does, so a
discussion over several turns leaves the rule as last agreed. Hesitations, questions, options,
bug reports, filler and rules the agent never took leave none."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_mem.pipeline.local import compress_events
from claude_mem.pipeline.providers.base import SessionContext, ToolEvent, Turn
from claude_mem.records import Observation
from claude_mem.store import Database
from claude_mem.store.observations import insert_observation
from claude_mem.store.supersede import settle
from tests.store_helpers import session

CHATS = tomllib.loads(
    (Path(__file__).parent / "fixtures" / "chats" / "decisions.toml").read_text("utf-8")
)["session"]


@pytest.fixture
def db(data_dir: Path) -> Iterator[Database]:
    database = Database()
    yield database
    database.close()


def _edit(number: int) -> ToolEvent:
    """A change the agent made in the turn: what makes it a turn that worked."""
    return ToolEvent(
        tool_use_row_id=number,
        tool_name="Edit",
        tool_input={"file_path": "/repo/src/app.py", "old_string": "a = 1", "new_string": "a = 2"},
        tool_response={"filePath": "/repo/src/app.py"},
        cwd="/repo",
        prompt_number=number,
    )


def _replay(db: Database, chat: dict[str, Any]) -> list[dict[str, Any]]:
    """The chat's current decisions after every turn was compressed and stored."""
    sid = session(db, chat["id"])
    prompts: list[str] = []
    for number, raw in enumerate(chat["turn"], start=1):
        prompts.append(raw["prompt"])
        turn = Turn(prompt_number=number, prompt=raw["prompt"], reply=raw["reply"])
        ctx = SessionContext(session_id=sid, project="proj", platform="claude-code",
                             cwd="/repo", prompts=tuple(prompts), turn=turn)  # fmt: skip
        events = [_edit(number)] if raw.get("worked") else []
        for draft in compress_events(events, ctx):
            fields = {name: getattr(draft, name) for name in Observation.__struct_fields__
                      if hasattr(draft, name) and name != "source_event_ids"}  # fmt: skip
            with db.write() as conn:
                obs_id, _ = insert_observation(
                    conn, Observation(session_id=sid, project="proj", **fields)
                )
                settle(conn, obs_id)
    rows = db.read().execute(
        """SELECT title, facts FROM observations WHERE session_id = ? AND type = 'decision'
           AND superseded_by IS NULL ORDER BY id""",
        (sid,),
    )
    return [{"title": row[0], "facts": row[1]} for row in rows]


@pytest.mark.parametrize("chat", CHATS, ids=[chat["id"] for chat in CHATS])
def test_a_chat_leaves_the_rules_as_last_agreed_and_nothing_else(
    db: Database, chat: dict[str, Any]
) -> None:
    decisions = _replay(db, chat)
    assert [row["title"] for row in decisions] == chat["decisions"]
    for fact in chat.get("subject", []):  # named anywhere in the discussion
        assert fact in decisions[0]["facts"]
