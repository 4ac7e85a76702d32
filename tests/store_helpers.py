"""Builders shared by the store tests."""

from __future__ import annotations

from typing import Any, TypeVar

from claude_mem.records import Observation
from claude_mem.store import Database
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session

T = TypeVar("T")


def found(row: T | None) -> T:
    """A row the test knows exists (a lookup returns None for a missing one)."""
    assert row is not None
    return row


def session(
    db: Database, host_id: str = "s-1", project: str = "proj", platform: str = "claude-code"
) -> int:
    with db.write() as conn:
        return ensure_session(conn, platform=platform, host_session_id=host_id, project=project)


def observation(db: Database, session_id: int, **fields: Any) -> int:
    values: dict[str, Any] = {"project": "proj", "type": "discovery", "title": "t"}
    values.update(fields)
    with db.write() as conn:
        obs_id, _ = insert_observation(conn, Observation(session_id=session_id, **values))
    return obs_id
