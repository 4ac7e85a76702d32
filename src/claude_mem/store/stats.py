"""Counts across the store, for /api/stats, `claude-mem status` and the viewer."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from claude_mem.store import queue
from claude_mem.store.git_history import PLATFORM as HISTORY_PLATFORM
from claude_mem.store.rows import row_dicts
from claude_mem.store.team import TEAM_PLATFORM
from claude_mem.text import counted

# The records people count, by table name (and by the short name some answers use), in their
# words: "1 session, 2 prompts, 3 observations, 0 summaries".
NOUNS = {
    "sessions": "session", "user_prompts": "prompt", "prompts": "prompt",
    "observations": "observation", "session_summaries": "summary", "summaries": "summary",
}  # fmt: skip
MEMORY_TABLES = ("sessions", "user_prompts", "observations", "session_summaries")
COUNTED_TABLES = (*MEMORY_TABLES, "tool_uses")
# A project's git history is kept as observations of a session of its own (store.git_history),
# teammates' records in sessions named for theirs (store.team): no session the user had here,
# so sessions are counted, and listed, without them.
USER_SESSION = f"platform NOT IN ('{HISTORY_PLATFORM}', '{TEAM_PLATFORM}')"
_WHERE = {"sessions": f" WHERE {USER_SESSION}"}


def table_counts(
    conn: sqlite3.Connection, tables: tuple[str, ...] = COUNTED_TABLES
) -> dict[str, int]:
    return {
        table: int(
            conn.execute(f"SELECT count(*) FROM {table}{_WHERE.get(table, '')}").fetchone()[0]
        )
        for table in tables
    }


def recent_sessions(conn: sqlite3.Connection, limit: int) -> list[dict[str, Any]]:
    """The user's sessions that saw an event last, newest first (what `status` lists)."""
    rows = conn.execute(
        f"""SELECT id, host_session_id, project, platform, status, updated_at FROM sessions
            WHERE {USER_SESSION} ORDER BY updated_at DESC, id DESC LIMIT ?""",
        (limit,),
    )
    return row_dicts(rows)


def describe(counts: dict[str, int]) -> str:
    """`3 sessions, 1 prompt, ...`: record counts (keyed as in NOUNS) in people's words."""
    return ", ".join(counted(n, NOUNS[key]) for key, n in counts.items())


def projects(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every project with its session and observation counts, most recently active first."""
    rows = conn.execute(
        f"""SELECT s.project AS name,
                  count(DISTINCT CASE WHEN s.{USER_SESSION} THEN s.id END) AS sessions,
                  (SELECT count(*) FROM observations o WHERE o.project = s.project) AS observations,
                  max(s.updated_at) AS last_activity
           FROM sessions s GROUP BY s.project ORDER BY last_activity DESC"""
    )
    return [dict(row) for row in rows]


def file_bytes(db_path: Path) -> dict[str, int]:
    """The database's size on disk: the main file plus its -wal and -shm (a busy WAL can hold
    megabytes the main file doesn't show yet)."""
    sizes = {}
    for part, suffix in (("db", ""), ("wal", "-wal"), ("shm", "-shm")):
        try:
            sizes[part] = os.stat(f"{db_path}{suffix}").st_size
        except OSError:
            sizes[part] = 0
    return sizes


def snapshot(conn: sqlite3.Connection) -> dict[str, Any]:
    return {"counts": table_counts(conn), "queue": queue.counts(conn)}
