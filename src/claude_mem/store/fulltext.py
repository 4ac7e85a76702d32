"""Full-text queries that accept any user text: every token is searched literally.

Quoting each whitespace-separated token as an FTS5 phrase means paths (`src/a-b/c.py`),
identifiers (`foo.bar()`), quotes and FTS operators (`AND`, `NEAR`, `*`, `-`) are matched as
words, never parsed as query syntax.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from claude_mem.store.rows import row_dicts, safe_text

MAX_TOKENS = 32


def match_expression(query: str) -> str | None:
    """The FTS5 MATCH string for `query` (tokens AND-ed), or None when nothing searchable."""
    text = safe_text(query).replace("\x00", " ")
    tokens = [t for t in text.split() if any(c.isalnum() for c in t)]
    if not tokens:
        return None
    return " ".join('"' + token.replace('"', '""') + '"' for token in tokens[:MAX_TOKENS])


def search_observations(
    conn: sqlite3.Connection,
    query: str,
    *,
    projects: tuple[str, ...] = (),
    limit: int = 20,
) -> list[dict[str, Any]]:
    """Observations matching every token of `query`, best BM25 first."""
    expression = match_expression(query)
    if expression is None:
        return []
    if projects:
        # Filter while joining: FTS5 evaluates an IN-subquery on rowid per row, which is slow.
        marks = ", ".join("?" * len(projects))
        rows = conn.execute(
            f"""SELECT o.*, rank AS score
                FROM observations_fts JOIN observations o ON o.id = observations_fts.rowid
                WHERE observations_fts MATCH ? AND o.project IN ({marks})
                ORDER BY rank LIMIT ?""",
            (expression, *projects, limit),
        )
    else:
        # Rank inside FTS5 first, then join only the winners.
        rows = conn.execute(
            """SELECT o.*, hits.rank AS score
               FROM (
                   SELECT rowid, rank FROM observations_fts
                   WHERE observations_fts MATCH ? ORDER BY rank LIMIT ?
               ) AS hits
               JOIN observations o ON o.id = hits.rowid
               ORDER BY hits.rank""",
            (expression, limit),
        )
    return row_dicts(rows)
