"""The hook pipeline: stdin → adapter → handler → one JSON object on stdout → exit code.

The contract with the host: never crash, never block the agent, exit 0. Input we cannot use
(no payload, malformed, oversized) is logged and produces no output; the only non-zero exit is
2, when the worker has been unreachable CLAUDE_MEM_HOOK_FAIL_LOUD_THRESHOLD hooks in a row and
this host shows a hook's stderr without blocking anything (adapter.LOUD).
"""

from __future__ import annotations

import os
import sys

from claude_mem.hooks import jsonio
from claude_mem.hooks.adapters import PLATFORMS, load
from claude_mem.hooks.stdio import process_cwd, say

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    from claude_mem.hooks.event import HookEvent, HookResult
    from claude_mem.settings import Settings

USAGE = "usage: claude-mem hook <platform> <event>"


def _emit(out: dict[str, object]) -> None:
    try:
        sys.stdout.write(jsonio.dumps(out) + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):
        pass  # the host stopped listening


def _log(settings: Settings | None, level: str, message: str, **fields: object) -> None:
    try:
        from claude_mem import log  # noqa: PLC0415 - only when there is something to log

        if settings is not None:
            log.configure(
                settings.get_str("CLAUDE_MEM_LOG_LEVEL"),
                settings.get_int("CLAUDE_MEM_LOG_RETENTION_DAYS"),
            )
        log.event(level, "hook", message, **fields)
    except Exception:  # logging must never be why a hook fails
        pass


def parse(raw: bytes) -> dict[str, object] | str:
    """The payload object, or why there is none ("not valid JSON" / "not a JSON object").

    A tool's binary output can reach us as it was: invalid UTF-8 is replaced (U+FFFD) and raw
    control bytes inside strings are accepted (strict=False), so the event is kept.
    """
    text = raw.decode("utf-8", "replace").lstrip("\ufeff")
    try:
        payload = jsonio.loads(text, strict=False)
    except (ValueError, RecursionError):
        return "not valid JSON"
    return payload if isinstance(payload, dict) else "not a JSON object"


def run(argv: list[str], stdin: tuple[bytes, str] | None = None) -> int:
    """Run one hook; the process exit code (0, or 2 to report a broken capture). `stdin` is
    hooks.stdio.read()'s answer when the caller has read it already."""
    try:
        return _dispatch(argv, stdin)
    except BaseException as exc:  # the host must never see a traceback
        if not isinstance(exc, KeyboardInterrupt | SystemExit):
            _log(None, "ERROR", "hook crashed", argv=" ".join(argv)[:200],
                 error=f"{type(exc).__name__}: {exc}")  # fmt: skip
        return 0


def _dispatch(argv: list[str], stdin: tuple[bytes, str] | None) -> int:
    if len(argv) != 2:
        say(f"claude-mem: {USAGE}")
        return 0
    platform, event_name = argv
    adapter = load(platform)
    if adapter is None:
        say(
            f"claude-mem: unknown platform {platform!r}; "
            f"expected one of: {', '.join(PLATFORMS)} ({USAGE})"
        )
        return 0
    from claude_mem.hooks.adapters.base import event_key  # noqa: PLC0415

    found = adapter.EVENTS.get(event_key(event_name))
    if found is None:
        known = sorted({host for host, _ in adapter.EVENTS.values()})
        say(
            f"claude-mem: unknown event {event_name!r} for {adapter.NAME}; "
            f"known: {', '.join(known)}"
        )
        return 0
    host_event, kind = found
    return _run(adapter, host_event, kind, stdin)


def noop(adapter: ModuleType, host_event: str, kind: str) -> dict[str, object]:
    """The host's answer to an event we do nothing with."""
    from claude_mem.hooks.event import HookEvent, HookResult  # noqa: PLC0415

    out: dict[str, object] = adapter.output(HookEvent(adapter.NAME, host_event, kind), HookResult())
    return out


def _run(adapter: ModuleType, host_event: str, kind: str, stdin: tuple[bytes, str] | None) -> int:
    if os.environ.get("CLAUDE_MEM_INTERNAL") == "1":  # our own observer's agent: never memory
        _emit(noop(adapter, host_event, kind))
        return 0
    if stdin is None:
        from claude_mem.hooks import stdio  # noqa: PLC0415

        stdin = stdio.read()
    raw, status = stdin
    fields = {"platform": adapter.NAME, "event": host_event}
    if status != "ok" or not raw.strip():
        if status == "too_large":
            _log(None, "WARN", "payload over 16 MiB dropped", **fields)
        elif status != "tty":  # a person at a terminal is not a broken host
            from claude_mem.hooks import state  # noqa: PLC0415

            what = f"{adapter.NAME} {host_event} hook got no payload on stdin ({status})"
            state.mark_capture_broken(what)
            _log(None, "WARN", "empty stdin: capture broken", **fields)
        return 0
    if kind == "noop":  # e.g. Gemini's per-chunk model events: not even worth parsing
        _emit(noop(adapter, host_event, kind))
        return 0
    payload = parse(raw)
    if isinstance(payload, str):
        _log(None, "WARN", f"payload is {payload}", bytes=len(raw), **fields)
        return 0

    def handle(event: HookEvent) -> HookResult:
        if event.cwd is None:
            event.cwd = process_cwd()
        return _handle(event, adapter)

    out, result = answer(adapter, host_event, kind, payload, handle)
    _emit(out)
    if result.stderr:
        say(result.stderr)
    return result.exit_code


def answer(
    adapter: ModuleType,
    host_event: str,
    kind: str,
    payload: dict[str, object],
    handle: Callable[[HookEvent], HookResult],
) -> tuple[dict[str, object], HookResult]:
    """The host's JSON answer to one parsed payload, and the handler's result: what a command
    hook and the worker's http hook route (worker/routes/hooks.py) share."""
    from claude_mem.hooks.event import HookResult  # noqa: PLC0415

    disabled = getattr(adapter, "disabled", None)
    if disabled is not None and disabled(payload):
        return noop(adapter, host_event, kind), HookResult()
    event = adapter.normalize(payload, host_event, kind)
    result = handle(event)
    return adapter.output(event, result), result


def _handle(event: HookEvent, adapter: ModuleType) -> HookResult:
    from claude_mem.hooks.handlers import HANDLERS, Context  # noqa: PLC0415
    from claude_mem.hooks.transport import Worker  # noqa: PLC0415
    from claude_mem.settings import load as load_settings  # noqa: PLC0415

    settings = load_settings()
    worker = Worker(settings)
    result = HANDLERS[event.kind](event, Context(settings, worker))
    if worker.error is not None:
        from claude_mem.hooks import state  # noqa: PLC0415

        count = state.note_failure(
            worker.error,
            threshold=worker.threshold,
            can_report=event.kind in adapter.LOUD,
            start_attempted=worker.start_attempted,
        )
        _log(settings, "WARN", "worker unavailable", platform=event.platform,
             event=event.host_event, error=worker.error)  # fmt: skip
        if worker.spool_note is not None:  # the first event the spool could not keep
            _log(settings, "WARN", "event dropped", reason=worker.spool_note)
            result.stderr = worker.spool_note
        if count:
            result.stderr = (
                f"claude-mem: capture has failed {count} times in a row ({worker.error}); "
                "run `claude-mem doctor`"
            )
            result.exit_code = 2
    elif worker.reached:
        from claude_mem.hooks import state  # noqa: PLC0415

        state.note_success()
    return result
