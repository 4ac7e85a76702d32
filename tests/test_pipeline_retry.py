"""with_retry: which errors are retried, the delays chosen, timeouts, Retry-After parsing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any, TypeVar

import pytest

from claude_mem.pipeline.providers.base import ProviderError
from claude_mem.pipeline.retry import backoff, parse_retry_after, with_retry

T = TypeVar("T")


class Script:
    """A call that fails with the given errors, in order, then returns "ok"."""

    def __init__(self, *errors: ProviderError) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def recorder() -> tuple[list[float], Callable[[float], Awaitable[None]]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    return slept, sleep


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.mark.parametrize("kind", ["transient", "rate_limit"])
def test_retryable_errors_are_retried(kind: str) -> None:
    slept, sleep = recorder()
    call = Script(ProviderError(kind, "a"), ProviderError(kind, "b"))
    assert run(with_retry(call, sleep=sleep, rng=lambda: 0.5)) == "ok"
    assert call.calls == 3
    assert len(slept) == 2


@pytest.mark.parametrize("kind", ["auth", "quota", "setup_required", "unrecoverable"])
def test_other_errors_are_not_retried(kind: str) -> None:
    slept, sleep = recorder()
    call = Script(ProviderError(kind, "no"))
    with pytest.raises(ProviderError) as caught:
        run(with_retry(call, sleep=sleep))
    assert caught.value.kind == kind
    assert call.calls == 1
    assert slept == []


def test_the_last_error_is_raised_after_all_attempts() -> None:
    slept, sleep = recorder()
    errors = [ProviderError("transient", f"try {i}", status=500) for i in range(5)]
    call = Script(*errors)
    with pytest.raises(ProviderError) as caught:
        run(with_retry(call, attempts=4, sleep=sleep))
    assert caught.value.message == "try 3"
    assert call.calls == 4
    assert len(slept) == 3


def test_retry_after_is_honoured() -> None:
    slept, sleep = recorder()
    call = Script(ProviderError("rate_limit", "slow down", retry_after=2.5))
    assert run(with_retry(call, sleep=sleep)) == "ok"
    assert slept == [2.5]


def test_retry_after_beyond_max_delay_ends_the_attempts() -> None:
    slept, sleep = recorder()
    call = Script(ProviderError("rate_limit", "come back later", retry_after=60))
    with pytest.raises(ProviderError) as caught:
        run(with_retry(call, max_delay=10, sleep=sleep))
    assert caught.value.retry_after == 60
    assert call.calls == 1
    assert slept == []


def test_backoff_grows_with_jitter_and_is_capped() -> None:
    assert backoff(0, 0.2, 10, lambda: 0.0) == pytest.approx(0.1)
    assert backoff(0, 0.2, 10, lambda: 1.0) == pytest.approx(0.2)
    assert backoff(3, 0.2, 10, lambda: 1.0) == pytest.approx(1.6)
    assert backoff(20, 0.2, 10, lambda: 1.0) == pytest.approx(10)
    slept, sleep = recorder()
    call = Script(*(ProviderError("transient", "x") for _ in range(3)))
    run(with_retry(call, attempts=4, base_delay=1, sleep=sleep, rng=lambda: 1.0))
    assert slept == [1, 2, 4]


def test_timeout_per_attempt_is_transient() -> None:
    calls = 0

    async def hang() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            await asyncio.sleep(10)
        return "late ok"

    _, sleep = recorder()
    assert run(with_retry(hang, timeout=0.05, sleep=sleep)) == "late ok"
    assert calls == 3
    with pytest.raises(ProviderError) as caught:
        run(with_retry(lambda: asyncio.sleep(10), attempts=2, timeout=0.05, sleep=sleep))
    assert caught.value.kind == "transient"


def test_foreign_exceptions_propagate() -> None:
    async def broken() -> None:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        run(with_retry(broken))


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("-4") == 0
    assert parse_retry_after(None) is None
    assert parse_retry_after("") is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("nan") is None
    assert parse_retry_after("1e12") == 24 * 3600
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(datetime(2026, 1, 1, 12, 0, 30, tzinfo=UTC), usegmt=True)
    assert parse_retry_after(later, now=now.timestamp()) == pytest.approx(30)
    earlier = format_datetime(datetime(2025, 1, 1, tzinfo=UTC), usegmt=True)
    assert parse_retry_after(earlier, now=now.timestamp()) == 0
