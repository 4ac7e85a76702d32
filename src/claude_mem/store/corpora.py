"""Knowledge corpora: a named filter, what it selected, its rendering and its agent session.

A corpus is derived data (rebuilt from observations at will), but it lives in the database
rather than in loose files so backups, restores and one writer cover it like everything else.
Text the user supplies (description, filter values) is privacy-cleaned here; the rendering is
made of already-clean observations and is cleaned again anyway, so nothing private is stored
whatever the caller did.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from claude_mem.privacy import clean_value
from claude_mem.store.rows import clean, now_ms


@dataclass(slots=True)
class Corpus:
    name: str
    description: str = ""
    filter: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    system_prompt: str = ""
    observation_ids: list[int] = field(default_factory=list)
    rendered: str = ""
    session_id: str | None = None
    session_provider: str | None = None
    created_at: int = 0
    updated_at: int = 0


def _corpus(row: sqlite3.Row | None) -> Corpus | None:
    if row is None:
        return None
    return Corpus(
        name=row["name"],
        description=row["description"],
        filter=json.loads(row["filter"]),
        stats=json.loads(row["stats"]),
        system_prompt=row["system_prompt"],
        observation_ids=[int(i) for i in json.loads(row["observation_ids"])],
        rendered=row["rendered"],
        session_id=row["session_id"],
        session_provider=row["session_provider"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def save(conn: sqlite3.Connection, corpus: Corpus, *, redact: bool = True) -> Corpus:
    """Insert or replace `corpus` (keeping its first creation time); returns what was stored.

    Replacing a corpus clears its agent session: the session was primed with the old content.
    """
    now = now_ms()
    conn.execute(
        """INSERT INTO corpora (name, description, filter, stats, system_prompt,
               observation_ids, rendered, session_id, session_provider, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?)
           ON CONFLICT (name) DO UPDATE SET
               description = excluded.description, filter = excluded.filter,
               stats = excluded.stats, system_prompt = excluded.system_prompt,
               observation_ids = excluded.observation_ids, rendered = excluded.rendered,
               session_id = NULL, session_provider = NULL, updated_at = excluded.updated_at""",
        (
            corpus.name,
            clean(corpus.description, redact),
            json.dumps(clean_value(corpus.filter, redact=redact), ensure_ascii=False),
            json.dumps(corpus.stats, ensure_ascii=False),
            clean(corpus.system_prompt, redact),
            json.dumps(corpus.observation_ids),
            clean(corpus.rendered, redact),
            corpus.created_at or now,
            now,
        ),
    )
    stored = get(conn, corpus.name)
    assert stored is not None
    return stored


def get(conn: sqlite3.Connection, name: str) -> Corpus | None:
    return _corpus(conn.execute("SELECT * FROM corpora WHERE name = ?", (name,)).fetchone())


def list_all(conn: sqlite3.Connection) -> list[Corpus]:
    rows = conn.execute("SELECT * FROM corpora ORDER BY name")
    return [c for c in (_corpus(r) for r in rows) if c is not None]


def names(conn: sqlite3.Connection) -> list[str]:
    return [row[0] for row in conn.execute("SELECT name FROM corpora ORDER BY name")]


def delete(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("DELETE FROM corpora WHERE name = ?", (name,)).rowcount > 0


def set_session(
    conn: sqlite3.Connection, name: str, session_id: str | None, provider: str | None
) -> bool:
    """Remember (or, with None, forget) the agent session primed with this corpus."""
    cursor = conn.execute(
        "UPDATE corpora SET session_id = ?, session_provider = ? WHERE name = ?",
        (session_id, provider if session_id else None, name),
    )
    return cursor.rowcount > 0
