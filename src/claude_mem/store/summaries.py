"""Session summaries: what a session asked for, learned, finished and left to do."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from claude_mem.store.rows import clean, newest_first, now_ms

SUMMARY_FIELDS = ("request", "investigated", "learned", "completed", "next_steps", "notes")


@dataclass(frozen=True, slots=True)
class NewSummary:
    session_id: int
    project: str
    request: str = ""
    investigated: str = ""
    learned: str = ""
    completed: str = ""
    next_steps: str = ""
    notes: str = ""
    prompt_number: int | None = None
    discovery_tokens: int = 0
    generated_by: str | None = None
    created_at: int | None = None


def insert_summary(conn: sqlite3.Connection, summary: NewSummary, *, redact: bool = True) -> int:
    fields = [clean(getattr(summary, name), redact) for name in SUMMARY_FIELDS]
    row = conn.execute(
        f"""INSERT INTO session_summaries (
                session_id, project, {", ".join(SUMMARY_FIELDS)},
                prompt_number, discovery_tokens, generated_by, created_at
            ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
        (
            summary.session_id,
            clean(summary.project, redact),
            *fields,
            summary.prompt_number,
            max(0, summary.discovery_tokens),
            summary.generated_by,
            summary.created_at or now_ms(),
        ),
    ).fetchone()
    return int(row[0])


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
