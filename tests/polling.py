"""Waiting for something another thread or process does, without sleeping a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def wait_until(predicate: Callable[[], object], timeout: float = 10.0, step: float = 0.02) -> bool:
    """Whether `predicate()` became true within `timeout` seconds (checked once more at the end)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


# The shortest wait `sooner_than` accepts: a timing check against less would be a speed budget.
MIN_WAIT_S = 3.0


@contextmanager
def sooner_than(wait_s: float) -> Iterator[None]:
    """Assert the block ends before `wait_s` seconds: a timeout, backoff or hang it must skip.

    Not a speed budget (those are in bench/): `wait_s` is the wait being avoided, seconds long,
    far more than load can add to the work itself (at least `MIN_WAIT_S`).
    """
    assert wait_s >= MIN_WAIT_S, f"{wait_s} s is a speed budget: measure it in bench/"
    began = time.monotonic()
    yield
    elapsed = time.monotonic() - began
    assert elapsed < wait_s, f"took {elapsed:.2f} s: it sat out the {wait_s:g} s it must skip"
