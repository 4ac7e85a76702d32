"""Agent sessions and their numbered user prompts."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Required, TypedDict, Unpack

from msgspec.structs import replace

from claude_mem.privacy import is_fully_private
from claude_mem.records import Prompt, Session
from claude_mem.store.rows import clean, newest_first, now_ms, row_dict, row_dicts
from claude_mem.store.write import cleaned, insert, insert_returning

# Stored prompts are capped: the prompt is a search key and a context line, not an archive.
MAX_PROMPT_CHARS = 16_000
PLACEHOLDER_PROJECTS = ("", "unknown-project")


@dataclass(frozen=True, slots=True)
class PromptResult:
    session_id: int
    prompt_number: int
    prompt_id: int
    private: bool
    text: str  # as stored
    duplicate: bool = False  # the same prompt just arrived: nothing was added


class SessionKeys(TypedDict, total=False):
    """Who a session is and what an event says of it: `ensure_session`'s and
    `ensure_session_turn`'s keywords (platform, host_session_id and project are required)."""

    platform: Required[str]
    host_session_id: Required[str]
    project: Required[str]
    cwd: str | None
    transcript_path: str | None
    redact: bool


def ensure_session(
    conn: sqlite3.Connection, *, now: int | None = None, **keys: Unpack[SessionKeys]
) -> int:
    """The id of the session for (platform, host id), created on first sight (idempotent).

    A later call may fill in a project the first one didn't know, but never renames one. It
    remembers where the host keeps the transcript; a new path (a host that started a new
    file) is read from its start.
    """
    return int(_upsert(conn, keys, now, "id")[0])


def ensure_session_turn(
    conn: sqlite3.Connection, **keys: Unpack[SessionKeys]
) -> tuple[int, int, bool]:
    """`ensure_session`, and in the same statement the session's current prompt number and
    whether that prompt was private: (id, prompt number, private). Every tool event asks."""
    sid, number, private = _upsert(conn, keys, None, _TURN)
    return int(sid), int(number), bool(private)


_TURN = """id, prompt_count, prompt_count > 0 AND EXISTS (
    SELECT 1 FROM user_prompts AS p
    WHERE p.session_id = sessions.id AND p.prompt_number = sessions.prompt_count
      AND p.is_private)"""


def _upsert(
    conn: sqlite3.Connection, keys: SessionKeys, now: int | None, returning: str
) -> tuple[Any, ...]:
    now = now or now_ms()
    session = Session(platform=keys["platform"], host_session_id=keys["host_session_id"],
                      project=keys["project"], cwd=keys.get("cwd"),
                      transcript_path=keys.get("transcript_path") or None, started_at=now,
                      updated_at=now)  # fmt: skip
    row = insert_returning(
        conn,
        cleaned(session, keys.get("redact", True)),
        f"""ON CONFLICT (platform, host_session_id) DO UPDATE SET
            updated_at = excluded.updated_at,
            project = CASE WHEN sessions.project IN (?, ?) THEN excluded.project
                           ELSE sessions.project END,
            cwd = COALESCE(sessions.cwd, excluded.cwd),
            transcript_path = COALESCE(excluded.transcript_path, sessions.transcript_path),
            transcript_offset = CASE WHEN {_NEW_PATH} THEN 0 ELSE sessions.transcript_offset END,
            transcript_turn = CASE WHEN {_NEW_PATH} THEN 0 ELSE sessions.transcript_turn END,
            recovered_offset = CASE WHEN {_NEW_PATH} THEN 0 ELSE sessions.recovered_offset END,
            recovered_turn = CASE WHEN {_NEW_PATH} THEN 0 ELSE sessions.recovered_turn END""",
        PLACEHOLDER_PROJECTS,
        returning,
    )
    assert row is not None  # DO UPDATE returns the existing row
    return row


_NEW_PATH = (
    "excluded.transcript_path IS NOT NULL"
    " AND excluded.transcript_path IS NOT sessions.transcript_path"
)


def turn_over(number: str) -> str:
    """SQL: whether the prompt turn `number` (an SQL expression) of session `s` is over: its
    Stop came, a later prompt began, or the session ended. The queue's ready rule and
    `turn_ended` share it."""
    return f"(s.status != 'active' OR s.closed_turn >= {number} OR s.prompt_count > {number})"


