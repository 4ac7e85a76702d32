"""The one token estimate for injected text, and fitting rows under a hard token budget.

Tokens are estimated as characters / 4, rounded up: the same rule the search index uses for
its token costs, so every figure the agent or the user sees agrees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

CHARS_PER_TOKEN = 4
T = TypeVar("T")


def tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def cut(text: str, budget: int) -> str:
    """`text` shortened at a line end (or, failing that, anywhere) to fit `budget` tokens."""
    limit = budget * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    if "\n" in head:
        head = head.rsplit("\n", 1)[0]
    return head + "…"


def fit(
    build: Callable[[Sequence[T], int], str],
    rows: Sequence[T],
    cost: Callable[[T], int],
    budget: int,
) -> tuple[str, int]:
    """The text `build(kept, dropped)` within `budget` tokens, dropping the oldest rows first.

    `rows` run oldest to newest and `cost(row)` is a row's length in characters. Each round
    drops at least as many rows as the excess needs, so a few rounds suffice. If even no rows
    are over budget (a huge warning or summary), the text is cut: the budget is never exceeded.
    """
    dropped = 0
    text = build(rows, 0)
    limit = budget * CHARS_PER_TOKEN
    while len(text) > limit and dropped < len(rows):
        excess, freed = len(text) - limit, 0
        while freed < excess and dropped < len(rows):
            freed += cost(rows[dropped])
            dropped += 1
        text = build(rows[dropped:], dropped)
    return cut(text, budget), dropped
