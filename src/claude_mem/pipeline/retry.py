"""Retry for one LLM call: short, bounded, and only for failures that may pass by themselves.

Only `transient` and `rate_limit` errors are retried, and only a few times within one batch:
the durable queue is the long-term retry, so a call that keeps failing is handed back quickly
with its classified error. A server's Retry-After is honoured when it fits under `max_delay`;
a longer one ends the attempts at once (sleeping less than asked would only fail again) and
the error carries `retry_after` so the consumer can schedule the batch.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable
from email.utils import parsedate_to_datetime
from typing import TypeVar

from claude_mem.pipeline.providers.base import ProviderError

__all__ = ["RETRYABLE", "backoff", "parse_retry_after", "with_retry"]

T = TypeVar("T")
RETRYABLE = frozenset({"transient", "rate_limit"})
MAX_RETRY_AFTER = 24 * 3600.0  # a larger value is nonsense; treat it as "a day"


def backoff(attempt: int, base_delay: float, max_delay: float, rng: Callable[[], float]) -> float:
    """Delay before retry number `attempt` (0-based): exponential, with half of it jittered."""
    ceiling: float = min(max_delay, base_delay * 2**attempt)
    return ceiling / 2 + rng() * ceiling / 2


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None if unusable."""
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            moment = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if moment.tzinfo is None:
            return None
        seconds = moment.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


async def with_retry(
    call: Callable[[], Awaitable[T]],
    *,
    attempts: int = 3,
    base_delay: float = 0.2,
    max_delay: float = 10.0,
    timeout: float | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rng: Callable[[], float] = random.random,
) -> T:
    """Await `call()` up to `attempts` times, retrying transient and rate-limit ProviderErrors.

    `timeout` (seconds) bounds each attempt; running out is a transient error. Any other
    exception, and any other error kind, propagates at once. The last error is re-raised.
    """
    attempts = max(attempts, 1)
    for attempt in range(attempts):
        try:
            if timeout is None:
                return await call()
            async with asyncio.timeout(timeout):
                return await call()
        except TimeoutError:
            error = ProviderError("transient", f"no answer within {timeout:g} s")
        except ProviderError as exc:
            error = exc
        if error.kind not in RETRYABLE or attempt == attempts - 1:
            raise error
        if error.kind == "rate_limit" and error.retry_after is not None:
            if error.retry_after > max_delay:
                raise error  # the caller's queue waits that long; we would only fail again
            delay = error.retry_after
        else:
            delay = backoff(attempt, base_delay, max_delay, rng)
        await sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover
