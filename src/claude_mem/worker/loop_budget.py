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
_WEIGHT = 0.2  # of the latest run in the moving average: a few runs move it


class LoopBudget:
    """The moving average of a kind of work's CPU cost, in this thread's CPU time (what a
    loaded machine's waits do not inflate), wherever it ran."""

    def __init__(self) -> None:
        self.average_s = 0.0

    def fits(self) -> bool:
        return self.average_s <= LOOP_BUDGET_S

    def measure(self, fn: Callable[[], T]) -> T:
        started = time.thread_time()
        try:
            return fn()
        finally:
            self.average_s += (time.thread_time() - started - self.average_s) * _WEIGHT
