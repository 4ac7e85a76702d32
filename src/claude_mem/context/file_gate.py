"""The file-read gate: before a big file is read, a short timeline of what memory says about it.

Rules (the hook has already checked that the path is a regular file of at least
CLAUDE_MEM_FILE_GATE_MIN_BYTES), for sessions' observations: nothing when the file changed
after its newest observation (memory would describe older content); at most one observation
per session (its newest); ranked by relevance, an edit of the file above a read of it, and an
observation that touched few files above one that touched many; at most 15, shown oldest
first, grouped by day.

Then the commits that explain the file (the project's git history, `store.git_history`): at
most 3, those whose message has a body (the reason) above bare ones, shown newest first, each
as its subject and the first sentence of its body. A commit stays true however the file
changed since (a fresh clone's files are all newer than every commit), so the mtime rule does
not apply to them, and a file with commits alone still gets them.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Iterable
from typing import Any

from claude_mem.context.timeline import index_lines, observation_row
from claude_mem.store.context_queries import observations_touching
from claude_mem.store.git_history import commits_touching
from claude_mem.text import shorten

FETCH_LIMIT = 40
SHOWN = 15
COMMITS_SHOWN = 3
COMMIT_CHARS = 200  # one commit's line: subject, then the body's first sentence
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n\s*\n")


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
    shown = min(forms, key=len)  # relative when the file is inside the project
    parts = [
        _sessions_part(conn, forms, shown, projects=projects, mtime_ms=mtime_ms),
        _commits_part(conn, forms, shown, projects=projects),
    ]
    return "\n".join(part for part in parts if part)


def _sessions_part(
    conn: sqlite3.Connection,
    forms: list[str],
    shown: str,
    *,
    projects: tuple[str, ...],
    mtime_ms: int,
) -> str:
    rows = observations_touching(conn, forms, projects=projects, limit=FETCH_LIMIT)
    if not rows or mtime_ms > int(rows[0]["created_at"]):
        return ""
    chosen = select(rows, set(forms))
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


def _chosen_commits(
    explained: list[dict[str, Any]], newest: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The commits to show, newest first: those with a reason (`explained`), then bare ones
    from `newest` to fill up to COMMITS_SHOWN (both lists newest first)."""
    chosen = {int(c["id"]): c for c in explained[:COMMITS_SHOWN]}
    for commit in newest:
        if len(chosen) >= COMMITS_SHOWN:
            break
        chosen.setdefault(int(commit["id"]), commit)
    return sorted(chosen.values(), key=lambda c: (-int(c["created_at"]), -int(c["id"])))


def _commit_line(commit: dict[str, Any], *, last: bool) -> str:
    """`last changed in a1b2c3d (2023-04-02, #41): subject — the body's first sentence`."""
    day = time.strftime("%Y-%m-%d", time.gmtime(int(commit["created_at"]) / 1000))
    reason = _SENTENCE_END.split((commit.get("narrative") or "").strip(), maxsplit=1)[0]
    text = " — ".join(part for part in (commit.get("title") or "", reason) if part.strip())
    when = "last changed" if last else "changed"
    head = f"- {when} in {str(commit['sha'])[:7]} ({day}, #{commit['id']}): "
    return head + shorten(text, COMMIT_CHARS)


def _commits_part(
    conn: sqlite3.Connection, forms: list[str], shown: str, *, projects: tuple[str, ...]
) -> str:
    newest = commits_touching(conn, forms, projects=projects, limit=COMMITS_SHOWN)
    if not newest:
        return ""
    explained = commits_touching(
        conn, forms, projects=projects, limit=COMMITS_SHOWN, explained=True
    )
    chosen = _chosen_commits(explained, newest)
    lines = [
        f"claude-mem: git history of {shown}, the commits that explain it (newest first; "
        "get_observations([IDs]) for a whole commit):"
    ]
    lines += [_commit_line(c, last=c["id"] == newest[0]["id"]) for c in chosen]
    return "\n".join(lines)
