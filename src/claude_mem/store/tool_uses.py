"""Raw tool events, kept so a compression can be replayed and traced back to its evidence."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from claude_mem.store.rows import clean, dump_json, now_ms


def record_tool_use(
    conn: sqlite3.Connection,
    *,
    session_id: int,
    tool_use_id: str,
    tool_name: str,
    tool_input: object = None,
    tool_response: object = None,
    cwd: str | None = None,
    prompt_number: int | None = None,
    agent_type: str | None = None,
    agent_id: str | None = None,
    redact: bool = True,
    now: int | None = None,
) -> tuple[int, bool]:
    """Store a tool event once per (session, tool_use_id); returns (id, created)."""
    row = conn.execute(
        """INSERT INTO tool_uses (
               session_id, tool_use_id, tool_name, tool_input, tool_response, cwd,
               prompt_number, agent_type, agent_id, created_at
           ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (session_id, tool_use_id) DO NOTHING RETURNING id""",
        (
            session_id,
            tool_use_id,
            clean(tool_name, redact),
            dump_json(tool_input, redact),
            dump_json(tool_response, redact),
            clean(cwd, redact) or None,
            prompt_number,
            clean(agent_type, redact) or None,
            clean(agent_id, redact) or None,
            now or now_ms(),
        ),
    ).fetchone()
    if row is not None:
        return int(row[0]), True
    existing = conn.execute(
        "SELECT id FROM tool_uses WHERE session_id = ? AND tool_use_id = ?",
        (session_id, tool_use_id),
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