def turn_ended(conn: sqlite3.Connection, session_id: int, prompt_number: int) -> bool:
    """Whether the session's turn of `prompt_number` is over (`turn_over`)."""
    row = conn.execute(
        f"SELECT {turn_over(':number')} FROM sessions AS s WHERE s.id = :id",
        {"number": prompt_number, "id": session_id},
    ).fetchone()
    return bool(row and row[0])


def close_turn(conn: sqlite3.Connection, session_id: int, prompt_number: int) -> None:
    """The agent finished the turn of `prompt_number` (its Stop): the turn's events can be
    compressed as a whole."""
    conn.execute(
        "UPDATE sessions SET closed_turn = max(closed_turn, ?) WHERE id = ?",
        (prompt_number, session_id),
    )


def advance_transcript(
    conn: sqlite3.Connection, session_id: int, path: str, offset: int, turn: int
) -> None:
    """Record how far the transcript was turned into units, and the prompt turn that read
    ended (in the units' transaction, so a crash before it commits re-reads the same bytes);
    a path changed meanwhile is left alone."""
    conn.execute(
        """UPDATE sessions SET transcript_offset = ?, transcript_turn = ?
           WHERE id = ? AND transcript_path = ?""",
        (offset, turn, session_id, path),
    )


def find_session(conn: sqlite3.Connection, platform: str, host_session_id: str) -> int | None:
    row = conn.execute(
        "SELECT id FROM sessions WHERE platform = ? AND host_session_id = ?",
        (platform, host_session_id),
    ).fetchone()
    return int(row[0]) if row else None


def storable(prompt: Prompt, redact: bool) -> Prompt:
    """`prompt` cleaned and capped. One that is private as a whole (marked so, or all inside
    private tags) keeps its number but no text."""
    if prompt.is_private or is_fully_private(prompt.text):
        return replace(prompt, text="", is_private=1)
    kept = cleaned(prompt, redact)
    return replace(kept, text=kept.text[:MAX_PROMPT_CHARS], is_private=0)


def add_prompt(
    conn: sqlite3.Connection,
    session_id: int,
    text: str,
    *,
    redact: bool = True,
    now: int | None = None,
    duplicate_within_ms: int = 0,
) -> PromptResult:
    """Record the next prompt of a session.

    A prompt that was entirely private still takes its number (so later events of that turn
    can be recognised as private) but its text is never stored, not even as the session's
    first prompt. The same text as the session's last (public) prompt, less than
    `duplicate_within_ms` later, adds nothing (`duplicate`): hosts re-send prompts.
    """
    now = now or now_ms()
    prompt = storable(Prompt(session_id=session_id, text=text, created_at=now), redact)
    previous = last_prompt(conn, session_id) if duplicate_within_ms else None
    if (
        previous is not None
        and not previous["is_private"]
        and previous["text"] == prompt.text
        and now - previous["created_at"] < duplicate_within_ms
    ):
        return PromptResult(session_id, previous["prompt_number"], previous["id"], False,
                            prompt.text, duplicate=True)  # fmt: skip
    number = conn.execute(
        "SELECT COALESCE(MAX(prompt_number), 0) + 1 FROM user_prompts WHERE session_id = ?",
        (session_id,),
    ).fetchone()[0]
    prompt_id = insert(conn, replace(prompt, prompt_number=int(number)))
    assert prompt_id is not None  # no conflict clause: the row is always written
    conn.execute(
        """UPDATE sessions SET prompt_count = ?, updated_at = ?,
               first_prompt = COALESCE(first_prompt, NULLIF(?, ''))
           WHERE id = ?""",
        (number, now, prompt.text, session_id),
    )
    return PromptResult(session_id, int(number), prompt_id, bool(prompt.is_private), prompt.text)


def prompt_is_private(conn: sqlite3.Connection, session_id: int, prompt_number: int) -> bool:
    row = conn.execute(
        "SELECT is_private FROM user_prompts WHERE session_id = ? AND prompt_number = ?",
        (session_id, prompt_number),
    ).fetchone()
    return bool(row and row[0])


def last_prompt(conn: sqlite3.Connection, session_id: int) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT * FROM user_prompts WHERE session_id = ? ORDER BY prompt_number DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    return row_dict(row)


def complete_session(
    conn: sqlite3.Connection,
    session_id: int,
    *,
    reason: str = "",
    status: str = "completed",
    now: int | None = None,
) -> bool:
    now = now or now_ms()
    cursor = conn.execute(
        """UPDATE sessions SET status = ?, ended_at = ?, updated_at = ?, end_reason = ?
           WHERE id = ?""",
        (status, now, now, clean(reason, True)[:200], session_id),
    )
    return cursor.rowcount > 0


