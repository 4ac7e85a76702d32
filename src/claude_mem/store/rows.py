"""Small conversions shared by the table modules: time, JSON lists, rows to dicts."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from typing import Any

import msgspec

from claude_mem.privacy import clean_text, clean_value
from claude_mem.records import KINDS, columns
from claude_mem.store.limits import truncate_value

JSON_LIST_FIELDS = frozenset(c.name for kind in KINDS for c in columns(kind) if c.shape == "list")


def now_ms() -> int:
    return int(time.time() * 1000)


def safe_text(text: str) -> str:
    """`text` with lone surrogates (from JSON like "\\ud800") replaced, so SQLite can store it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def clean(text: str | None, redact: bool) -> str:
    """Privacy-clean one text field; None becomes ''."""
    return safe_text(clean_text(text or "", redact=redact))


def dump_json(value: object, redact: bool) -> str:
    """A JSON-like value privacy-cleaned (keys and strings), then cut to the size limits, and
    serialised for storage."""
    return safe_text(
        json.dumps(truncate_value(clean_value(value, redact=redact)), ensure_ascii=False)
    )


def clean_list(items: Iterable[str] | None, redact: bool) -> list[str]:
    """Clean each item and drop the ones that were entirely private or empty."""
    cleaned = (clean(str(item), redact) for item in items or ())
    return [item for item in cleaned if item]


def dump_list(items: list[str]) -> str:
    return json.dumps(items, ensure_ascii=False)


def row_dict(row: sqlite3.Row | None) -> dict[str, Any] | None:
    """A row as a dict, with JSON list columns decoded."""
    if row is None:
        return None
    data = dict(row)
    for key in JSON_LIST_FIELDS.intersection(data):
        data[key] = json_list(data[key])
    return data


def json_list(text: str | None) -> Any:
    """A JSON list column decoded (msgspec: every search's hits decode two), [] when
    unreadable."""
    try:
        return msgspec.json.decode(text or "")
    except (msgspec.DecodeError, TypeError):
        return []


def row_dicts(rows: Iterable[sqlite3.Row]) -> list[dict[str, Any]]:
    return [d for d in (row_dict(r) for r in rows) if d is not None]


def newest_first(
    conn: sqlite3.Connection,
    table: str,
    *,
    projects: tuple[str, ...] = (),
    limit: int = 20,
    offset: int = 0,
    time_column: str = "created_at",
) -> list[dict[str, Any]]:
    """A page of `table`'s rows, newest first, optionally limited to some projects."""
    where = f"WHERE project IN ({', '.join('?' * len(projects))})" if projects else ""
    rows = conn.execute(
        f"SELECT * FROM {table} {where} ORDER BY {time_column} DESC, id DESC LIMIT ? OFFSET ?",
        (*projects, limit, offset),
    )
    return row_dicts(rows)


def of_session(conn: sqlite3.Connection, table: str, session_id: int) -> list[dict[str, Any]]:
    """All of a session's rows in `table`, oldest first."""
    rows = conn.execute(
        f"SELECT * FROM {table} WHERE session_id = ? ORDER BY created_at, id", (session_id,)
    )
    return row_dicts(rows)
