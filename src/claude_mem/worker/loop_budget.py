"""Whether a kind of CPU-bound work is cheap enough to run on the event loop.

Running a handler on the loop (Endpoint.inline) skips the hop to the handler pool, but every
other request waits while it runs. A kind of work whose recent runs cost more CPU than the
budget goes to the pool instead: a full-text search over a small store stays on the loop, one
over a large store never holds it that long.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
# The longest a request's own work may keep the loop from the others (the http hooks wait
# behind it), in CPU seconds.
LOOP_BUDGET_S = 0.005
# The latest run's weight in the moving average: slow, so that one heavy query does not
# flip the choice, and a store's typical cost decides it.
_WEIGHT = 1 / 16


class LoopBudget:
    """The moving average of a kind of work's CPU cost, in this thread's CPU time (what a
    loaded machine's waits do not inflate), wherever it ran; the first run sets it."""

    def __init__(self) -> None:
        self.average_s: float | None = None

    def fits(self) -> bool:
        return self.average_s is None or self.average_s <= LOOP_BUDGET_S

    def measure(self, fn: Callable[[], T]) -> T:
        started = time.thread_time()
        try:
            return fn()
        finally:
            cost = time.thread_time() - started
            average = cost if self.average_s is None else self.average_s
            self.average_s = average + (cost - average) * _WEIGHT
