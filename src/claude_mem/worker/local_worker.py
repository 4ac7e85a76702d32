"""The worker as a hook's handler sees it, inside the worker itself.

Claude Code's http hooks are served by the same adapter and handlers as the command hooks
(`hooks.runner.answer`, `hooks.handlers`), so every rule of an event (skip-tools, privacy
cleaning, #nomem pauses, capture-blocked modes, the file gate's once-per-session) lives in one
place. Each handler's worker call goes straight to the endpoint's handler in this thread
(`api.serve_here`): no loopback socket, no token, the same body validation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import msgspec

from claude_mem import log
from claude_mem.worker.api import Endpoint, serve_here
from claude_mem.worker.client import Response
from claude_mem.worker.state import WorkerState


def _encode(payload: object) -> bytes:
    """The JSON a command hook would send: msgspec's, or, for text holding lone surrogates
    (which it refuses), the standard library's with them replaced, as a hook's socket does."""
    try:
        return msgspec.json.encode(payload)
    except UnicodeEncodeError:
        return json.dumps(payload, ensure_ascii=False).encode("utf-8", "replace")


class LocalWorker:
    """`hooks.handlers.WorkerLink` served in-process by `endpoints` ((method, path) → Endpoint)."""

    in_process = True  # ingest checks pauses and the store cleans before anything is kept

    def __init__(
        self, state: WorkerState, endpoints: Mapping[tuple[str, str], Endpoint], timeout: float
    ) -> None:
        self.state, self.endpoints, self.timeout = state, endpoints, timeout

    @property
    def host(self) -> str:  # read only if a handler asks (none an http hook runs does)
        return self.state.settings.get_str("CLAUDE_MEM_WORKER_HOST")

    @property
    def port(self) -> int:
        return self.state.port or 0

    def ensure_started(self, wait_s: float) -> bool:
        return True  # this worker is the one answering

    def call(self, method: str, path: str, payload: object = None) -> Response | None:
        endpoint = self.endpoints.get((method, path.partition("?")[0]))
        if endpoint is None:
            status, media, body = 404, "application/json", b'{"error": "no such route"}'
        else:
            raw = None if payload is None else _encode(payload)
            status, media, body = serve_here(endpoint, self.state, method, path, raw)
        if status >= 400:
            log.event("INFO" if status == 404 else "WARN", "hook", "worker refused the event",
                      request=f"{method} {path.partition('?')[0]}", status=status,
                      reason=body[:200].decode("utf-8", "replace"))  # fmt: skip
        return Response(status, {"content-type": media}, body)
