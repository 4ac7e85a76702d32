"""The durable work queue: events wait here, committed, until they are compressed.

A row is claimed (status 'processing'), then either completed (deleted), retried later, or
after too many failures parked as 'dead' for a person to retry or drop. Rows claimed by a
process that died are released back to 'pending', so nothing accepted is ever lost.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from claude_mem.store.rows import clean, dump_json, now_ms
from claude_mem.store.sessions import turn_over

KINDS = ("observation", "summary")
MAX_ERROR_CHARS = 500


@dataclass(frozen=True, slots=True)
class QueueItem:
    id: int
    session_id: int
    kind: str
    dedup_key: str | None
    payload: dict[str, Any]
    attempts: int
    created_at: int


def enqueue(
    conn: sqlite3.Connection,
    session_id: int,
    kind: str,
    payload: dict[str, Any],
    *,
    dedup_key: str | None = None,
    redact: bool = True,
    now: int | None = None,
) -> tuple[int, bool]:
    """Queue work; the same (session, kind, dedup_key) twice is one row. Returns (id, created)."""
    if kind not in KINDS:
        raise ValueError(f"queue kind must be one of {', '.join(KINDS)}, not {kind!r}")
    now = now or now_ms()
    body = dump_json(payload, redact)
    row = conn.execute(
        """INSERT INTO queue (session_id, kind, dedup_key, payload, available_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (session_id, kind, dedup_key) DO NOTHING RETURNING id""",
        (session_id, kind, dedup_key, body, now, now),
    ).fetchone()
    if row is not None:
        return int(row[0]), True
    existing = conn.execute(
        "SELECT id FROM queue WHERE session_id = ? AND kind = ? AND dedup_key = ?",
        (session_id, kind, dedup_key),
    ).fetchone()
    return int(existing[0]), False


# A row is ready once its retry delay has passed; an observation row also waits for its
# prompt turn to end, so a turn is compressed as a whole: the agent's Stop closed it, a later
# prompt began, the session ended, or the session has been idle for `idle_ms`. Rows queued
# before turns were tracked carry no prompt number and are ready at once.
_READY = f"""status = 'pending' AND available_at <= :now AND (
    kind != 'observation'
    OR json_extract(payload, '$.prompt_number') IS NULL
    OR EXISTS (SELECT 1 FROM sessions AS s WHERE s.id = queue.session_id AND (
        s.updated_at <= :now - :idle_ms
        OR {turn_over("json_extract(queue.payload, '$.prompt_number')")})))"""


def claim(
    conn: sqlite3.Connection,
    *,
    limit: int = 10,
    session_id: int | None = None,
    now: int | None = None,
    idle_ms: int = 0,
) -> list[QueueItem]:
    """Mark up to `limit` ready rows as processing (oldest first) and return them."""
    now = now or now_ms()
    scope = "AND session_id = :session" if session_id is not None else ""
    rows = conn.execute(
        f"""UPDATE queue SET status = 'processing', attempts = attempts + 1, claimed_at = :now
            WHERE id IN (SELECT id FROM queue WHERE {_READY} {scope} ORDER BY id LIMIT :limit)
            RETURNING id, session_id, kind, dedup_key, payload, attempts, created_at""",
        {"now": now, "idle_ms": idle_ms, "session": session_id, "limit": limit},
    ).fetchall()
    items = [QueueItem(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6]) for r in rows]
    return sorted(items, key=lambda item: item.id)


def complete(conn: sqlite3.Connection, ids: list[int]) -> int:
    """Done: the rows leave the queue."""
    if not ids:
        return 0
    marks = ", ".join("?" * len(ids))
    return conn.execute(f"DELETE FROM queue WHERE id IN ({marks})", ids).rowcount


def fail(
    conn: sqlite3.Connection,
    item_id: int,
    error: str,
    *,
    max_attempts: int = 5,
    retry_in_ms: int = 1000,
    now: int | None = None,
) -> str:
    """Record a failure: back to 'pending' after `retry_in_ms`, or 'dead' past max_attempts."""
    now = now or now_ms()
    row = conn.execute("SELECT attempts FROM queue WHERE id = ?", (item_id,)).fetchone()
    if row is None:
        return "missing"
    status = "dead" if row[0] >= max_attempts else "pending"
    conn.execute(
        """UPDATE queue SET status = ?, last_error = ?, available_at = ?, claimed_at = NULL
           WHERE id = ?""",
        (status, clean(error, True)[:MAX_ERROR_CHARS], now + retry_in_ms, item_id),
    )
    return status


def release_stale(
    conn: sqlite3.Connection, *, older_than_ms: int = 0, now: int | None = None
) -> int:
    """Return rows claimed before `now - older_than_ms` to pending (their worker died)."""
    now = now or now_ms()
    return conn.execute(
        """UPDATE queue SET status = 'pending', claimed_at = NULL
           WHERE status = 'processing' AND claimed_at <= ?""",
        (now - older_than_ms,),
    ).rowcount


def retry_dead(conn: sqlite3.Connection, ids: list[int] | None = None) -> int:
    """Give dead rows another round of attempts."""
    scope, params = _ids_scope(ids)
    return conn.execute(
        f"""UPDATE queue SET status = 'pending', attempts = 0, available_at = ?
            WHERE status = 'dead' {scope}""",
        (now_ms(), *params),
    ).rowcount


def drop_dead(conn: sqlite3.Connection, ids: list[int] | None = None) -> int:
    scope, params = _ids_scope(ids)
    return conn.execute(f"DELETE FROM queue WHERE status = 'dead' {scope}", params).rowcount


def dead_ids(conn: sqlite3.Connection) -> list[int]:
    """Every dead-lettered row's id, oldest first."""
    return [
        int(r[0]) for r in conn.execute("SELECT id FROM queue WHERE status = 'dead' ORDER BY id")
    ]


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Rows per status, every status present (zero when empty)."""
    found = dict(conn.execute("SELECT status, count(*) FROM queue GROUP BY status").fetchall())
    return {status: int(found.get(status, 0)) for status in ("pending", "processing", "dead")}


def _ids_scope(ids: list[int] | None) -> tuple[str, tuple[int, ...]]:
    if ids is None:
        return "", ()
    return f"AND id IN ({', '.join('?' * len(ids))})", tuple(ids)


def ready_sessions(
    conn: sqlite3.Connection, *, now: int | None = None, limit: int = 64, idle_ms: int = 0
) -> list[int]:
    """Sessions with work that may be claimed now, oldest work first."""
    rows = conn.execute(
        f"""SELECT session_id FROM queue WHERE {_READY}
            GROUP BY session_id ORDER BY min(id) LIMIT :limit""",
        {"now": now or now_ms(), "idle_ms": idle_ms, "limit": limit},
    ).fetchall()
    return [int(r[0]) for r in rows]


def dead_items(conn: sqlite3.Connection, limit: int = 100) -> list[dict[str, Any]]:
    rows = conn.execute(
        """SELECT id, session_id, kind, dedup_key, attempts, last_error, created_at
           FROM queue WHERE status = 'dead' ORDER BY id LIMIT ?""",
        (limit,),
    )
    return [dict(row) for row in rows]
