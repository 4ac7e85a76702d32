"""A project's git history in the store: the commits read, and the observations they became.

Each project's commits are observations of one session (platform `git`, host id
`history:<project>`), so search, vectors, the file index and forgetting treat them as any
memory; `git_commits` remembers every commit read, kept or skipped, so a re-run reads only
new ones, and its `change_key` finds a commit again after a rebase or an amend gave it a new
hash. `git_history` holds, per project, the HEAD whose whole history was read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from claude_mem.store.rows import now_ms, row_dict, row_dicts
from claude_mem.store.sessions import ensure_session
from claude_mem.vocabulary import HISTORY_SOURCE

PLATFORM = "git"


@dataclass(frozen=True, slots=True)
class ReadCommit:
    """One commit as read: its observation (None when skipped, with the reason)."""

    sha: str
    change_key: str
    authored_at: int
    observation_id: int | None = None
    skipped: str | None = None


def history_session(conn: sqlite3.Connection, project: str, root: str) -> int:
    """The session that holds `project`'s commits (created on first use)."""
    session_id = ensure_session(
        conn, platform=PLATFORM, host_session_id=f"history:{project}", project=project, cwd=root
    )
    conn.execute(
        "UPDATE sessions SET status = 'completed' WHERE id = ? AND status != 'completed'",
        (session_id,),
    )
    return session_id


def known_shas(conn: sqlite3.Connection, project: str) -> set[str]:
    """Every commit hash of `project` already read."""
    rows = conn.execute("SELECT sha FROM git_commits WHERE project = ?", (project,))
    return {str(row[0]) for row in rows}


def by_change(
    conn: sqlite3.Connection, project: str, keys: Iterable[str]
) -> dict[str, list[ReadCommit]]:
    """The commits read before under these change keys that are memory now (a rebase's or an
    amend's originals, or other commits of the same author in the same second)."""
    wanted = list(dict.fromkeys(keys))
    found: dict[str, list[ReadCommit]] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        rows = conn.execute(
            f"""SELECT sha, change_key, authored_at, observation_id FROM git_commits
                WHERE project = ? AND change_key IN ({", ".join("?" * len(part))})
                  AND skipped IS NULL AND observation_id IS NOT NULL""",
            (project, *part),
        )
        for row in rows:
            read = ReadCommit(str(row[0]), str(row[1]), int(row[2]), int(row[3]))
            found.setdefault(read.change_key, []).append(read)
    return found


def remember(conn: sqlite3.Connection, project: str, commits: Iterable[ReadCommit]) -> None:
    """Record commits as read (a hash already known keeps its first record)."""
    conn.executemany(
        """INSERT INTO git_commits
               (project, sha, change_key, observation_id, skipped, authored_at)
           VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (project, sha) DO NOTHING""",
        [
            (project, c.sha, c.change_key, c.observation_id, c.skipped, c.authored_at)
            for c in commits
        ],
    )


def observation_titled(conn: sqlite3.Connection, session_id: int, title: str) -> int | None:
    """The newest commit observation of the history session with this title (what a
    `fixup!` commit amends)."""
    row = conn.execute(
        "SELECT id FROM observations WHERE session_id = ? AND title = ?"
        " ORDER BY created_at DESC LIMIT 1",
        (session_id, title),
    ).fetchone()
    return int(row[0]) if row else None


def fold(conn: sqlite3.Connection, project: str, shas: Iterable[str], observation_id: int) -> None:
    """`fixup!` commits read before their target: they point at it now."""
    conn.executemany(
        "UPDATE git_commits SET observation_id = ? WHERE project = ? AND sha = ?",
        [(observation_id, project, sha) for sha in shas],
    )


def drop_rewritten(
    conn: sqlite3.Connection, project: str, old: ReadCommit, replacement: int | None
) -> None:
    """A rebase or an amend gave `old` a new hash: its observation goes (`replacement`, the new
    one, takes over what pointed at it, as folded fixups) and the old hash stays known, as
    rewritten."""
    conn.execute(
        "UPDATE git_commits SET skipped = 'rewritten', observation_id = NULL"
        " WHERE project = ? AND sha = ?",
        (project, old.sha),
    )
    if replacement is not None:
        conn.execute(
            "UPDATE git_commits SET observation_id = ? WHERE project = ? AND observation_id = ?",
            (replacement, project, old.observation_id),
        )
    conn.execute("DELETE FROM observations WHERE id = ?", (old.observation_id,))


def has_session_decisions(conn: sqlite3.Connection, project: str) -> bool:
    """Whether `project` has decisions from sessions, that a commit's decision may settle
    against (asked once per batch: most histories are read before sessions decided much)."""
    row = conn.execute(
        f"""SELECT 1 FROM observations WHERE project = ? AND type = 'decision'
            AND source != '{HISTORY_SOURCE}' LIMIT 1""",
        (project,),
    ).fetchone()
    return row is not None


def state(conn: sqlite3.Connection, project: str) -> dict[str, Any] | None:
    """The project's history record: root, the HEAD read in full, commits kept, when."""
    return row_dict(
        conn.execute("SELECT * FROM git_history WHERE project = ?", (project,)).fetchone()
    )


def histories(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every project whose history was read: commits kept and when, newest first."""
    rows = conn.execute(
        "SELECT project, root, head, commits, refreshed_at FROM git_history"
        " ORDER BY refreshed_at DESC"
    )
    return row_dicts(rows)


def save_state(
    conn: sqlite3.Connection, project: str, root: str, head: str | None, *, now: int | None = None
) -> None:
    """Record that `head`'s history (None: only part of it) is read for `project`."""
    conn.execute(
        """INSERT INTO git_history (project, root, head, commits, refreshed_at)
           VALUES (?, ?, ?, (SELECT count(*) FROM git_commits WHERE project = ?
                             AND observation_id IS NOT NULL), ?)
           ON CONFLICT (project) DO UPDATE SET root = excluded.root, head = excluded.head,
               commits = excluded.commits, refreshed_at = excluded.refreshed_at""",
        (project, root, head, project, now or now_ms()),
    )


def commits_touching(
    conn: sqlite3.Connection,
    file_paths: list[str],
    *,
    projects: tuple[str, ...],
    limit: int,
    explained: bool = False,
) -> list[dict[str, Any]]:
    """Commit observations of `projects` that changed any of `file_paths` (exact strings),
    newest authored first, each with its `sha`; `explained` keeps only those whose message
    has a body (the rationale)."""
    if not file_paths or not projects:
        return []
    paths = ", ".join("?" * len(file_paths))
    names = ", ".join("?" * len(projects))
    body = " AND o.narrative != ''" if explained else ""
    rows = conn.execute(
        f"""SELECT o.*, g.sha AS sha FROM observations o
            JOIN git_commits g ON g.observation_id = o.id
            WHERE o.id IN (SELECT observation_id FROM observation_files WHERE path IN ({paths}))
              AND +o.project IN ({names}) AND o.source = '{HISTORY_SOURCE}'{body}
            ORDER BY o.created_at DESC, o.id DESC LIMIT ?""",
        (*file_paths, *projects, limit),
    )
    return row_dicts(rows)


def forget(conn: sqlite3.Connection, project: str) -> None:
    """Drop what was read of `project`'s history (its observations go with its sessions)."""
    conn.execute("DELETE FROM git_commits WHERE project = ?", (project,))
    conn.execute("DELETE FROM git_history WHERE project = ?", (project,))
