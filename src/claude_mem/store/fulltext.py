"""Full-text queries that accept any user text: every token is searched literally.

Quoting each whitespace-separated token as an FTS5 phrase means paths (`src/a-b/c.py`),
identifiers (`foo.bar()`), quotes and FTS operators (`AND`, `NEAR`, `*`, `-`) are matched as
words, never parsed as query syntax.

A query of up to `MAX_TOKENS` tokens needs every one of them. A longer one is pasted text (a
stack trace, a log): no record holds all its words, so it matches any of its `MAX_TOKENS`
most distinctive terms (identifiers, dotted and file names first, then the longest words),
BM25 ranking first the records that share the most and rarest of them.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from claude_mem.store.rows import row_dicts, safe_text

MAX_TOKENS = 32
# The one limit on a query's length, everywhere (worker, CLI, MCP, viewer): the embedding
# model reads its first 256 tokens (about 1,000 characters of prose, fewer of code), and full
# text its distinctive terms. A longer query keeps its start and its end (where a stack trace
# names the error), and the CLI says it was clipped.
QUERY_CHARS = 2000
_HEAD_CHARS = 1200
_JOIN = " … "
_TERM = re.compile(r"\w+(?:[.\-]\w+)*")
_IDENTIFIER = re.compile(r"[_.\-]|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]")
MIN_TERM_CHARS = 4


def clip_query(query: str) -> str:
    """`query` as search uses it: at most QUERY_CHARS characters, start and end kept."""
    if len(query) <= QUERY_CHARS:
        return query
    tail = QUERY_CHARS - _HEAD_CHARS - len(_JOIN)
    return query[:_HEAD_CHARS] + _JOIN + query[-tail:]


def distinctive_terms(text: str, limit: int = MAX_TOKENS) -> list[str]:
    """Up to `limit` different terms of `text`, most distinctive first: identifier-like ones
    (`parse_config_value`, `loader.py`, `camelCase`, `utf8`), then by length."""
    terms: dict[str, str] = {}
    for term in _TERM.findall(text):
        if len(term) >= MIN_TERM_CHARS and not term.isdigit():
            terms.setdefault(term.casefold(), term)
    ranked = sorted(terms.values(), key=lambda t: (not _IDENTIFIER.search(t), -len(t)))
    return ranked[:limit]


def _phrase(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def match_expression(query: str) -> str | None:
    """The FTS5 MATCH string for `query`: its tokens AND-ed, or for pasted text (more than
    MAX_TOKENS tokens) its distinctive terms OR-ed; None when nothing is searchable."""
    text = safe_text(clip_query(query)).replace("\x00", " ")
    tokens = [t for t in text.split() if any(c.isalnum() for c in t)]
    if not tokens:
        return None
    if len(tokens) <= MAX_TOKENS:
        return " ".join(_phrase(token) for token in tokens)
    return " OR ".join(_phrase(term) for term in distinctive_terms(text)) or None


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