def get_session(conn: sqlite3.Connection, session_id: int) -> dict[str, Any] | None:
    return row_dict(conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone())


def sessions_with_host_id(conn: sqlite3.Connection, host_session_id: str) -> list[dict[str, Any]]:
    """Sessions the agent named `host_session_id` (one per platform), newest first."""
    rows = conn.execute(
        "SELECT * FROM sessions WHERE host_session_id = ? ORDER BY updated_at DESC, id DESC",
        (host_session_id,),
    )
    return row_dicts(rows)


def sessions_with_prefix(conn: sqlite3.Connection, prefix: str, limit: int) -> list[dict[str, Any]]:
    """Sessions whose agent's id starts with `prefix`, newest first (at most `limit`)."""
    rows = conn.execute(
        """SELECT * FROM sessions WHERE substr(host_session_id, 1, ?) = ?
           ORDER BY updated_at DESC, id DESC LIMIT ?""",
        (len(prefix), prefix, limit),
    )
    return row_dicts(rows)


def latest_active_session(conn: sqlite3.Connection) -> dict[str, Any] | None:
    """The session that has not ended and saw an event last: the one the user is most likely in."""
    row = conn.execute(
        "SELECT * FROM sessions WHERE status = 'active' ORDER BY updated_at DESC, id DESC LIMIT 1"
    ).fetchone()
    return row_dict(row)


def list_sessions(
    conn: sqlite3.Connection,
    *,
    projects: tuple[str, ...] = (),
    limit: int = 20,
    offset: int = 0,
) -> list[dict[str, Any]]:
    return newest_first(
        conn, "sessions", projects=projects, limit=limit, offset=offset, time_column="started_at"
    )


def list_prompts(
    conn: sqlite3.Connection,
    *,
    session_id: int | None = None,
    projects: tuple[str, ...] = (),
    limit: int = 20,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """Prompts newest first, with their session's project; private placeholders left out."""
    clauses = ["p.is_private = 0"]
    params: list[int | str] = []
    if session_id is not None:
        clauses.append("p.session_id = ?")
        params.append(session_id)
    if projects:
        clauses.append(f"s.project IN ({', '.join('?' * len(projects))})")
        params.extend(projects)
    rows = conn.execute(
        f"""SELECT p.*, s.project AS project, s.platform AS platform
            FROM user_prompts p JOIN sessions s ON s.id = p.session_id
            WHERE {" AND ".join(clauses)}
            ORDER BY p.created_at DESC, p.id DESC LIMIT ? OFFSET ?""",
        (*params, limit, offset),
    )
    return row_dicts(rows)


def delete_session(conn: sqlite3.Connection, session_id: int) -> bool:
    """Delete a session; its prompts, observations, summaries, tool uses and queue rows follow."""
    return conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0


def recovery_candidates(
    conn: sqlite3.Connection, *, platforms: tuple[str, ...], since: int, limit: int
) -> list[dict[str, Any]]:
    """Sessions whose transcript may hold events the hooks never delivered: not ended, with a
    transcript, seen since `since`; newest first."""
    marks = ", ".join("?" * len(platforms))
    rows = conn.execute(
        f"""SELECT * FROM sessions
            WHERE status = 'active' AND transcript_path IS NOT NULL AND updated_at >= ?
              AND platform IN ({marks})
            ORDER BY updated_at DESC, id DESC LIMIT ?""",
        (since, *platforms, limit),
    )
    return row_dicts(rows)


def prompts_after(conn: sqlite3.Connection, session_id: int, number: int) -> list[dict[str, Any]]:
    """A session's prompts numbered above `number`, in order (private ones without text)."""
    rows = conn.execute(
        """SELECT prompt_number, text, is_private FROM user_prompts
           WHERE session_id = ? AND prompt_number > ? ORDER BY prompt_number""",
        (session_id, number),
    )
    return row_dicts(rows)


def advance_recovery(
    conn: sqlite3.Connection, session_id: int, path: str, offset: int, turn: int
) -> None:
    """Record how far the transcript was checked for missed events, and the prompt turn in
    effect there; a path changed meanwhile is left alone."""
    conn.execute(
        """UPDATE sessions SET recovered_offset = ?, recovered_turn = ?
           WHERE id = ? AND transcript_path = ?""",
        (offset, turn, session_id, path),
    )
