"""Prompt-time injection: the few memories relevant to a prompt, or nothing.

Hybrid search over every kind (decisions and other observations, summaries, prompts) proposes
candidates; a candidate is injected only with evidence of its own that it is about the prompt:

- the vector half: its cosine similarity to the prompt reaches `hybrid.MIN_SIMILARITY` (the
  floor calibrated on real embeddings: paraphrases pass it, unrelated text does not), or
- the full-text half: it holds at least `TERM_SHARE` of the prompt's subject words (three
  letters or more, stop words left out, crude plural/tense endings folded) and at least two
  of them (one when the prompt has one).

A fused rank says only which candidate is best, never whether any is good, so an unrelated
prompt gets nothing. Also never injected: the session's own records (the agent has them), what
the session was already given (`given`), superseded observations. Each item is one or two
lines (label, type — a commit's says `history a1b2c3d` —, title; the gist: an observation's
narrative, a summary's learned) and the whole text stays within the token budget, counted as
`budget.tokens` counts.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from claude_mem.context.budget import tokens
from claude_mem.context.timeline import flat
from claude_mem.search.hybrid import Hit, HybridSearcher, Mode, similar
from claude_mem.store.context_queries import records
from claude_mem.store.search_queries import KINDS, TABLES, SearchFilters
from claude_mem.text import STOPWORDS
from claude_mem.vocabulary import commit_fact, shown_type

CANDIDATES = 30  # hits looked at: enough that skipped ones leave room for the limit
TERM_SHARE = 0.5
TITLE_CHARS = 120
GIST_CHARS = 240
HEADER = "## Relevant past work"
FOOTER = "Full records: get_observations([IDs])."
_ENDINGS = ("ing", "ed", "es", "s")


@dataclass(frozen=True, slots=True)
class Injection:
    text: str  # empty when nothing cleared the floor
    labels: list[str]  # `12`, `S4`, `P7`: what the session is now given
    mode: Mode


def terms(text: str) -> set[str]:
    """The subject words of a text, endings folded (`retries`, `retried` → `retri`)."""
    words = (w for w in re.findall(r"\w+", text.lower()) if len(w) >= 3 and w not in STOPWORDS)
    return {_fold(w) for w in words}


def _fold(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def relevant(
    conn: sqlite3.Connection,
    searcher: HybridSearcher,
    prompt: str,
    filters: SearchFilters,
    *,
    own_session: int | None,
    given: set[str],
    limit: int,
    budget: int,
) -> Injection:
    """The injection for `prompt`: at most `limit` items within `budget` tokens."""
    result = searcher.search(prompt, filters, kinds=KINDS, limit=CANDIDATES)
    hits = [h for h in result.hits if h.session_id != own_session and h.label[1:] not in given]
    rows = _rows(conn, hits)
    hits = [h for h in hits if (h.kind, h.id) in rows and not _superseded(rows[(h.kind, h.id)])]
    close = _close(searcher, prompt, hits)
    wanted = terms(prompt)
    lines: list[str] = []
    labels: list[str] = []
    for hit in hits:
        if len(labels) == limit:
            break
        row = rows[(hit.kind, hit.id)]
        if (hit.kind, hit.id) not in close and not _shares_terms(wanted, _text(hit.kind, row)):
            continue
        item = _item(hit, row)
        if tokens("\n".join([HEADER, *lines, *item, FOOTER])) > budget:
            continue
        lines += item
        labels.append(hit.label[1:])
    text = "\n".join([HEADER, *lines, FOOTER]) if labels else ""
    return Injection(text, labels, result.mode)


def _rows(conn: sqlite3.Connection, hits: list[Hit]) -> dict[tuple[str, int], dict[str, Any]]:
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for kind in KINDS:
        ids = [h.id for h in hits if h.kind == kind]
        found.update(((kind, i), row) for i, row in records(conn, TABLES[kind], ids).items())
    return found


def _superseded(row: dict[str, Any]) -> bool:
    return row.get("superseded_by") is not None


def _close(searcher: HybridSearcher, prompt: str, hits: list[Hit]) -> set[tuple[str, int]]:
    """The hits whose vectors reach the similarity floor (none without vectors)."""
    vectors = searcher.vectors
    if vectors is None or not hits:
        return set()
    try:
        vector = vectors.query_vector(prompt)  # cached: the search just embedded it
        if vector is None:
            return set()
        close: set[tuple[str, int]] = set()
        for kind in KINDS:
            ids = {h.id for h in hits if h.kind == kind}
            if ids:
                found = similar(vectors.index(kind), vector, len(ids), ids)
                close.update((kind, i) for i, _ in found)
        return close
    except Exception:  # a broken model or index: full-text evidence still counts
        return set()


def _shares_terms(wanted: set[str], text: str) -> bool:
    shared = len(wanted & terms(text))
    return bool(wanted) and shared >= min(2, len(wanted)) and shared >= TERM_SHARE * len(wanted)


def _text(kind: str, row: dict[str, Any]) -> str:
    if kind == "prompt":
        return str(row.get("text") or "")
    if kind == "summary":
        fields: Iterable[object] = (row.get(k) for k in ("request", "learned", "completed"))
    else:
        fields = (
            row.get("title"),
            row.get("subtitle"),
            row.get("narrative"),
            *(row.get("facts") or ()),
        )
    return " ".join(str(f) for f in fields if f)


def _item(hit: Hit, row: dict[str, Any]) -> list[str]:
    """One or two lines: label, date, type, title; then the gist when there is one."""
    date = time.strftime("%Y-%m-%d", time.gmtime(hit.time / 1000))
    if hit.kind == "summary":
        title, gist = row.get("request") or row.get("completed"), row.get("learned")
    elif hit.kind == "prompt":
        title, gist = row.get("text"), None
    else:
        # A commit's hash is in its type already (`history a1b2c3d`): its gist is what changed.
        shown = commit_fact(str(hit.commit)) if hit.commit else None
        facts = [f for f in row.get("facts") or () if f and f != shown]
        title, gist = row.get("title"), row.get("narrative") or (facts[0] if facts else None)
    kind = shown_type(hit.type, hit.source, hit.commit)
    head = f"- {hit.label} {date} [{kind}] {flat(title, TITLE_CHARS) or 'Untitled'}"
    line = flat(gist, GIST_CHARS)
    return [head, f"  {line}"] if line else [head]
