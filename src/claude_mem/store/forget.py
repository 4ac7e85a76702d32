"""Forgetting a whole project: its sessions and everything recorded in them.

Deleting the sessions cascades to their prompts, observations, summaries, tool uses, queue
rows and token usage; the full-text and vector rows follow by triggers (schema.py). Rows that
carry the project's name under another project's session go too, and what was read of its
git history (a later import reads it again).
"""

from __future__ import annotations

import sqlite3

from claude_mem.store import git_history
from claude_mem.store.stats import USER_SESSION

COUNTED = (
    ("sessions", f"SELECT count(*) FROM sessions WHERE project = ? AND {USER_SESSION}"),
    (
        "prompts",
        "SELECT count(*) FROM user_prompts WHERE session_id IN "
        "(SELECT id FROM sessions WHERE project = ?)",
    ),
    ("observations", "SELECT count(*) FROM observations WHERE project = ?"),
    ("summaries", "SELECT count(*) FROM session_summaries WHERE project = ?"),
)


def project_counts(conn: sqlite3.Connection, project: str) -> dict[str, int]:
    """What forgetting `project` would delete: sessions, prompts, observations, summaries."""
    return {name: int(conn.execute(sql, (project,)).fetchone()[0]) for name, sql in COUNTED}


def forget_project(conn: sqlite3.Connection, project: str) -> dict[str, int]:
    """Delete everything recorded for `project` (exact name; a worktree `parent/wt` is its own
    project); returns what was deleted, all zero when the project was unknown."""
    counts = project_counts(conn, project)
    conn.execute("DELETE FROM observations WHERE project = ?", (project,))
    conn.execute("DELETE FROM session_summaries WHERE project = ?", (project,))
    conn.execute("DELETE FROM sessions WHERE project = ?", (project,))
    git_history.forget(conn, project)
    return counts
