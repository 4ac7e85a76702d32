"""Named migrations, applied in order, each in one transaction together with its record.

A database written by a newer version (migrations we don't know) is refused rather than
guessed at, and a non-empty database is copied aside before anything changes.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from claude_mem.store import schema


class SchemaError(RuntimeError):
    """The database cannot be brought to this version's schema; the message says why."""


@dataclass(frozen=True, slots=True)
class Migration:
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration("0001_sessions_and_prompts", schema.SESSIONS_AND_PROMPTS),
    Migration("0002_observations_and_summaries", schema.OBSERVATIONS_AND_SUMMARIES),
    Migration("0003_fulltext", schema.FULLTEXT),
    Migration("0004_tool_uses_and_queue", schema.TOOL_USES_AND_QUEUE),
    Migration("0005_token_usage", schema.TOKEN_USAGE),
    Migration("0006_vectors", schema.VECTORS),
    Migration("0007_corpora", schema.CORPORA),
    Migration("0008_observation_files", schema.OBSERVATION_FILES),
    Migration("0009_search_filters", schema.SEARCH_FILTERS),
    Migration("0010_observation_source", schema.OBSERVATION_SOURCE),
    Migration("0011_turns_and_supersede", schema.TURNS_AND_SUPERSEDE),
    Migration("0012_fulltext_stemmed", schema.FULLTEXT_STEMMED),
    Migration("0013_git_history", schema.GIT_HISTORY),
    Migration("0014_vector_text_hash", schema.VECTOR_TEXT_HASH),
    Migration("0015_transcript_recovery", schema.TRANSCRIPT_RECOVERY),
    Migration("0016_team", schema.TEAM),
    Migration("0017_team_updates", schema.TEAM_UPDATES),
    Migration("0018_decision_validity", schema.DECISION_VALIDITY),
)

_LEDGER = """CREATE TABLE IF NOT EXISTS schema_migrations (
    name TEXT PRIMARY KEY,
    applied_at INTEGER NOT NULL
)"""


def statements(script: str) -> list[str]:
    """Split a script into statements (trigger bodies included) without executescript's COMMIT."""
    found: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                found.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement: {buffer.strip()[:80]}")
    return found


def applied(conn: sqlite3.Connection) -> list[str]:
    """Names of applied migrations, in the order they were applied."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_migrations'"
    ).fetchone()
    if not exists:
        return []
    rows = conn.execute("SELECT name FROM schema_migrations ORDER BY applied_at, rowid")
    return [row[0] for row in rows]


def pending(conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    done = set(applied(conn))
    unknown = done - {m.name for m in migrations}
    if unknown:
        raise SchemaError(
            "this database was written by a newer claude-mem (unknown migrations: "
            + ", ".join(sorted(unknown))
            + "); upgrade claude-mem-py or point CLAUDE_MEM_DATA_DIR elsewhere"
        )
    return [m.name for m in migrations if m.name not in done]


def has_user_data(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
    ).fetchone()
    return bool(row[0])


def migrate(
    conn: sqlite3.Connection,
    *,
    migrations: Sequence[Migration] = MIGRATIONS,
    stop_before: str | None = None,
    backup: Callable[[sqlite3.Connection], Path] | None = None,
) -> list[str]:
    """Apply pending migrations (up to `stop_before`, for upgrade tests); returns their names.

    `conn` must be in autocommit mode (isolation_level=None) so each migration owns its
    transaction. `backup` is called once, before the first change, if the database isn't empty.
    """
    todo = pending(conn, migrations)
    if stop_before is not None:
        names = [m.name for m in migrations]
        if stop_before not in names:
            raise ValueError(f"unknown migration {stop_before!r}")
        todo = [n for n in todo if names.index(n) < names.index(stop_before)]
    if not todo:
        return []
    if backup is not None and has_user_data(conn):
        backup(conn)
    conn.execute(_LEDGER)
    by_name = {m.name: m for m in migrations}
    for name in todo:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements(by_name[name].sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (name, int(time.time() * 1000)),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return todo
