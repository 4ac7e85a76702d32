"""Writing imported records: sessions first, their ids mapped, everything under natural keys.

Records are written in batches, one transaction each, so a long import never holds the
writer for long (the worker keeps capturing meanwhile). A record whose session is not in
the input is counted as an orphan and skipped. Importing the same input twice adds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, cast

from msgspec.structs import replace

from claude_mem.store import transfer
from claude_mem.store.db import Database
from claude_mem.store.observations import insert_observation
from claude_mem.transfer.records import (
    KINDS,
    ObservationRecord,
    PromptRecord,
    Record,
    SessionRecord,
)

BATCH = 500


@dataclass(slots=True)
class ImportStats:
    imported: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    orphans: int = 0  # records whose session was not in the input
    session_ids: dict[int, int] = field(default_factory=dict)  # source id → our id
    observation_ids: dict[int, int] = field(default_factory=dict)  # source id → our id
    successors: dict[int, int] = field(default_factory=dict)  # our id → its source successor
    # kinds whose records differ from an export header's count (imported with --partial)
    mismatch: dict[str, dict[str, int]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"imported": self.imported, "skipped": self.skipped, "orphans": self.orphans,
                "mismatch": self.mismatch}  # fmt: skip


def _batches(records: Iterable[Record], size: int) -> Iterator[list[Record]]:
    it = iter(records)
    while chunk := list(islice(it, size)):
        yield chunk


def _write(conn: Any, record: Record, stats: ImportStats, redact: bool) -> bool | None:
    """Write one record; whether it was new (None: orphan)."""
    if isinstance(record, SessionRecord):
        our_id, created = transfer.import_session(conn, record, redact)
        stats.session_ids[record.id] = our_id
        return created
    session_id = stats.session_ids.get(record.session_id)
    if session_id is None:
        return None
    if isinstance(record, PromptRecord):
        return transfer.import_prompt(conn, replace(record, session_id=session_id), redact)
    if isinstance(record, ObservationRecord):
        ours = replace(record, session_id=session_id, superseded_by=None, valid_to=None)
        our_id, created = insert_observation(conn, ours, redact=redact)
        stats.observation_ids[record.id] = our_id
        if record.superseded_by is not None:
            stats.successors[our_id] = record.superseded_by
        return created
    return transfer.import_summary(conn, replace(record, session_id=session_id), redact)


def apply(
    db: Database,
    records: Iterable[Record],
    *,
    progress: Callable[[int], None] | None = None,
    batch: int = BATCH,
) -> ImportStats:
    """Write `records` (sessions before what refers to them) and count what was new."""
    stats = ImportStats()
    for chunk in _batches(records, batch):
        with db.write() as conn:
            for record in chunk:
                kind = cast(str, record.__struct_config__.tag)  # each Record's tag is a kind
                created = _write(conn, record, stats, db.redact_secrets)
                if created is None:
                    stats.orphans += 1
                elif created:
                    stats.imported[kind] += 1
                else:
                    stats.skipped[kind] += 1
        if progress is not None:
            progress(len(chunk))
    links = [
        (stats.observation_ids[successor], our_id)
        for our_id, successor in stats.successors.items()
        if successor in stats.observation_ids
    ]
    if links:
        with db.write() as conn:
            transfer.link_superseded(conn, links)
    return stats
