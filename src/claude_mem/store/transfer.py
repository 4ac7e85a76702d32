"""SQL behind export and import: whole rows out, rows in under their natural keys.

Import is idempotent because every row is matched on what identifies it outside this
database, never on its id: a session by (platform, host session id), a prompt by (session,
prompt number), an observation by (session, content hash), a summary by (session, time,
prompt number). Text goes through the same privacy cleaning as every other write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

from claude_mem.privacy import is_fully_private
from claude_mem.store.rows import clean, row_dicts
from claude_mem.store.sessions import MAX_PROMPT_CHARS
from claude_mem.store.summaries import NewSummary, insert_summary

_PAGE = 500


def _scope(projects: tuple[str, ...]) -> tuple[str, list[str]]:
    """Sessions in `projects`, or holding an observation or summary of one of them."""
    if not projects:
        return "SELECT id FROM sessions", []
    marks = ", ".join("?" * len(projects))
    sql = f"""SELECT id FROM sessions WHERE project IN ({marks})
              UNION SELECT session_id FROM observations WHERE project IN ({marks})
              UNION SELECT session_id FROM session_summaries WHERE project IN ({marks})"""
    return sql, [*projects, *projects, *projects]


def _where(table: str, projects: tuple[str, ...]) -> tuple[str, list[str]]:
    if not projects:
        return "", []
    if table in ("observations", "session_summaries"):
        return f"WHERE project IN ({', '.join('?' * len(projects))})", list(projects)
    scope, params = _scope(projects)
    column = "id" if table == "sessions" else "session_id"
    return f"WHERE {column} IN ({scope})", params


def count(conn: sqlite3.Connection, table: str, projects: tuple[str, ...] = ()) -> int:
    where, params = _where(table, projects)
    return int(conn.execute(f"SELECT count(*) FROM {table} {where}", params).fetchone()[0])


def rows(
    conn: sqlite3.Connection, table: str, projects: tuple[str, ...] = ()
) -> Iterator[dict[str, Any]]:
    """Every row of `table` in id order (in pages, so memory stays flat), JSON lists decoded."""
    where, params = _where(table, projects)
    joiner = "AND" if where else "WHERE"
    last = 0
    while True:
        page = row_dicts(
            conn.execute(
                f"SELECT * FROM {table} {where} {joiner} id > ? ORDER BY id LIMIT ?",
                (*params, last, _PAGE),
            )
        )
        yield from page
        if len(page) < _PAGE:
            return
        last = page[-1]["id"]


def import_session(conn: sqlite3.Connection, row: dict[str, Any], redact: bool) -> tuple[int, bool]:
    """(id, created) of the session for (platform, host_session_id); an existing one is kept
    as it is."""
    inserted = conn.execute(
        """INSERT INTO sessions (platform, host_session_id, project, cwd, status, first_prompt,
               prompt_count, started_at, updated_at, ended_at, end_reason)
           VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
           ON CONFLICT (platform, host_session_id) DO NOTHING RETURNING id""",
        (
            clean(row["platform"], redact),
            clean(row["host_session_id"], redact),
            clean(row["project"], redact),
            clean(row.get("cwd"), redact) or None,
            row["status"],
            clean(row.get("first_prompt"), redact)[:MAX_PROMPT_CHARS] or None,
            row["started_at"],
            row["updated_at"],
            row.get("ended_at"),
            clean(row.get("end_reason"), redact) or None,
        ),
    ).fetchone()
    if inserted is not None:
        return int(inserted[0]), True
    existing = conn.execute(
        "SELECT id FROM sessions WHERE platform = ? AND host_session_id = ?",
        (clean(row["platform"], redact), clean(row["host_session_id"], redact)),
    ).fetchone()
    return int(existing[0]), False


def import_prompt(
    conn: sqlite3.Connection,
    session_id: int,
    prompt_number: int,
    text: str,
    *,
    created_at: int,
    redact: bool,
    private: bool = False,
) -> bool:
    """Store prompt `prompt_number` of a session unless it has one; whether it was added.

    A prompt that is private as a whole keeps its number with no text, as at capture.
    """
    private = private or is_fully_private(text)
    stored = "" if private else clean(text, redact)[:MAX_PROMPT_CHARS]
    cursor = conn.execute(
        """INSERT INTO user_prompts (session_id, prompt_number, text, is_private, created_at)
           VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, prompt_number) DO NOTHING""",
        (session_id, prompt_number, stored, int(private), created_at),
    )
    if cursor.rowcount == 0:
        return False
    conn.execute(
        """UPDATE sessions SET prompt_count = max(prompt_count, ?),
               first_prompt = CASE WHEN ? = 1 AND ? != '' THEN ? ELSE first_prompt END
           WHERE id = ?""",
        (prompt_number, int(prompt_number == 1), stored, stored, session_id),
    )
    return True


def import_summary(conn: sqlite3.Connection, summary: NewSummary, redact: bool) -> bool:
    """Store `summary` unless its session already has one from that moment and turn."""
    exists = conn.execute(
        """SELECT 1 FROM session_summaries
           WHERE session_id = ? AND created_at = ? AND prompt_number IS ? LIMIT 1""",
        (summary.session_id, summary.created_at, summary.prompt_number),
    ).fetchone()
    if exists:
        return False
    insert_summary(conn, summary, redact=redact)
    return True
