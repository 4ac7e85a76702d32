"""Embedding vectors as float32 blobs beside the rows they describe.

SQLite stays the one source of truth (the worker's in-memory index is rebuilt from here), and
every vector carries the model id that made it, so a model change is detected and redone.
numpy is imported lazily: the CLI and store tests must not pay for it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING

from claude_mem.store.rows import now_ms
from claude_mem.store.search_queries import TABLES
from claude_mem.vocabulary import HISTORY_SOURCE

if TYPE_CHECKING:
    import numpy as np


# What gets embedded per kind: the fields a person would search by meaning. A commit's
# (source 'git') subtitle and facts are hashes, dates and paths: only its subject and its
# body's first paragraph are embedded (a body gives its reason first; full text searches all
# of it), so a long history is searchable by meaning sooner for little recall
# (bench/worker_embed_bench.py, bench/history_quality.py).
_TEXT_SQL: dict[str, str] = {
    "observation": "t.title, t.subtitle, t.narrative, t.facts, t.source",
    "summary": "t.request, t.learned, t.completed, t.next_steps",
    "prompt": "t.text",
}
# Private prompts keep their number but have no text; there is nothing to embed.
_ELIGIBLE: dict[str, str] = {
    "observation": "1",
    "summary": "1",
    "prompt": "t.is_private = 0 AND t.text != ''",
}


def _table(kind: str) -> str:
    try:
        return TABLES[kind]
    except KeyError:
        raise ValueError(f"unknown vector kind {kind!r}") from None


def _as_blob(vector: bytes | np.ndarray) -> tuple[bytes, int]:
    if isinstance(vector, bytes | bytearray | memoryview):
        blob = bytes(vector)
        if len(blob) % 4:
            raise ValueError("a vector blob must hold float32 values")
        return blob, len(blob) // 4
    import numpy as np  # noqa: PLC0415 - numpy only where vectors are used

    array = np.ascontiguousarray(vector, dtype="<f4").reshape(-1)
    return array.tobytes(), int(array.shape[0])


def text_hash(text: str) -> str:
    """Identity of an embedded text: rows with the same one share a vector (two clones of one
    history hold the same commit texts)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def upsert(
    conn: sqlite3.Connection,
    kind: str,
    row_id: int,
    model: str,
    vector: bytes | np.ndarray,
    *,
    digest: str | None = None,
) -> bool:
    """Store (or replace) one row's vector, with the `text_hash` of what it embeds; returns
    False if the row is gone (deleted while it was being embedded), so no orphan vector is
    ever written."""
    table = _table(kind)
    blob, dim = _as_blob(vector)
    cur = conn.execute(
        f"""INSERT INTO vectors (kind, row_id, model, dim, vector, created_at, text_hash)
            SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM {table} WHERE id = ?)
            ON CONFLICT (kind, row_id) DO UPDATE SET
                model = excluded.model, dim = excluded.dim, vector = excluded.vector,
                created_at = excluded.created_at, text_hash = excluded.text_hash""",
        (kind, row_id, model, dim, blob, now_ms(), digest, row_id),
    )
    return cur.rowcount > 0


def shared(conn: sqlite3.Connection, model: str, digests: Iterable[str]) -> dict[str, bytes]:
    """Vectors `model` already made for these text hashes (of any kind), by hash."""
    wanted = list(dict.fromkeys(digests))
    if not wanted:
        return {}
    rows = conn.execute(
        f"""SELECT text_hash, vector FROM vectors
            WHERE model = ? AND text_hash IN ({", ".join("?" * len(wanted))})""",
        (model, *wanted),
    ).fetchall()
    return {str(row[0]): bytes(row[1]) for row in rows}


def _text(kind: str, row: sqlite3.Row | tuple[object, ...]) -> str:
    values = list(row)
    if kind == "observation":
        title, subtitle, narrative, facts_json, source = values
        if source == HISTORY_SOURCE:
            reason = str(narrative or "").split("\n\n", 1)[0]
            return "\n".join(str(v) for v in (title, reason) if v)
        try:
            facts = json.loads(str(facts_json) or "[]")
        except ValueError:
            facts = []
        facts_text = "\n".join(str(f) for f in facts) if isinstance(facts, list) else ""
        values = [title, subtitle, narrative, facts_text]
    return "\n".join(str(v) for v in values if v)


