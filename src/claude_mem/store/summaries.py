"""Session summaries: what a session asked for, learned, finished and left to do."""

from __future__ import annotations

import sqlite3
from typing import Any

from msgspec.structs import replace

from claude_mem.records import Summary
from claude_mem.store.rows import newest_first, now_ms
from claude_mem.store.write import cleaned, insert


def insert_summary(conn: sqlite3.Connection, summary: Summary, *, redact: bool = True) -> int:
    summary = replace(
        cleaned(summary, redact),
        discovery_tokens=max(0, summary.discovery_tokens),
        created_at=summary.created_at or now_ms(),
    )
    new_id = insert(conn, summary)
    assert new_id is not None  # no conflict clause: the row is always written
    return new_id


def list_summaries(
    conn: sqlite3.Connection,
    *,
    projects: tuple[str, ...] = (),
    limit: int = 20,
    offset: int = 0,
) -> list[dict[str, Any]]:
    return newest_first(conn, "session_summaries", projects=projects, limit=limit, offset=offset)


def summarized(conn: sqlite3.Connection, session_id: int, prompt_number: int) -> bool:
    """Whether this turn of the session already has a summary (a re-sent Stop adds none)."""
    row = conn.execute(
        "SELECT 1 FROM session_summaries WHERE session_id = ? AND prompt_number IS ? LIMIT 1",
        (session_id, prompt_number),
    ).fetchone()
    return row is not None


def delete_summary(conn: sqlite3.Connection, summary_id: int) -> bool:
    return conn.execute("DELETE FROM session_summaries WHERE id = ?", (summary_id,)).rowcount > 0
