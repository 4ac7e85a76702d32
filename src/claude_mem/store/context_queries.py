"""The reads behind context injection, shaped for speed at 100k observations.

- newest rows across several projects (a worktree and its parent): each project's newest via
  its own index range, merged, instead of sorting every row of both projects; the current
  (not superseded) decisions the same way;
- observations that read or modified a file, through the `observation_files` index;
- sessions' memory only: the commits read from git history (`store.git_history`) are left out
  of both, since history is not what recent sessions did (search and the gate's commit part
  carry it);
- the few whole records a prompt-time injection quotes;
- how many commits of git history memory holds, for a project with nothing else.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from claude_mem.store.rows import row_dicts
from claude_mem.vocabulary import HISTORY_SOURCE

RECENT_TABLES = ("observations", "session_summaries")


def recent(
    conn: sqlite3.Connection,
    table: str,
    projects: tuple[str, ...],
    limit: int,
    *,
    decisions: bool = False,
) -> list[dict[str, Any]]:
    """The `limit` newest rows of `table` in any of `projects`, newest first. Superseded
    observations and commits are never among them; `decisions` keeps only observations of
    that type."""
    if table not in RECENT_TABLES:
        raise ValueError(f"not a per-project table: {table}")
    if not projects or limit <= 0:
        return []
    where = "project = ?"
    if table == "observations":
        where += f" AND superseded_by IS NULL AND source != '{HISTORY_SOURCE}'"
        where += " AND type = 'decision'" if decisions else ""
    one = (
        f"SELECT * FROM (SELECT * FROM {table} WHERE {where} "
        "ORDER BY created_at DESC, id DESC LIMIT ?)"
    )
    union = " UNION ALL ".join([one] * len(projects))
    params: list[object] = []
    for project in projects:
        params += [project, limit]
    rows = conn.execute(f"{union} ORDER BY created_at DESC, id DESC LIMIT ?", (*params, limit))
    return row_dicts(rows)


def observations_touching(
    conn: sqlite3.Connection, file_paths: list[str], *, projects: tuple[str, ...], limit: int
) -> list[dict[str, Any]]:
    """Sessions' observations (not commits) of `projects` that read or modified any of
    `file_paths` (exact strings), newest first. (`+project` keeps SQLite from scanning the
    project's index instead of looking the few paths up; bench/context_bench.py times the
    gate.)"""
    if not file_paths or not projects:
        return []
    paths = ", ".join("?" * len(file_paths))
    names = ", ".join("?" * len(projects))
    rows = conn.execute(
        f"""SELECT * FROM observations
            WHERE id IN (SELECT observation_id FROM observation_files WHERE path IN ({paths}))
              AND +project IN ({names}) AND source != '{HISTORY_SOURCE}'
            ORDER BY created_at DESC, id DESC LIMIT ?""",
        (*file_paths, *projects, limit),
    )
    return row_dicts(rows)


def records(conn: sqlite3.Connection, table: str, ids: list[int]) -> dict[int, dict[str, Any]]:
    """Whole rows of `table` (observations, session_summaries, user_prompts) by id: what
    prompt-time injection quotes from its few hits, and `observations.get_observations`."""
    if table not in (*RECENT_TABLES, "user_prompts"):
        raise ValueError(f"not a record table: {table}")
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    rows = row_dicts(conn.execute(f"SELECT * FROM {table} WHERE id IN ({marks})", ids))
    return {row["id"]: row for row in rows}


def commits_held(conn: sqlite3.Connection, projects: tuple[str, ...]) -> int:
    """The commits of `projects`' git history that memory holds (`git_history.commits`)."""
    if not projects:
        return 0
    names = ", ".join("?" * len(projects))
    row = conn.execute(
        f"SELECT coalesce(sum(commits), 0) FROM git_history WHERE project IN ({names})", projects
    ).fetchone()
    return int(row[0])
