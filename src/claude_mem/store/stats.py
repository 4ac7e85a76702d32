"""Counts across the store, for /api/stats, `claude-mem status` and the viewer."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from claude_mem.store import queue

COUNTED_TABLES = ("sessions", "user_prompts", "observations", "session_summaries", "tool_uses")


def table_counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {
        table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        for table in COUNTED_TABLES
    }


def projects(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every project with its session and observation counts, most recently active first."""
    rows = conn.execute(
        """SELECT s.project AS name, count(DISTINCT s.id) AS sessions,
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
