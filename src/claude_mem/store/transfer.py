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

from msgspec.structs import replace

from claude_mem.records import Prompt, Session, Summary
from claude_mem.store.rows import row_dicts
from claude_mem.store.sessions import MAX_PROMPT_CHARS, storable
from claude_mem.store.summaries import insert_summary
from claude_mem.store.write import cleaned, insert

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


def import_session(conn: sqlite3.Connection, session: Session, redact: bool) -> tuple[int, bool]:
    """(id, created) of the session for (platform, host_session_id); an existing one is kept
    as it is. Its prompt count follows the prompts imported into it."""
    kept = cleaned(session, redact)
    kept = replace(
        kept, prompt_count=0, first_prompt=(kept.first_prompt or "")[:MAX_PROMPT_CHARS] or None
    )
    new_id = insert(conn, kept, "ON CONFLICT (platform, host_session_id) DO NOTHING")
    if new_id is not None:
        return new_id, True
    existing = conn.execute(
        "SELECT id FROM sessions WHERE platform = ? AND host_session_id = ?",
        (kept.platform, kept.host_session_id),
    ).fetchone()
    return int(existing[0]), False


def import_prompt(conn: sqlite3.Connection, prompt: Prompt, redact: bool) -> bool:
    """Store the prompt unless its session has one with that number; whether it was added.

    A prompt that is private as a whole keeps its number with no text, as at capture.
    """
    prompt = storable(prompt, redact)
    if insert(conn, prompt, "ON CONFLICT (session_id, prompt_number) DO NOTHING") is None:
        return False
    conn.execute(
        """UPDATE sessions SET prompt_count = max(prompt_count, ?),
               first_prompt = CASE WHEN ? = 1 AND ? != '' THEN ? ELSE first_prompt END
           WHERE id = ?""",
        (prompt.prompt_number, int(prompt.prompt_number == 1), prompt.text, prompt.text,
         prompt.session_id),
    )  # fmt: skip
    return True


def import_summary(conn: sqlite3.Connection, summary: Summary, redact: bool) -> bool:
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


def link_superseded(conn: sqlite3.Connection, links: list[tuple[int, int]]) -> None:
    """Set each (newer id, older id) link on an older row that has none yet: a row this
    database already knows keeps the link it has."""
    conn.executemany(
        "UPDATE observations SET superseded_by = ? WHERE id = ? AND superseded_by IS NULL",
        [(newer, older) for newer, older in links if newer != older],
    )
