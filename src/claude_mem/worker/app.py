"""The ASGI application: declared endpoints, local-only middleware, two-phase lifespan."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response

from claude_mem import log
from claude_mem.settings import Settings
from claude_mem.worker import api
from claude_mem.worker.routes import ENDPOINTS
from claude_mem.worker.security import LocalOnly
from claude_mem.worker.state import WorkerState

# JSON bodies above this are refused with 413; oversize *fields* inside smaller bodies are
# truncated instead (see store.limits), so a giant tool output never loses its event.
BODY_LIMIT_BYTES = 16 * 1024 * 1024


def create_app(settings: Settings | None = None, state: WorkerState | None = None) -> Starlette:
    """The worker app. The socket answers at once; the store opens in the background."""
    state = state or WorkerState(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state.stream.bind(asyncio.get_running_loop())
        state.start_opening()
        log.info("worker", "listening", pid=state.pid, port=state.port, version=state.version)
        yield
        await state.close()
        log.info("worker", "stopped", pid=state.pid)

    async def json_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
        if status >= 500:
            log.error("worker", "unhandled error", path=request.url.path, error=repr(exc))
        return api.error_response(
            status,
            f"{request.method} {request.url.path}: {detail}",
            "not_found" if status == 404 else "error",
        )

    routes = [api.route(ep, state, BODY_LIMIT_BYTES) for ep in ENDPOINTS]
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: json_error, Exception: json_error},
        middleware=[Middleware(LocalOnly, port_of=lambda: state.port)],
        lifespan=lifespan,
    )
    app.state.worker = state
    return app
