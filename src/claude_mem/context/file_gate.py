"""The file-read gate: before a big file is read, a short timeline of what memory says about it.

Rules (the hook has already checked that the path is a regular file of at least
CLAUDE_MEM_FILE_GATE_MIN_BYTES): nothing when the file changed after its newest observation
(memory would describe older content); at most one observation per session (its newest);
ranked by relevance, an edit of the file above a read of it, and an observation that touched
few files above one that touched many; at most 15, shown oldest first, grouped by day.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from typing import Any

from claude_mem.context.timeline import index_lines, observation_row
from claude_mem.store.context_queries import observations_touching

FETCH_LIMIT = 40
SHOWN = 15


def path_forms(path: str, folders: Iterable[str | None]) -> list[str]:
    """How observations may have stored `path`: absolute, and relative to each folder it is in
    (the session's cwd, the project root)."""
    absolute = os.path.normpath(path)
    forms = [absolute]
    for folder in folders:
        if folder:
            base = os.path.normpath(folder)
            if absolute.startswith(base.rstrip("/") + "/"):
                forms.append(os.path.relpath(absolute, base))
    return list(dict.fromkeys(forms))


def score(obs: dict[str, Any], forms: set[str]) -> int:
    """2 for an edit of the file; 2 when the observation touched ≤ 3 files, 1 when ≤ 8."""
    touched = set(obs.get("files_read") or ()) | set(obs.get("files_modified") or ())
    points = 2 if forms & set(obs.get("files_modified") or ()) else 0
    if len(touched) <= 3:
        points += 2
    elif len(touched) <= 8:
        points += 1
    return points


def select(rows: list[dict[str, Any]], forms: set[str]) -> list[dict[str, Any]]:
    """The observations to show, oldest first, from `rows` (newest first)."""
    per_session: dict[int, dict[str, Any]] = {}
    for obs in rows:
        per_session.setdefault(int(obs["session_id"]), obs)
    ranked = sorted(per_session.values(), key=lambda obs: -score(obs, forms))  # stable
    return sorted(ranked[:SHOWN], key=lambda obs: (obs["created_at"], obs["id"]))


def file_timeline(
    conn: sqlite3.Connection,
    path: str,
    *,
    folders: Iterable[str | None],
    projects: tuple[str, ...],
    mtime_ms: int,
) -> str:
    """The timeline text for a Read of `path`, or "" when memory has nothing current."""
    forms = path_forms(path, folders)
    rows = observations_touching(conn, forms, projects=projects, limit=FETCH_LIMIT)
    if not rows or mtime_ms > int(rows[0]["created_at"]):
        return ""
    chosen = select(rows, set(forms))
    shown = min(forms, key=len)  # relative when the file is inside the project
    lines = [
        f"claude-mem: earlier sessions' memory of {shown} (the Read result is the current file; "
        "this is only history).",
        f'Details: get_observations([IDs]) | more: search("{shown}") | ID TIME TYPE TITLE',
    ]
    for heading, row, clock in index_lines([observation_row(obs) for obs in chosen]):
        if heading:
            lines.append(f"### {heading}")
        lines.append(f"{row.ident} {clock} {row.mark} {row.title}")
    return "\n".join(lines)
