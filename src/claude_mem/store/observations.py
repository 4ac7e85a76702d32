"""Observations: the compressed, typed memories that search and context injection read."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from msgspec.structs import replace

from claude_mem.records import Observation
from claude_mem.store.context_queries import records
from claude_mem.store.rows import newest_first, now_ms, row_dict, row_dicts
from claude_mem.store.write import cleaned, insert, update


def content_hash(obs: Observation) -> str:
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
    conn: sqlite3.Connection, obs: Observation, *, redact: bool = True
) -> tuple[int, bool]:
    """Store `obs` once per session; returns (id, created). Same content → existing id."""
    obs = cleaned(obs, redact)
    obs = replace(obs, type=obs.type or "discovery")
    created_at = obs.created_at or now_ms()
    obs = replace(
        obs,
        content_hash=content_hash(obs),
        discovery_tokens=max(0, obs.discovery_tokens),
        created_at=created_at,
        valid_from=obs.valid_from or created_at,
    )
    new_id = insert(conn, obs, "ON CONFLICT (session_id, content_hash) DO NOTHING")
    if new_id is not None:
        return new_id, True
    existing = conn.execute(
        "SELECT id FROM observations WHERE session_id = ? AND content_hash = ?",
        (obs.session_id, obs.content_hash),
    ).fetchone()
    return int(existing[0]), False


def replace_observation(
    conn: sqlite3.Connection,
    observation_id: int,
    obs: Observation,
    names: Iterable[str],
    *,
    redact: bool = True,
) -> bool:
    """Observation `observation_id` takes `obs`'s `names` fields in place (its id, session,
    links and tool events stay; its vector goes, to be made again from the new text): a
    teammate's record its author edited. Whether it changed; same content is no change, and
    so is content its session holds in another row already."""
    obs = cleaned(obs, redact)
    obs = replace(obs, content_hash=content_hash(obs))
    clash = conn.execute(
        "SELECT 1 FROM observations o JOIN observations other"
        " ON other.session_id = o.session_id AND other.content_hash = ?"
        " WHERE o.id = ?",
        (obs.content_hash, observation_id),
    ).fetchone()
    if clash:
        return False
    update(conn, obs, observation_id, [*names, "content_hash"])
    conn.execute("DELETE FROM vectors WHERE kind = 'observation' AND row_id = ?", (observation_id,))
    return True


def get_observation(conn: sqlite3.Connection, observation_id: int) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM observations WHERE id = ?", (observation_id,)).fetchone()
    return row_dict(row)


def get_observations(conn: sqlite3.Connection, ids: list[int]) -> list[dict[str, Any]]:
    """Observations by id, in the order the ids were given (missing ids skipped)."""
    by_id = records(conn, "observations", ids)
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
