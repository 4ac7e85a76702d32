"""Hook events served inside the worker: Claude Code's http hooks, and command hooks' events.

Claude Code's http hooks (`"type": "http"`) are the per-tool-call events without a process:
Claude Code POSTs the payload a command hook reads on stdin and reads the same JSON answer; a
non-2xx answer or a timeout is a non-blocking error for it. The events that must be able to
start a worker (SessionStart, UserPromptSubmit, Setup) stay command hooks, and a command hook
of any host hands its payload to the command route when its worker runs (hooks/forward.py).
Only the hook token (`x-claude-mem-hook-token`) opens Claude Code's; the command route takes
the API token, as the command hook's other calls do (its answers hold memory, which the hook
token never reads). The answer never waits longer than the hook timeout (the file gate's
shorter one for PreToolUse): past it, the answer to nothing (`{}` for Claude Code), and the
event is still recorded once its write gets its turn.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from starlette.responses import Response

from claude_mem.hooks import forward, jsonio, runner, state
from claude_mem.hooks.adapters import claude_code, load
from claude_mem.hooks.adapters.base import event_key
from claude_mem.hooks.event import HookEvent, HookResult
from claude_mem.hooks.handlers import FILE_GATE_TIMEOUT_S, HANDLERS, Context
from claude_mem.hooks.percent import quote, unquote
from claude_mem.worker.api import (
    BLOCKED,
    JSON,
    ApiError,
    Call,
    Endpoint,
    in_executor,
    without_waiting,
)
from claude_mem.worker.local_worker import LocalWorker

if TYPE_CHECKING:
    from claude_mem.settings import Settings

HTTP_KINDS = frozenset({"pre_read", "tool", "stop", "session_end"})
# Once per tool call and pure CPU up to its one write: tried on the event loop first, as the
# ingest routes are (Endpoint.inline); the others read files or the store, so run on a thread.
INLINE_KINDS = frozenset({"tool"})
HookPayload = dict[str, Any]  # whatever the host sends; the adapter reads what it knows


@functools.cache
def _local_endpoints() -> dict[tuple[str, str], Endpoint]:
    from claude_mem.worker.routes import ENDPOINTS  # noqa: PLC0415 - this module is one of them

    return {(ep.method, ep.path): ep for ep in ENDPOINTS if "{" not in ep.path and not ep.hook}


def _event(name: str) -> tuple[str, str]:
    found = claude_code.EVENTS.get(event_key(name))
    if found is None:
        raise ApiError(404, f"{name!r} is not a Claude Code hook event", "unknown_event")
    if found[1] not in HTTP_KINDS:
        served = ", ".join(sorted({e for e, k in claude_code.EVENTS.values() if k in HTTP_KINDS}))
        raise ApiError(
            400, f"{found[0]} runs as a command hook; http hooks serve {served}", "not_http"
        )
    return found


async def claude_code_hook(call: Call) -> dict[str, object]:
    host_event, kind = _event(call.params["event"])
    payload = runner.parse(call.body or b"")
    if isinstance(payload, str):
        raise ApiError(400, f"the hook payload is {payload}", "invalid_json")
    settings = call.state.settings
    answered = await _answer(
        call, claude_code, host_event, kind, payload, settings=settings, cwd=None
    )
    return {} if answered is None else answered[0]


async def command_hook(call: Call) -> Response:
    """A command hook's event, handed over whole by its fast path (hooks/forward.py): the
    answer and exit code the hook's full path (hooks.runner) would have given."""
    adapter = load(call.params["platform"])
    found = None if adapter is None else adapter.EVENTS.get(event_key(call.params["event"]))
    if adapter is None or found is None:
        raise ApiError(404, "no such platform or event; the hook's full path says why",
                       "unknown_event")  # fmt: skip
    host_event, kind = found
    settings = call.state.settings  # one look at settings.json for the whole event
    wait = call.request.headers.get(forward.WAIT_HEADER, "")
    if not wait.isdigit() or settings.get_int("CLAUDE_MEM_HOOK_TIMEOUT_MS") > int(wait):
        raise ApiError(409, "the hook timeout is longer than the hook waits", "hook_timeout")
    answered = None
    if kind != "noop":  # as the full path: Gemini's per-chunk model events are not even parsed
        payload = runner.parse(call.body or b"")
        if isinstance(payload, str):
            raise ApiError(400, f"the hook payload is {payload}", "invalid_json")
        cwd = call.request.headers.get(forward.CWD_HEADER)
        cwd = None if cwd is None else unquote(cwd)
        answered = await _answer(
            call, adapter, host_event, kind, payload, settings=settings, cwd=cwd
        )
    answer, result = answered or (runner.noop(adapter, host_event, kind), HookResult())
    state.note_success()  # the hook reached its worker, as the full path records
    headers: dict[str, str] = {}
    if result.exit_code:
        headers[forward.EXIT_HEADER] = str(result.exit_code)
    if result.stderr:
        said = result.stderr.encode("utf-8", "replace").decode("utf-8")  # no lone surrogate
        headers[forward.STDERR_HEADER] = quote(said)
    body = jsonio.dumps(answer)  # byte for byte what the full path prints
    return Response(body.encode("utf-8", "replace"), media_type=JSON, headers=headers)


async def _answer(
    call: Call,
    adapter: ModuleType,
    host_event: str,
    kind: str,
    payload: HookPayload,
    *,
    settings: Settings,
    cwd: str | None,
) -> tuple[dict[str, object], HookResult] | None:
    """(the host's answer, the handler's result) for one event, served by the adapter and
    handlers in this worker (LocalWorker); None past the hook timeout (the file gate's shorter
    one for a Read), and the event is still recorded once its write gets its turn."""
    timeout = settings.get_int("CLAUDE_MEM_HOOK_TIMEOUT_MS") / 1000
    if kind == "pre_read":
        timeout = min(timeout, FILE_GATE_TIMEOUT_S)
    worker = LocalWorker(call.state, _local_endpoints(), timeout)

    def handle(event: HookEvent) -> HookResult:
        if event.cwd is None:
            event.cwd = cwd
        return HANDLERS[event.kind](event, Context(settings, worker))

    def run() -> tuple[dict[str, object], HookResult]:
        return runner.answer(adapter, host_event, kind, payload, handle)

    if kind in INLINE_KINDS:
        inline = without_waiting(run)
        if inline is not BLOCKED:
            return cast("tuple[dict[str, object], HookResult]", inline)
    done, answered = await in_executor(run, timeout)
    return cast("tuple[dict[str, object], HookResult]", answered) if done else None


ENDPOINTS = [
    Endpoint("POST", "/api/hooks/claude-code/{event}", claude_code_hook,
             "A Claude Code http hook: its raw payload in, the answer a command hook prints out",
             "hooks", body=HookPayload, raw_body=True, hook=True, errors=(400, 404)),
    Endpoint("POST", f"{forward.ROUTE}/{{platform}}/{{event}}", command_hook,
             "A command hook's raw payload in, the answer it prints out (its exit code and "
             "stderr in headers)", "hooks", body=HookPayload, raw_body=True, direct=True,
             errors=(400, 404, 409)),
]  # fmt: skip
