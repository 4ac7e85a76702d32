"""The pure measures of bench/memory_quality.py (issue #30): whether a record states a labelled
rule, whether two search hits hold the same text, plain BM25 over whole sessions (the baseline
full text alone is held to), decision precision and recall, and the check of the held-out
files against the hashes committed before any tuning.

Kept apart from the replay so each can be tested on a few lines of text, without a worker.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from claude_mem.text import FUNCTION_WORDS

NEAR_SAME = 0.9  # word-set Jaccard from which two texts count as the same text
# The tokenizer of the project's own full-text tables: the baseline reads words as they do.
BM25_TOKENIZER = "porter unicode61 remove_diacritics 2"
_WORD = re.compile(r"\w+")
_HASH_LINE = re.compile(r"^([0-9a-fA-F]{64})\s+\*?(.+)$")


@dataclass(frozen=True)
class Rule:
    """A rule agreed in a session, as labelled by hand: its text as last agreed, the short
    lower-case `words` any faithful statement of it holds, and the turn that settled it."""

    text: str
    words: tuple[str, ...]
    turn: int


def normalised(text: str) -> str:
    """`text` lower-cased, its whitespace collapsed to single spaces."""
    return " ".join(text.lower().split())


def states(text: str, rule: Rule) -> bool:
    """Whether `text` holds every one of the rule's words (case and spacing aside)."""
    held = normalised(text)
    return bool(rule.words) and all(normalised(word) in held for word in rule.words)


def same_text(a: str, b: str, threshold: float = NEAR_SAME) -> bool:
    """Identical once normalised, or near-identical: word-set Jaccard of at least `threshold`."""
    first, second = normalised(a), normalised(b)
    if not first or not second:
        return False
    if first == second:
        return True
    words_a, words_b = set(_WORD.findall(first)), set(_WORD.findall(second))
    union = words_a | words_b
    return bool(union) and len(words_a & words_b) / len(union) >= threshold


def repeated_pairs(texts: list[str]) -> list[tuple[int, int]]:
    """The index pairs (i < j) of `texts` that hold the same text."""
    return [
        (i, j)
        for i in range(len(texts))
        for j in range(i + 1, len(texts))
        if same_text(texts[i], texts[j])
    ]


def query_terms(query: str) -> list[str]:
    """The query's words, lower-cased, first occurrence only, function words left out."""
    words = (word for word in _WORD.findall(query.lower()) if word not in FUNCTION_WORDS)
    return list(dict.fromkeys(words))


def bm25_ranking(documents: Mapping[str, str], query: str, limit: int) -> list[str]:
    """The keys of `documents` best first by SQLite FTS5 bm25 for the query's words OR-ed:
    plain BM25, one document per session, in an in-memory database."""
    terms = query_terms(query)
    if not terms:
        return []
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"CREATE VIRTUAL TABLE docs USING fts5(key UNINDEXED, body, "
                     f"tokenize = '{BM25_TOKENIZER}')")  # fmt: skip
        conn.executemany("INSERT INTO docs (key, body) VALUES (?, ?)", documents.items())
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        rows = conn.execute(
            "SELECT key FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid LIMIT ?",
            (match, limit),
        )
        return [str(key) for (key,) in rows]
    finally:
        conn.close()


def share(values: Iterable[bool]) -> float | None:
    """The share of true values, to 3 places; None when there are none."""
    seen = list(values)
    return round(sum(seen) / len(seen), 3) if seen else None


@dataclass(frozen=True)
class DecisionRecord:
    """A stored record typed decision: the corpus session it was made from, its text (title,
    subtitle, narrative, facts) and whether a newer record superseded it."""

    session: str
    text: str
    superseded: bool = False


@dataclass(frozen=True)
class LabelledRule:
    """A labelled rule of a set, with its session and whether that session's rule is still
    the current one (no later session amends it)."""

    session: str
    rule: Rule
    current: bool = True


def stating(records: list[DecisionRecord], rules: list[LabelledRule]) -> list[bool]:
    """Per decision record, whether it states some labelled rule of the set."""
    return [any(states(r.text, label.rule) for label in rules) for r in records]


def decision_precision(records: list[DecisionRecord], rules: list[LabelledRule]) -> float | None:
    """Of the stored decision records, the share that state some labelled rule of the set."""
    return share(stating(records, rules))


def decision_recall(records: list[DecisionRecord], rules: list[LabelledRule]) -> float | None:
    """Of the labelled rules, the share a decision record of their own session states; a
    current rule must be stated by a record nothing superseded."""
    return share(
        any(
            r.session == label.session
            and states(r.text, label.rule)
            and not (label.current and r.superseded)
            for r in records
        )
        for label in rules
    )


@dataclass
class HashCheck:
    """The held-out files against the committed hash file (`sha256sum` format: one line per
    file, `<hex>  <path>`, matched by file name)."""

    present: bool
    matches: bool
    files: int = 0
    problems: list[str] = field(default_factory=list)


def check_hashes(folder: Path, hash_file: Path) -> HashCheck:
    """Whether every `*.toml` of `folder` is listed in `hash_file` with its SHA-256 and every
    listed file is there. Absent both: not present (nothing to check)."""
    files = {path.name: path for path in sorted(folder.glob("*.toml"))} if folder.is_dir() else {}
    if not files and not hash_file.exists():
        return HashCheck(present=False, matches=True)
    if not hash_file.exists():
        return HashCheck(True, False, len(files), [f"{hash_file.name} is missing"])
    listed: dict[str, str] = {}
    problems = []
    for number, line in enumerate(hash_file.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        found = _HASH_LINE.match(line.strip())
        if found is None:
            problems.append(f"{hash_file.name} line {number} is not `<sha256>  <file>`")
            continue
        listed[Path(found.group(2).strip()).name] = found.group(1).lower()
    for name, path in files.items():
        if name not in listed:
            problems.append(f"{name} is not in {hash_file.name}")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != listed[name]:
            problems.append(f"{name} differs from its committed hash")
    problems += [f"{name} is listed but missing" for name in listed if name not in files]
    return HashCheck(True, not problems, len(files), problems)
