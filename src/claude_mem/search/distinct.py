"""One hit per text: a ranking never shows the same words twice.

A prompt asked again, the summary whose request repeats it, a finding stored twice: records
whose words are near-identical (word-set Jaccard >= `NEAR_DUPLICATE`) would fill a page with
one piece of knowledge (two chores alike in two files read the same: the hit names its
files). After ranking, each such record is dropped when a better-ranked hit
already says it, so the best of them stays (the first in the fused order: the more relevant,
then the newer) and every distinct record keeps its place. A superseded observation and its
successor are never collapsed into one: what changed between them is the point (`as_of`).

Applied by `HybridSearcher.search`, so `/api/search`, MCP, the CLI and prompt-time injection
see the same ranking.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from claude_mem.store.context_queries import records
from claude_mem.store.search_queries import TABLES
from claude_mem.subjects import jaccard

if TYPE_CHECKING:
    from claude_mem.search.hybrid import Hit

NEAR_DUPLICATE = 0.9  # word-set Jaccard from which two records say the same thing
_WORD = re.compile(r"\w+")
_TEXT = {
    "observation": ("title", "narrative"),  # subtitle, facts and files say where, not what
    "summary": ("request", "investigated", "learned", "completed", "next_steps", "notes"),
    "prompt": ("text",),
}


def record_text(kind: str, row: dict[str, Any]) -> str:
    """What a record says: an observation's title and narrative, a summary's fields, a
    prompt's text."""
    return " ".join(str(row[field]) for field in _TEXT[kind] if row.get(field))


def rows_of(
    conn: sqlite3.Connection, keys: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], dict[str, Any]]:
    """Whole rows by (kind, id): a record gone since is absent."""
    by_kind: dict[str, list[int]] = {}
    for kind, record_id in keys:
        by_kind.setdefault(kind, []).append(record_id)
    return {
        (kind, record_id): row
        for kind, ids in by_kind.items()
        for record_id, row in records(conn, TABLES[kind], ids).items()
    }


def words(text: str) -> set[str]:
    """The lower-cased words of `text`, as near-duplicates are compared."""
    return set(_WORD.findall(text.lower()))


def near_identical(mine: set[str], theirs: set[str]) -> bool:
    """Whether two records' words say the same thing (search pages and injection alike)."""
    return jaccard(mine, theirs) >= NEAR_DUPLICATE


def said(conn: sqlite3.Connection, hits: Iterable[Hit]) -> dict[tuple[str, int], set[str]]:
    """The lower-cased words of each hit's record, by (kind, id)."""
    rows = rows_of(conn, ((hit.kind, hit.id) for hit in hits))
    return {key: words(record_text(key[0], row)) for key, row in rows.items()}


def distinct(hits: Sequence[Hit], texts: dict[tuple[str, int], set[str]]) -> list[Hit]:
    """`hits` (best first) without those a better-ranked kept hit already says."""
    kept: list[tuple[Hit, set[str]]] = []
    for hit in hits:
        mine = texts.get((hit.kind, hit.id))
        if mine and any(
            near_identical(mine, theirs) and not _amends(hit, other) for other, theirs in kept
        ):
            continue
        kept.append((hit, mine or set()))
    return [hit for hit, _ in kept]


def _amends(a: Hit, b: Hit) -> bool:
    """Whether one of two observations superseded the other."""
    if a.kind != "observation" or b.kind != "observation":
        return False
    return a.superseded_by == b.id or b.superseded_by == a.id
