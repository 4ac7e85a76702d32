"""Claude Code's http hooks (`"type": "http"`): the per-tool-call events, without a process.

Claude Code POSTs the payload a command hook reads on stdin and reads the same JSON answer;
a non-2xx answer or a timeout is a non-blocking error for it. The events that must be able to
start a worker (SessionStart, UserPromptSubmit, Setup) stay command hooks. Only the hook token
(`x-claude-mem-hook-token`) opens these routes. The answer never waits longer than the hook
timeout (the file gate's shorter one for PreToolUse): past it, `{}`, and the event is still
recorded once its write gets its turn.
"""

from __future__ import annotations

import functools
from typing import Any

from claude_mem.hooks import runner
from claude_mem.hooks.adapters import claude_code
from claude_mem.hooks.adapters.base import event_key
from claude_mem.hooks.event import HookEvent, HookResult
from claude_mem.hooks.handlers import FILE_GATE_TIMEOUT_S, HANDLERS, Context
from claude_mem.worker.api import BLOCKED, ApiError, Call, Endpoint, in_executor, without_waiting
from claude_mem.worker.local_worker import LocalWorker

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
    timeout = settings.get_int("CLAUDE_MEM_HOOK_TIMEOUT_MS") / 1000
    if kind == "pre_read":
        timeout = min(timeout, FILE_GATE_TIMEOUT_S)
    worker = LocalWorker(call.state, _local_endpoints(), timeout)

    def handle(event: HookEvent) -> HookResult:
        return HANDLERS[event.kind](event, Context(settings, worker))

    def run() -> dict[str, object]:
        return runner.answer(claude_code, host_event, kind, payload, handle)[0]

    if kind in INLINE_KINDS:
        inline: dict[str, object] = without_waiting(run)
        if inline is not BLOCKED:
            return inline
    done, answer = await in_executor(run, timeout)
    return answer if done else {}


ENDPOINTS = [
    Endpoint("POST", "/api/hooks/claude-code/{event}", claude_code_hook,
             "A Claude Code http hook: its raw payload in, the answer a command hook prints out",
             "hooks", body=HookPayload, raw_body=True, hook=True, errors=(400, 404)),
]  # fmt: skip
