"""Raw tool events, kept so a compression can be replayed and traced back to its evidence."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from msgspec.structs import replace

from claude_mem.records import ToolUse
from claude_mem.store.rows import now_ms
from claude_mem.store.write import cleaned, insert


def record_tool_use(
    conn: sqlite3.Connection, event: ToolUse, *, redact: bool = True
) -> tuple[int, bool]:
    """Store a tool event once per (session, tool_use_id); returns (id, created). Its input and
    response are cleaned, then cut to the size limits."""
    event = replace(cleaned(event, redact), created_at=event.created_at or now_ms())
    new_id = insert(conn, event, "ON CONFLICT (session_id, tool_use_id) DO NOTHING")
    if new_id is not None:
        return new_id, True
    existing = conn.execute(
        "SELECT id FROM tool_uses WHERE session_id = ? AND tool_use_id = ?",
        (event.session_id, event.tool_use_id),
    ).fetchone()
    return int(existing[0]), False


def get_tool_use(conn: sqlite3.Connection, tool_use_row_id: int) -> dict[str, Any] | None:
    found = get_tool_uses(conn, [tool_use_row_id])
    return found[0] if found else None


def link_observation(conn: sqlite3.Connection, tool_use_row_id: int, observation_id: int) -> None:
    conn.execute(
        "UPDATE tool_uses SET observation_id = ? WHERE id = ?", (observation_id, tool_use_row_id)
    )


def get_tool_uses(conn: sqlite3.Connection, row_ids: list[int]) -> list[dict[str, Any]]:
    """Tool events by row id, oldest first, with their JSON decoded."""
    if not row_ids:
        return []
    marks = ", ".join("?" * len(row_ids))
    rows = conn.execute(
        f"SELECT * FROM tool_uses WHERE id IN ({marks}) ORDER BY created_at, id", row_ids
    ).fetchall()
    found = []
    for row in rows:
        data = dict(row)
        data["tool_input"] = json.loads(data["tool_input"])
        data["tool_response"] = json.loads(data["tool_response"])
        found.append(data)
    return found


def recent_for_session(conn: sqlite3.Connection, session_id: int, limit: int = 200) -> list[int]:
    """Row ids of a session's latest `limit` tool events, oldest first."""
    rows = conn.execute(
        "SELECT id FROM tool_uses WHERE session_id = ? ORDER BY created_at DESC, id DESC LIMIT ?",
        (session_id, limit),
    ).fetchall()
    return [int(r[0]) for r in reversed(rows)]


def known_ids(conn: sqlite3.Connection, session_id: int, tool_use_ids: list[str]) -> set[str]:
    """Which of `tool_use_ids` the session already holds."""
    found: set[str] = set()
    for at in range(0, len(tool_use_ids), 500):
        part = tool_use_ids[at : at + 500]
        rows = conn.execute(
            f"""SELECT tool_use_id FROM tool_uses
                WHERE session_id = ? AND tool_use_id IN ({", ".join("?" * len(part))})""",
            (session_id, *part),
        )
        found.update(str(row[0]) for row in rows)
    return found
