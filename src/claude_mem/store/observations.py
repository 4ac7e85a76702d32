"""Observations: the compressed, typed memories that search and context injection read."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass, field, replace
from typing import Any

from claude_mem.store.rows import (
    clean,
    clean_list,
    dump_list,
    newest_first,
    now_ms,
    row_dict,
    row_dicts,
)


@dataclass(frozen=True, slots=True)
class NewObservation:
    session_id: int
    project: str
    type: str
    title: str = ""
    subtitle: str = ""
    narrative: str = ""
    facts: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    files_modified: list[str] = field(default_factory=list)
    prompt_number: int | None = None
    discovery_tokens: int = 0
    agent_type: str | None = None
    agent_id: str | None = None
    generated_by: str | None = None
    created_at: int | None = None

    def cleaned(self, redact: bool) -> NewObservation:
        """The same observation with every text field privacy-cleaned."""
        return replace(
            self,
            project=clean(self.project, redact),
            type=clean(self.type, redact) or "discovery",
            title=clean(self.title, redact),
            subtitle=clean(self.subtitle, redact),
            narrative=clean(self.narrative, redact),
            facts=clean_list(self.facts, redact),
            concepts=clean_list(self.concepts, redact),
            files_read=clean_list(self.files_read, redact),
            files_modified=clean_list(self.files_modified, redact),
            agent_type=clean(self.agent_type, redact) or None,
            agent_id=clean(self.agent_id, redact) or None,
        )


def content_hash(obs: NewObservation) -> str:
    """Identity of an observation's content: the same memory stored twice in a session is one."""
    material = json.dumps(
        [
            obs.type,
            obs.title,
            obs.subtitle,
            obs.narrative,
            obs.facts,
            obs.concepts,
            obs.files_read,
            obs.files_modified,
        ],
        ensure_ascii=False,
    )
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def insert_observation(
    conn: sqlite3.Connection, obs: NewObservation, *, redact: bool = True
) -> tuple[int, bool]:
    """Store `obs` once per session; returns (id, created). Same content → existing id."""
    obs = obs.cleaned(redact)
    digest = content_hash(obs)
    row = conn.execute(
        """
        INSERT INTO observations (
            session_id, project, type, title, subtitle, narrative, facts, concepts,
            files_read, files_modified, prompt_number, discovery_tokens, content_hash,
            agent_type, agent_id, generated_by, created_at
        ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (session_id, content_hash) DO NOTHING
        RETURNING id
        """,
        (
            obs.session_id,
            obs.project,
            obs.type,
            obs.title,
            obs.subtitle,
            obs.narrative,
            dump_list(obs.facts),
            dump_list(obs.concepts),
            dump_list(obs.files_read),
            dump_list(obs.files_modified),
            obs.prompt_number,
            max(0, obs.discovery_tokens),
            digest,
            obs.agent_type,
            obs.agent_id,
            obs.generated_by,
            obs.created_at or now_ms(),
        ),
    ).fetchone()
    if row is not None:
        return int(row[0]), True
    existing = conn.execute(
        "SELECT id FROM observations WHERE session_id = ? AND content_hash = ?",
        (obs.session_id, digest),
    ).fetchone()
    return int(existing[0]), False


def get_observation(conn: sqlite3.Connection, observation_id: int) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM observations WHERE id = ?", (observation_id,)).fetchone()
    return row_dict(row)


def get_observations(conn: sqlite3.Connection, ids: list[int]) -> list[dict[str, Any]]:
    """Observations by id, in the order the ids were given (missing ids skipped)."""
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    rows = row_dicts(conn.execute(f"SELECT * FROM observations WHERE id IN ({marks})", ids))
    by_id = {row["id"]: row for row in rows}
    return [by_id[i] for i in ids if i in by_id]


def list_observations(
    conn: sqlite3.Connection,
    *,
    projects: tuple[str, ...] = (),
    limit: int = 20,
    offset: int = 0,
) -> list[dict[str, Any]]:
    return newest_first(conn, "observations", projects=projects, limit=limit, offset=offset)


def delete_observation(conn: sqlite3.Connection, observation_id: int) -> bool:
    return conn.execute("DELETE FROM observations WHERE id = ?", (observation_id,)).rowcount > 0


def count_observations(conn: sqlite3.Connection, projects: tuple[str, ...] = ()) -> int:
    where = f"WHERE project IN ({', '.join('?' * len(projects))})" if projects else ""
    return int(conn.execute(f"SELECT count(*) FROM observations {where}", projects).fetchone()[0])


def observations_by_file(
    conn: sqlite3.Connection,
    file_paths: list[str],
    *,
    projects: tuple[str, ...] = (),
    limit: int = 40,
) -> list[dict[str, Any]]:
    """Observations that read or modified any of `file_paths` (exact values), newest first."""
    if not file_paths:
        return []
    marks = ", ".join("?" * len(file_paths))
    scope = f"AND o.project IN ({', '.join('?' * len(projects))})" if projects else ""
    rows = conn.execute(
        f"""SELECT o.* FROM observations o
            WHERE o.id IN (SELECT observation_id FROM observation_files WHERE path IN ({marks}))
            {scope}
            ORDER BY o.created_at DESC, o.id DESC LIMIT ?""",
        (*file_paths, *projects, limit),
    )
    return row_dicts(rows)
