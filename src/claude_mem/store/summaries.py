"""Session summaries: what a session asked for, learned, finished and left to do.

A session has one summary of its own, kept up to date turn by turn (`replace_session_summary`):
its newer version is written and the earlier ones deleted in the same transaction, so search,
context, the viewer, export and team push all see one row per session (a shared project's
teammates get the new record and a forget of the old). The new row is written first, so its id
is always newer than any id it replaces and no id is ever reused.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from msgspec import convert
from msgspec.structs import replace

from claude_mem.records import Summary
from claude_mem.store.rows import newest_first, now_ms, of_session
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


def session_summaries(conn: sqlite3.Connection, session_id: int) -> list[Summary]:
    """The session's own summary rows, oldest first: one, or several per-turn rows written
    before summaries were kept per session (a teammate's pulled copies are not its own)."""
    rows = of_session(conn, "session_summaries", session_id)
    return [convert(row, Summary) for row in rows if row["origin_id"] is None]


def replace_session_summary(
    conn: sqlite3.Connection, summary: Summary, *, redact: bool = True
) -> tuple[int, list[int]]:
    """Store `summary` as its session's one summary: its earlier own rows are deleted once
    the new one is written (in the caller's transaction). The new id, and the ids deleted."""
    earlier = [row.id for row in session_summaries(conn, summary.session_id)]
    new_id = insert_summary(conn, summary, redact=redact)
    for old_id in earlier:
        delete_summary(conn, old_id)
    return new_id, earlier


def summarized(conn: sqlite3.Connection, session_id: int, prompt_number: int | None) -> bool:
    """Whether the session's summary already covers this turn (a re-sent Stop adds none)."""
    row = conn.execute(
        """SELECT 1 FROM session_summaries WHERE session_id = ? AND origin_id IS NULL
           AND (prompt_number IS ? OR prompt_number >= ?) LIMIT 1""",
        (session_id, prompt_number, prompt_number),
    ).fetchone()
    return row is not None


def delete_summary(conn: sqlite3.Connection, summary_id: int) -> bool:
    return conn.execute("DELETE FROM session_summaries WHERE id = ?", (summary_id,)).rowcount > 0
