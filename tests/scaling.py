"""Linear-time checks that a busy machine cannot fail: growth of CPU time, not a time budget.

`assert_linear(fn, make, n)` runs `fn` on inputs of size n/8 and n and compares the CPU time
this thread spent on each (the fastest of a few interleaved runs), not the wall clock: other
processes on the machine take turns on the cores but do not add CPU time to this thread. Eight
times the input costs ~8x for linear code and ~64x for quadratic; the bound is the geometric
middle, 8**1.5 ≈ 22.6x, so a quadratic regression fails even at moderate sizes and linear code
has ~3x headroom for cache effects. Speed figures against the issues' floors live in bench/.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import TypeVar

X = TypeVar("X")
R = TypeVar("R")

FACTOR = 8
BOUND = FACTOR**1.5
# Below this much CPU time for the large input the work cannot be super-linear in any way that
# matters (a quadratic scan of ~1 MB takes minutes); ratios of such tiny times are clock noise.
NEGLIGIBLE_S = 0.002


def cpu_seconds(fn: Callable[[X], R], arg: X) -> tuple[float, R]:
    """CPU time this thread spent in `fn(arg)`, and its result."""
    start = time.thread_time()
    result = fn(arg)
    return time.thread_time() - start, result


def growth(
    fn: Callable[[X], R], make: Callable[[int], X], n: int, runs: int = 3
) -> tuple[float, R]:
    """CPU time of `fn(make(n))` over `fn(make(n // FACTOR))`, fastest of `runs` each
    (interleaved, so a slow spell hits both sizes; 1.0 when the large run is negligible),
    and the result for the large input. Garbage collection is kept out of the measure."""
    small, large = make(n // FACTOR), make(n)
    best_small = best_large = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(runs):
            best_small = min(best_small, cpu_seconds(fn, small)[0])
            seconds, result = cpu_seconds(fn, large)
            best_large = min(best_large, seconds)
    finally:
        gc.enable()
    if best_large < NEGLIGIBLE_S:
        return 1.0, result
    return best_large / max(best_small, 1e-6), result


def assert_linear(fn: Callable[[X], R], make: Callable[[int], X], n: int, runs: int = 3) -> R:
    """Fails when `FACTOR` times the input costs more than `BOUND` times the CPU time;
    returns `fn(make(n))` for the test's own checks."""
    ratio, result = growth(fn, make, n, runs)
    assert ratio < BOUND, f"{FACTOR}x the input took {ratio:.1f}x the CPU time (linear: ~{FACTOR}x)"
    return result


def repeat(unit: str, prefix: str = "", suffix: str = "") -> Callable[[int], str]:
    """Input of size n for `assert_linear`: `unit` n times between `prefix` and `suffix`."""
    return lambda n: prefix + unit * n + suffix
