"""What makes two memories about the same thing, in words: subject keys and content words.

The local compressor writes `subject:<name>` concepts on a decision (`pipeline.local.decisions`)
and the store compares them when a newer memory may replace an older one (`store.supersede`),
so both read the same definitions here. Deterministic and standard library only: supersede
runs inside the write transaction, long before any vector exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from claude_mem.text import FUNCTION_WORDS

SUBJECT_PREFIX = "subject:"

_WORD = re.compile(r"[a-z][a-z0-9]+")
# Words that say how a rule is put, not what it is about, besides the function words: an
# amendment ("three times, not twice") or a revert ("never" after "always") keeps the
# subject's words and changes these.
_RULE_TEXT = """don else even ever every let lets like ll much must need needs never per please
    rather re via whenever whether yes yet always instead keep kept use using used make sure going
    forward future henceforth rule rules convention time times one two three four five six
    seven eight nine ten twice thrice zero first second third least s t d ve m okay ok actually
    wait nope wrong right fine thanks decide decided decision chose choose chosen go went
    switch prefer avoid stick"""
STOP_WORDS = FUNCTION_WORDS | frozenset(_RULE_TEXT.split())
_SUFFIXES = (("ies", "i"), ("ied", "i"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """A crude, deterministic stem: 'retries', 'retried', 'retrying', 'retry' → 'retri'."""
    for suffix, replacement in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
            word = word[: -len(suffix)] + replacement
            break
    if len(word) > 3 and word.endswith("y"):
        word = word[:-1] + "i"
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """The stemmed words of `text` that carry its subject, in order (stop words and numbers
    left out)."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


def subjects(concepts: Iterable[str]) -> set[str]:
    """The subject keys among `concepts`, case-folded."""
    return {
        c[len(SUBJECT_PREFIX) :].strip().lower()
        for c in concepts
        if c.startswith(SUBJECT_PREFIX) and c[len(SUBJECT_PREFIX) :].strip()
    }


def overlap(a: set[str], b: set[str]) -> float:
    """Shared words over the smaller set's size (1.0: one says everything the other does)."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def jaccard(a: set[str], b: set[str]) -> float:
    """Shared words over all the words of both: stricter than `overlap` for a short text
    whose few words a longer one happens to contain."""
    return len(a & b) / len(a | b) if a or b else 0.0
