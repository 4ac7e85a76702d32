"""`claude-mem export` / `claude-mem import FILE`: memory as JSON Lines (see `records`).

Export streams rows in id order, sessions first, from one read transaction (a consistent
snapshot even while the worker writes). Import reads and validates the whole input before
writing anything, so a damaged file is refused with its line number and changes nothing, and
so is one that holds fewer (or more) records than its header counts (a truncated copy), unless
the caller takes what is there (`partial`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

import msgspec

from claude_mem.store import transfer
from claude_mem.store.db import Database
from claude_mem.text import counted
from claude_mem.transfer.apply import ImportStats, apply
from claude_mem.transfer.records import (
    FORMAT,
    VERSION,
    Header,
    ObservationRecord,
    PromptRecord,
    Record,
    SessionRecord,
    SummaryRecord,
)

# kind → (table, record type); rows are written in this order, sessions first
_TABLES: dict[str, tuple[str, type[Record]]] = {
    "session": ("sessions", SessionRecord),
    "prompt": ("user_prompts", PromptRecord),
    "observation": ("observations", ObservationRecord),
    "summary": ("session_summaries", SummaryRecord),
}
_encoder = msgspec.json.Encoder()
_record_decoder = msgspec.json.Decoder(Record)


class ImportFailed(ValueError):
    """Input that cannot be imported; the message names the line and the problem."""


def _record(kind: str, row: dict[str, Any]) -> Record:
    record_type = _TABLES[kind][1]
    names = set(record_type.__struct_fields__)
    if kind == "prompt":
        row = {**row, "is_private": bool(row["is_private"])}
    return record_type(**{k: v for k, v in row.items() if k in names})


def export(
    db: Database,
    out: IO[bytes],
    *,
    projects: tuple[str, ...] = (),
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Write the header and every record (of `projects`, or all) to `out`; the counts."""
    conn = db.read()
    conn.execute("BEGIN")  # one snapshot for the counts and the rows
    try:
        counts = {
            kind: transfer.count(conn, table, projects) for kind, (table, _) in _TABLES.items()
        }
        header = Header(format=FORMAT, version=VERSION, exported_at=int(time.time() * 1000),
                        projects=list(projects), counts=counts)  # fmt: skip
        out.write(_encoder.encode(header) + b"\n")
        if on_total is not None:
            on_total(sum(counts.values()))
        for kind, (table, _) in _TABLES.items():
            for n, row in enumerate(transfer.rows(conn, table, projects), start=1):
                out.write(_encoder.encode(_record(kind, row)) + b"\n")
                if progress is not None and n % 100 == 0:
                    progress(100)
            if progress is not None:
                progress(counts[kind] % 100)
    finally:
        conn.execute("COMMIT")
    return counts


def read(lines: Iterable[bytes | str]) -> tuple[Header, list[Record]]:
    """The header and every record, validated; ImportFailed names the first bad line."""
    numbered: Iterator[tuple[int, bytes | str]] = (
        (n, line) for n, line in enumerate(lines, start=1) if line.strip()
    )
    first = next(numbered, None)
    if first is None:
        raise ImportFailed("the input is empty")
    try:
        header = msgspec.json.decode(first[1], type=Header)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ImportFailed(f"line {first[0]}: not a claude-mem-py export header ({exc})") from None
    if header.format != FORMAT:
        raise ImportFailed(f"line {first[0]}: format {header.format!r} is not {FORMAT!r}")
    if header.version > VERSION:
        raise ImportFailed(
            f"this export is version {header.version}, written by a newer claude-mem-py; "
            f"this one reads up to version {VERSION}: upgrade it"
        )
    records: list[Record] = []
    for n, line in numbered:
        try:
            records.append(_record_decoder.decode(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise ImportFailed(f"line {n}: {exc}") from None
    return header, records


def mismatch(header: Header, records: Iterable[Record]) -> dict[str, dict[str, int]]:
    """Each kind whose records differ in number from the header's count: {"expected", "found"}.
    A header without counts (written by hand) promises nothing."""
    found = dict.fromkeys(header.counts, 0)
    for record in records:
        kind = str(record.__struct_config__.tag)
        found[kind] = found.get(kind, 0) + 1
    return {
        kind: {"expected": header.counts.get(kind, 0), "found": n}
        for kind, n in found.items()
        if header.counts and n != header.counts.get(kind, 0)
    }


def describe_mismatch(differ: dict[str, dict[str, int]]) -> str:
    """'3 of 4 observations missing, 1 summary more than its header counts' for people."""
    parts = []
    for kind, numbers in differ.items():
        expected, found = numbers["expected"], numbers["found"]
        if found < expected:
            parts.append(f"{expected - found} of {counted(expected, kind)} missing")
        else:
            extra = counted(found - expected, kind)
            parts.append(f"{extra} more than its header counts ({expected})")
    return ", ".join(parts)


def import_lines(
    db: Database,
    lines: Iterable[bytes | str],
    *,
    partial: bool = False,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
) -> ImportStats:
    """Validate everything, check it against the header's counts (a difference is an
    ImportFailed naming it, unless `partial`: then it is in the stats), then write it (see
    `apply`)."""
    header, records = read(lines)
    differ = mismatch(header, records)
    if differ and not partial:
        raise ImportFailed(
            f"the input is incomplete: {describe_mismatch(differ)} (a truncated copy?); "
            "nothing imported; `--partial` imports what it holds"
        )
    if on_total is not None:
        on_total(len(records))
    stats = apply(db, records, progress=progress)
    stats.mismatch = differ
    return stats
