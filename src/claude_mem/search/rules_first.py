"""A current decision ranks above the older records of its subject.

A decision is a rule as last agreed. An earlier discussion of the same thing (its summary,
its units of work, its prompt, a decision the store did not link to it) may still match a
question better by its words, though it tells what was done or believed before the rule. So,
after fusion, each current decision found takes the score of the best-scored older record
from another session on its subject (their content words, `subjects.content_words`, share
at least `SHARED` words and `OVERLAP` of the fewer) when that one scored higher; equal
scores go to the newer record (`hybrid.fused_order`), so the rule ranks first and the older
record right after it, still found. Only records a page can show are compared.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from claude_mem.search.distinct import record_text, rows_of
from claude_mem.store import search_queries as sq
from claude_mem.store.search_queries import Kind
from claude_mem.subjects import content_words, overlap

SHARED = 6
OVERLAP = 0.3

Scores = dict[tuple[Kind, int], float]


def rules_first(conn: sqlite3.Connection, scores: Scores, shown: list[tuple[Kind, int]]) -> None:
    """Lift, in `scores`, each current decision found to the best score among the `shown`
    keys (those a page can hold, best first) that are older records of its subject."""
    found = [record_id for kind, record_id in scores if kind == "observation"]
    decisions = sq.current_decisions(conn, found)
    if not decisions:
        return
    rows = rows_of(conn, set(shown))
    # Whole rows and stemmed words only where a lift is possible: stemming every candidate
    # cost more than the search itself.
    words: dict[tuple[Kind, int], set[str]] = {}

    def words_of(key: tuple[Kind, int]) -> set[str]:
        if key not in words:
            words[key] = set(content_words(record_text(key[0], rows[key])))
        return words[key]

    for rule_id, (session_id, created_at) in sorted(decisions.items(), key=lambda d: d[1][1]):
        rule: tuple[Kind, int] = ("observation", rule_id)
        older = [
            key
            for key in shown
            if key in rows
            and scores[key] > scores[rule]
            and int(rows[key]["session_id"]) != session_id  # a session refines its own rule
            and _time(rows[key]) < created_at
        ]
        if not older:
            continue
        if rule not in rows:
            rows.update(rows_of(conn, {rule}))
        lifted = [
            scores[key]
            for key in older
            if rule in rows and on_subject(words_of(rule), words_of(key))
        ]
        if lifted:
            scores[rule] = max(lifted)


def on_subject(rule: set[str], other: set[str]) -> bool:
    """Whether a record's content words are about what a rule's are."""
    return len(rule & other) >= SHARED and overlap(rule, other) >= OVERLAP


def _time(row: dict[str, Any]) -> int:
    return int(row["created_at"])
