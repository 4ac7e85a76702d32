"""Full-text queries that accept any user text: terms rank, exact parts filter.

A query's words are OR-ed and BM25 ranks the rows (rare terms weigh most by construction;
rows with more of the terms score higher); `STOP_WORDS` don't count, so a query of stop words
alone finds nothing. What the user gave as exact stays exact: every quoted phrase is
required, and when the query names paths or identifiers (`src/a.py`, `foo.bar()`,
`snake_case`) a row must contain at least one of them as written. Every part is passed to
FTS5 as a quoted phrase, so FTS operators (`AND`, `NEAR`, `*`, `-`) and quotes are matched as
text, never parsed as query syntax.

A query of more than `MAX_TOKENS` parts is pasted text (a stack trace, a log): nothing in it
is required, and only its `MAX_TOKENS` most distinctive terms (identifiers, dotted and file
names first, then the longest words) rank.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from claude_mem.store.rows import row_dicts, safe_text
from claude_mem.text import FUNCTION_WORDS

MAX_TOKENS = 32
# The one limit on a query's length, everywhere (worker, CLI, MCP, viewer): the embedding
# model reads its first 256 tokens (about 1,000 characters of prose, fewer of code), and full
# text its distinctive terms. A longer query keeps its start and its end (where a stack trace
# names the error), and the CLI says it was clipped.
QUERY_CHARS = 2000
_HEAD_CHARS = 1200
_JOIN = " … "
# Words too common to tell records apart: they never rank, though a quoted phrase keeps them.
STOP_WORDS = FUNCTION_WORDS
_QUOTED = re.compile(r'"([^"]*)"')
_WORD = re.compile(r"[^\W_]+")
# A path or identifier: separators inside a name (`a/b`, `a.b`, `a::b`, `a_b`) or a call.
_EXACT = re.compile(r"[^\W_](?:[./\\]|::)+[^\W_]|[^\W_]_|_[^\W_]|[^\W_]\(")
_EDGES = "\"'`,;:!?<>[]{}"
_TERM = re.compile(r"\w+(?:[.\-]\w+)*")
_IDENTIFIER = re.compile(r"[_.\-]|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]")


def clip_query(query: str) -> str:
    """`query` as search uses it: at most QUERY_CHARS characters, start and end kept."""
    if len(query) <= QUERY_CHARS:
        return query
    tail = QUERY_CHARS - _HEAD_CHARS - len(_JOIN)
    return query[:_HEAD_CHARS] + _JOIN + query[-tail:]


def _counts(word: str) -> bool:
    return (len(word) > 1 or word.isdigit()) and word.casefold() not in STOP_WORDS


def distinctive_terms(text: str, limit: int = MAX_TOKENS) -> list[str]:
    """Up to `limit` different terms of `text` that count, most distinctive first:
    identifier-like ones (`parse_config_value`, `loader.py`, `camelCase`, `utf8`), then by
    length."""
    terms: dict[str, str] = {}
    for term in _TERM.findall(text):
        if _counts(term) and not term.isdigit():
            terms.setdefault(term.casefold(), term)
    ranked = sorted(terms.values(), key=lambda t: (not _IDENTIFIER.search(t), -len(t)))
    return ranked[:limit]


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _parts(text: str) -> tuple[list[str], list[str], list[str]]:
    """(quoted phrases, paths and identifiers, words that count) of `text`, without repeats."""
    phrases = list(dict.fromkeys(p for p in _QUOTED.findall(text) if _WORD.search(p)))
    exact: dict[str, str] = {}
    words: dict[str, str] = {}
    for raw in _QUOTED.sub(" ", text).split():
        token = raw.strip(_EDGES).rstrip(".")
        named = [w for w in _WORD.findall(token) if _counts(w)]
        if _EXACT.search(token) and any(not w.isdigit() for w in named):
            exact.setdefault(token.casefold(), token)
            continue
        for word in named:
            words.setdefault(word.casefold(), word)
    return phrases, list(exact.values()), list(words.values())


@functools.lru_cache(maxsize=64)
def names_exact(query: str) -> bool:
    """Whether `query` names something exactly: a quoted phrase, a path or an identifier."""
    phrases, exact, _ = _parts(safe_text(clip_query(query)).replace("\x00", " "))
    return bool(phrases or exact)


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """What full text makes of a query: the FTS5 clauses every match must satisfy (its quoted
    phrases; one of its paths and identifiers) and the quoted phrases that rank (all of them;
    `all_required` when none is a free word)."""

    required: tuple[str, ...]
    terms: tuple[str, ...]
    all_required: bool

    def any_of(self, terms: Sequence[str]) -> str:
        """The MATCH string of the rows that satisfy every required clause and hold any of
        `terms` (of `self.terms`); just the required clauses when every term is one."""
        if self.all_required:
            return " AND ".join(self.required)
        return " AND ".join([*self.required, "(" + " OR ".join(terms) + ")"])


@functools.lru_cache(maxsize=64)
def query_terms(query: str) -> QueryTerms | None:
    """`query`'s terms (see the module docstring); None when nothing in it counts. Cached: a
    search asks once per kind, and fusion asks `names_exact`."""
    text = safe_text(clip_query(query)).replace("\x00", " ")
    phrases, exact, words = _parts(text)
    if len(phrases) + len(exact) + len(words) > MAX_TOKENS:
        phrases, exact, words = [], [], distinctive_terms(text)
    terms = tuple(_phrase(part) for part in (*phrases, *exact, *words))
    if not terms:
        return None
    required = [_phrase(p) for p in phrases]
    if exact:
        required.append("(" + " OR ".join(_phrase(e) for e in exact) + ")")
    return QueryTerms(tuple(required), terms, all_required=not words)


def match_expressions(query: str) -> tuple[str, ...]:
    """The FTS5 MATCH strings whose matches `query` ranks, all with the same phrases (so BM25
    scores agree): rows with any of its terms, then, with several terms, rows with all of them
    (so a window over the first never drops a row that has everything). Empty when nothing
    in `query` counts. A query of exact parts alone names each phrase once in each (a phrase
    of common tokens, such as a path, costs a pass over their rows per copy)."""
    parsed = query_terms(query)
    if parsed is None:
        return ()
    terms = parsed.terms
    expressions = [parsed.any_of(terms)]
    if len(terms) > 1:
        every = "(" + " AND ".join(terms) + ")"
        expressions.append(" AND ".join([*(() if parsed.all_required else parsed.required), every]))
    return tuple(expressions)


def match_expression(query: str) -> str | None:
    """The FTS5 MATCH string of every row `query` can find (its first expression), or None."""
    expressions = match_expressions(query)
    return expressions[0] if expressions else None


def search_observations(
    conn: sqlite3.Connection,
    query: str,
    *,
    projects: tuple[str, ...] = (),
    limit: int = 20,
) -> list[dict[str, Any]]:
    """Observations matching `query` (see the module docstring), best BM25 first."""
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
