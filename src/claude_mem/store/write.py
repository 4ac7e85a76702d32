"""Writing a record: its flagged fields cleaned and cut (`cleaned`), then one INSERT built from
its fields (`insert`; `update` rewrites a row in place). The table modules call both, so no
caller of the store can skip the privacy pass, and one pass serves every intake: the
worker's ingest cleans nothing itself."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterable
from typing import Any, TypeVar

import msgspec

from claude_mem.privacy import clean_value
from claude_mem.records import CLEANED, CUT, Column, Record, columns
from claude_mem.store.limits import RECORD_TEXT_CHARS, truncate_text, truncate_value
from claude_mem.store.rows import clean, clean_list, dump_list, safe_text

R = TypeVar("R", bound=Record)


def cleaned(record: R, redact: bool) -> R:
    """`record` with its CLEANED fields privacy-cleaned, then its CUT fields cut: in that
    order, so a cut can never split a private region and keep its tail."""
    changes: dict[str, object] = {}
    for column, cleans, cuts in _treated(type(record)):
        value = getattr(record, column.name)
        if cleans:
            value = _clean(column, value, redact)
        if cuts:
            value = (
                truncate_value(value)
                if column.shape == "json"
                else truncate_text(str(value), RECORD_TEXT_CHARS)
            )
        changes[column.name] = value
    return msgspec.structs.replace(record, **changes)


@functools.cache
def _treated(kind: type[Record]) -> tuple[tuple[Column, bool, bool], ...]:
    """The kind's columns the store cleans or cuts, with which (asked once per kind: the
    insert path runs for every stored row)."""
    marked = ((c, CLEANED in c.flags, CUT in c.flags) for c in columns(kind))
    return tuple(entry for entry in marked if entry[1] or entry[2])


def _clean(column: Column, value: object, redact: bool) -> object:
    if column.shape == "text":
        return clean(str(value or ""), redact)
    if column.shape == "optional_text":
        return clean(str(value or ""), redact) or None
    if column.shape == "list":
        return clean_list(value if isinstance(value, list) else None, redact)
    return clean_value(value, redact=redact)


def insert(
    conn: sqlite3.Connection,
    record: Record,
    conflict: str = "",
    params: tuple[object, ...] = (),
) -> int | None:
    """INSERT a `cleaned` record's fields (not `id`, which SQLite assigns) into its table, with
    an optional ON CONFLICT clause and its parameters; the new id, or None if the clause
    skipped the row. List fields are stored as JSON arrays, JSON values as JSON text."""
    row = insert_returning(conn, record, conflict, params, "id")
    return None if row is None else int(row[0])


def insert_returning(
    conn: sqlite3.Connection,
    record: Record,
    conflict: str,
    params: tuple[object, ...],
    returning: str,
) -> tuple[Any, ...] | None:
    """`insert`, with `returning`'s columns of the row written (None if skipped): what a
    caller would otherwise read back with a second statement."""
    stored, statement = _statement(type(record))
    row: tuple[Any, ...] | None = conn.execute(
        f"{statement} {conflict} RETURNING {returning}",
        (*(_stored(c, getattr(record, c.name)) for c in stored), *params),
    ).fetchone()
    return None if row is None else tuple(row)


def update(conn: sqlite3.Connection, record: Record, row_id: int, names: Iterable[str]) -> None:
    """UPDATE row `row_id` of a `cleaned` record's table with its `names` fields, stored as
    `insert` stores them."""
    by_name = {c.name: c for c in columns(type(record))}
    chosen = [by_name[name] for name in names]
    conn.execute(
        f"UPDATE {type(record).table} SET {', '.join(f'{c.name} = ?' for c in chosen)}"
        " WHERE id = ?",
        (*(_stored(c, getattr(record, c.name)) for c in chosen), row_id),
    )


@functools.cache
def _statement(kind: type[Record]) -> tuple[tuple[Column, ...], str]:
    """The columns an insert writes and its INSERT … VALUES, built once per kind."""
    stored = tuple(c for c in columns(kind) if c.name != "id")
    names = ", ".join(c.name for c in stored)
    marks = ", ".join("?" * len(stored))
    return stored, f"INSERT INTO {kind.table} ({names}) VALUES ({marks})"


def _stored(column: Column, value: object) -> object:
    if column.shape == "list":
        return dump_list(list(value) if isinstance(value, list) else [])
    if column.shape == "json":
        return safe_text(json.dumps(value, ensure_ascii=False))
    return value
