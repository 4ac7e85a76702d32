"""Small state files the hooks keep between runs, under `<data dir>/state/`.

- `hook-failures.json`: consecutive hooks that could not reach the worker, so that a broken
  capture is reported once it is clearly not a blip (and any success forgets it);
- `capture-broken`: left when a host ran us without a payload, reported by the next session
  start (the hook that notices cannot tell anyone: nothing reads its output).

Every write is atomic (locations.write_private_file); a concurrent hook can at worst miscount
by one.
"""

from __future__ import annotations

import os
import time

from claude_mem import locations
from claude_mem.hooks import jsonio

FAILURES = "hook-failures.json"
CAPTURE_BROKEN = "capture-broken"
REPORT_EVERY_S = 600.0  # while still broken, remind at most this often
START_BACKOFF_S = 60.0  # once clearly broken, try starting the worker at most this often


def _read(name: str) -> dict[str, object]:
    try:
        with open(locations.state_file(name), "rb") as handle:
            data = jsonio.loads(handle.read())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(name: str, data: dict[str, object]) -> bool:
    try:
        locations.write_private_file(locations.state_file(name), jsonio.dumps(data) + "\n")
    except OSError:
        return False  # a full disk must not break the hook
    return True


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def failure_count() -> int:
    return int(_number(_read(FAILURES).get("consecutive_failures")))


def may_start_worker(threshold: int, now: float | None = None) -> bool:
    """False while capture is clearly broken and a start was tried moments ago.

    A worker that cannot start must not cost every tool call another wait.
    """
    state = _read(FAILURES)
    if _number(state.get("consecutive_failures")) < threshold:
        return True
    now = time.time() if now is None else now
    return now - _number(state.get("last_start_attempt_at")) >= START_BACKOFF_S


def note_failure(error: str, *, threshold: int, can_report: bool, start_attempted: bool) -> int:
    """Count one failed hook; returns the count if this hook should report it, else 0.

    Reported when the count reaches `threshold` and then at most every REPORT_EVERY_S, and
    only by a hook whose host shows the report without blocking anything (`can_report`).
    """
    state = _read(FAILURES)
    now = time.time()
    count = int(_number(state.get("consecutive_failures"))) + 1
    state.update(consecutive_failures=count, last_failure_at=now, last_error=error[:500])
    if start_attempted:
        state["last_start_attempt_at"] = now
    report = (
        can_report
        and count >= threshold
        and now - _number(state.get("reported_at")) >= REPORT_EVERY_S
    )
    if report:
        state["reported_at"] = now
    _write(FAILURES, state)
    return count if report else 0


def note_success() -> None:
    """Reset the count (keeping when and why it last failed, for `claude-mem doctor`).

    The common case, nothing to reset, costs one failed open().
    """
    state = _read(FAILURES)
    if _number(state.get("consecutive_failures")):
        state.update(consecutive_failures=0, reported_at=None)
        _write(FAILURES, state)


def mark_capture_broken(what: str) -> None:
    _write(CAPTURE_BROKEN, {"what": what, "at": time.time()})


def take_capture_broken() -> str | None:
    """The capture-broken report as one line, removing the marker (reported once)."""
    data = _read(CAPTURE_BROKEN)
    try:
        os.unlink(locations.state_file(CAPTURE_BROKEN))
    except OSError:
        if not data:
            return None
    what = data.get("what") if isinstance(data.get("what"), str) else "unknown"
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(_number(data.get("at"))))
    return (
        f"claude-mem: capture was broken: {what} (last at {when}); events may be missing "
        "from memory. Run `claude-mem doctor` if this repeats."
    )
