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
the session was already given (`given`), superseded observations, a record that says what one
already chosen says (`search.distinct.near_identical`: a prompt asked five times, the
summary that repeats it), and a sentence an earlier item gave. Each item is one or two lines:
label, type — a commit's says `history a1b2c3d` —, title; then the knowledge itself, in the
record's own words: a decision's rule (its narrative as stored), a finding's key sentence
first (the one sharing most of the prompt's subject words), a summary's learned and
completed. Each item gets an equal share of the budget (at least `ITEM_CHARS`: fewer items
rather than bare titles; what a short one leaves goes to the others) and is shortened at a
word to fit it, so the whole text stays within the token budget, counted as `budget.tokens`
counts.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from claude_mem.context.budget import CHARS_PER_TOKEN, tokens
from claude_mem.pipeline.local.words import all_sentences
from claude_mem.search import distinct
from claude_mem.search.hybrid import Hit, HybridSearcher, Mode, similar
from claude_mem.store.search_queries import KINDS, SearchFilters
from claude_mem.text import STOPWORDS, one_line, shorten
from claude_mem.vocabulary import commit_fact, shown_type

CANDIDATES = 30  # hits looked at: enough that skipped ones leave room for the limit
TERM_SHARE = 0.5
TITLE_CHARS = 120
MIN_BODY_CHARS = 40  # less room than this for a record's knowledge: its title alone
ITEM_CHARS = 200  # an item's smallest share: fewer items rather than bare titles
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
    result = searcher.search(prompt, filters, kinds=KINDS, limit=CANDIDATES, besides=own_session)
    hits = [h for h in result.hits if h.label[1:] not in given]
    rows = distinct.rows_of(conn, ((hit.kind, hit.id) for hit in hits))
    hits = [h for h in hits if (h.kind, h.id) in rows and not _superseded(rows[(h.kind, h.id)])]
    close = _close(searcher, prompt, hits)
    wanted = terms(prompt)
    chosen: list[Item] = []
    said: list[set[str]] = []  # the word sets of what the chosen items say
    told: set[str] = set()  # their sentences, lowercased
    room = min(limit, max(1, _room(budget) // ITEM_CHARS))  # each item room for knowledge
    for hit in hits:
        if len(chosen) == room:
            break
        row = rows[(hit.kind, hit.id)]
        if (hit.kind, hit.id) not in close and not _shares_terms(wanted, _text(hit.kind, row)):
            continue
        item = _item(hit, row, wanted)
        if any(distinct.near_identical(item.words, earlier) for earlier in said):
            continue  # the same words again (a prompt asked twice, a summary repeating it)
        said += [distinct.words(item.title), distinct.words(item.body)]
        sentences = all_sentences([item.body])
        fresh = [line for line in sentences if line.lower() not in told]
        told.update(line.lower() for line in sentences)
        chosen.append(replace(item, body=" ".join(fresh)))  # no sentence given twice
    while chosen:
        text = _render(chosen, budget)
        if tokens(text) <= budget:
            labels = [item.hit.label[1:] for item in chosen]
            return Injection(text, labels, result.mode)
        chosen.pop()  # headings alone overflow a tiny budget: fewer items
    return Injection("", [], result.mode)


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


@dataclass(frozen=True, slots=True)
class Item:
    """One injected record: its heading's title and the knowledge it carries (`body`: a
    decision's rule, a finding's key sentences, a summary's learned and completed)."""

    hit: Hit
    title: str
    body: str

    @property
    def words(self) -> set[str]:
        """What the record says, to compare with the others: its body, or its title alone."""
        return distinct.words(self.body or self.title)


def _item(hit: Hit, row: dict[str, Any], wanted: set[str]) -> Item:
    """The record's title and knowledge, whole (shortened only when rendered)."""
    if hit.kind == "summary":
        title = row.get("request") or row.get("completed")
        parts = [row.get("learned"), row.get("completed") if row.get("request") else None]
        body = " ".join(all_sentences(str(p) for p in parts if p))
    elif hit.kind == "prompt":
        title, body = row.get("text"), ""
    else:
        # A commit's hash is in its type already (`history a1b2c3d`): its body is what changed.
        shown = commit_fact(str(hit.commit)) if hit.commit else None
        facts = [str(f) for f in row.get("facts") or () if f and f != shown]
        title = row.get("title")
        if hit.type == "decision":
            body = str(row.get("narrative") or "")  # the rule as stored, in its own words
        else:
            body = _key_first(all_sentences([str(row.get("narrative") or ""), *facts]), wanted)
    return Item(hit, one_line(str(title or "")), one_line(body))


def _key_first(sentences: list[str], wanted: set[str]) -> str:
    """The sentences with the key one (sharing most of the prompt's subject words) first, the
    others after it in their order: what a cut keeps is what the prompt asked about."""
    if not sentences:
        return ""
    shared = [len(wanted & terms(s)) for s in sentences]
    key = shared.index(max(shared))
    return " ".join([sentences[key], *sentences[:key], *sentences[key + 1 :]])


def _render(items: list[Item], budget: int) -> str:
    """The items within `budget` tokens: each gets its share of what the header and footer
    leave (`_shares`), its title and then its knowledge shortened at a word to fit it."""
    heads = [f"- {item.hit.label} {_date(item.hit)} [{_kind(item.hit)}] " for item in items]
    needs = [
        len(head) + min(len(item.title), TITLE_CHARS) + (len(item.body) + 3 if item.body else 0)
        for head, item in zip(heads, items, strict=True)
    ]
    lines = [HEADER]
    for head, item, need, share in zip(
        heads, items, needs, _shares(needs, _room(budget)), strict=True
    ):
        limit = TITLE_CHARS if need <= share else min(TITLE_CHARS, share // 3)
        lines.append(head + (shorten(item.title, max(1, limit)) or "Untitled"))
        left = share - len(lines[-1]) - 4  # the newline and indent of the body's line
        body = shorten(item.body, left) if left >= min(MIN_BODY_CHARS, len(item.body)) else ""
        if body:
            lines.append(f"  {body}")
    lines.append(FOOTER)
    return "\n".join(lines)


def _shares(needs: list[int], room: int) -> list[int]:
    """Equal shares of `room`, but an item needing less than its share takes only what it
    needs and the rest is shared among the others (each line's newline counted)."""
    shares = [0] * len(needs)
    waiting = list(range(len(needs)))
    while waiting:
        each = room // len(waiting)
        met = [n for n in waiting if needs[n] + 1 <= each]
        if not met:
            for n in waiting:
                shares[n] = each
            break
        for n in met:
            shares[n] = needs[n] + 1
            room -= shares[n]
        waiting = [n for n in waiting if n not in met]
    return shares


def _room(budget: int) -> int:
    """The characters `budget` tokens leave for items once the header and footer are in."""
    return budget * CHARS_PER_TOKEN - len(HEADER) - len(FOOTER) - 2


def _date(hit: Hit) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(hit.time / 1000))


def _kind(hit: Hit) -> str:
    return shown_type(hit.type, hit.source, hit.commit)