def _missing_sql(kind: str, select: str) -> str:
    table = _table(kind)
    return f"""SELECT {select} FROM {table} t
        LEFT JOIN vectors v ON v.kind = '{kind}' AND v.row_id = t.id AND v.model = ?
        WHERE v.row_id IS NULL AND {_ELIGIBLE[kind]}"""


def missing(
    conn: sqlite3.Connection, kind: str, model: str, limit: int, below: int | None = None
) -> list[tuple[int, str]]:
    """Rows with no vector from `model`, newest first (recent work is searched most), with the
    text to embed; only ids under `below` if given (a caller walking a backlog resumes there
    instead of skipping every row it already embedded, which grows with the backlog)."""
    under = "" if below is None else f" AND t.id < {int(below)}"
    rows = conn.execute(
        _missing_sql(kind, f"t.id, {_TEXT_SQL[kind]}") + under + " ORDER BY t.id DESC LIMIT ?",
        (model, limit),
    ).fetchall()
    return [(int(row[0]), _text(kind, tuple(row)[1:])) for row in rows]


def has_records(conn: sqlite3.Connection) -> bool:
    """Whether anything is stored that vectors could describe (the embedder waits for it)."""
    found = conn.execute(
        f"SELECT {' OR '.join(f'EXISTS (SELECT 1 FROM {table})' for table in TABLES.values())}"
    ).fetchone()[0]
    return bool(found)


def count_missing(conn: sqlite3.Connection, kind: str, model: str) -> int:
    return int(conn.execute(_missing_sql(kind, "count(*)"), (model,)).fetchone()[0])


def load(conn: sqlite3.Connection, kind: str, model: str) -> tuple[list[int], np.ndarray]:
    """All of `model`'s vectors of `kind` as (ids, an (n, dim) float32 matrix)."""
    import numpy as np  # noqa: PLC0415 - numpy only where vectors are used

    _table(kind)
    rows = conn.execute(
        "SELECT row_id, dim, vector FROM vectors WHERE model = ? AND kind = ? ORDER BY row_id",
        (model, kind),
    ).fetchall()
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    dim = int(rows[0][1])
    kept = [row for row in rows if row[1] == dim and len(row[2]) == dim * 4]
    matrix = np.frombuffer(b"".join(row[2] for row in kept), dtype="<f4").reshape(len(kept), dim)
    return [int(row[0]) for row in kept], matrix.astype(np.float32, copy=True)


def ids(conn: sqlite3.Connection, kind: str, model: str) -> list[int]:
    """Row ids that have a vector from `model` (cheap: the index covers it)."""
    _table(kind)
    rows = conn.execute(
        "SELECT row_id FROM vectors WHERE model = ? AND kind = ?", (model, kind)
    ).fetchall()
    return [int(row[0]) for row in rows]


def count(conn: sqlite3.Connection, kind: str, model: str) -> int:
    _table(kind)
    return int(
        conn.execute(
            "SELECT count(*) FROM vectors WHERE model = ? AND kind = ?", (model, kind)
        ).fetchone()[0]
    )


def delete_other_models(conn: sqlite3.Connection, model: str) -> int:
    """Drop vectors made by any other model (they can't be compared with this one's)."""
    return conn.execute("DELETE FROM vectors WHERE model != ?", (model,)).rowcount


def delete_model(conn: sqlite3.Connection, model: str, kind: str | None = None) -> int:
    """Drop `model`'s vectors (of one kind, or all): the start of a full re-embed."""
    if kind is None:
        return conn.execute("DELETE FROM vectors WHERE model = ?", (model,)).rowcount
    _table(kind)
    return conn.execute("DELETE FROM vectors WHERE model = ? AND kind = ?", (model, kind)).rowcount


def reset(conn: sqlite3.Connection, model: str, kinds: Iterable[str], *, keep: bool) -> None:
    """The start of a reindex: other models' vectors go, and `model`'s of `kinds` unless
    `keep` (--resume); what is left missing is then embedded."""
    delete_other_models(conn, model)
    if not keep:
        for kind in kinds:
            delete_model(conn, model, kind)


def models(conn: sqlite3.Connection) -> dict[str, int]:
    """Vector count per model id (for status and doctor)."""
    rows = conn.execute("SELECT model, count(*) FROM vectors GROUP BY model").fetchall()
    return {str(row[0]): int(row[1]) for row in rows}
