"""The ASGI application: declared endpoints, local-only middleware, two-phase lifespan."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import Receive, Scope, Send

from claude_mem import log
from claude_mem.settings import Settings
from claude_mem.worker import api
from claude_mem.worker.routes import ENDPOINTS
from claude_mem.worker.security import LocalOnly, refusal
from claude_mem.worker.state import WorkerState

# JSON bodies above this are refused with 413; oversize *fields* inside smaller bodies are
# truncated instead (see store.limits), so a giant tool output never loses its event.
BODY_LIMIT_BYTES = 16 * 1024 * 1024


class WorkerApp(Starlette):
    """Starlette, with the direct routes (the hook routes among them) served ahead of its
    middleware and router.

    Claude Code waits for each http hook, once per tool call, a command hook for its worker's
    answer, and an agent for each search: those requests go straight to their route's
    endpoint, through the same local-only check (`security.refusal`), the same route matching
    and the same endpoint function (token, body limit, decoding, answer), and the same error
    handler; every other request (a method the route does not serve, too) takes Starlette's
    whole stack.
    """

    def __init__(
        self,
        *,
        direct_routes: list[Route],
        error_handler: Callable[[Request, Exception], Awaitable[Response]],
        port_of: Callable[[], int | None],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.error_handler, self.port_of = error_handler, port_of
        # A fixed path is found by the request's path alone, one with parameters by the fixed
        # part it starts with.
        self.direct_routes = {r.path: [r] for r in direct_routes if "{" not in r.path}
        self.starts = [(r.path.partition("{")[0], r) for r in direct_routes if "{" in r.path]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            routes = self.direct_routes.get(path) or [
                route for start, route in self.starts if path.startswith(start)
            ]
            for route in routes:
                match, child = route.matches(scope)
                if match is Match.FULL:
                    scope.update(child)
                    scope["app"] = self
                    await self._serve(route, scope, receive, send)
                    return
        await super().__call__(scope, receive, send)

    async def _serve(self, route: Route, scope: Scope, receive: Receive, send: Send) -> None:
        response = refusal(scope, self.port_of())
        if response is not None:
            await response(scope, receive, send)
            return
        try:
            response = await route.endpoint(Request(scope, receive, send))
        except Exception as exc:  # as Starlette's ServerErrorMiddleware: answer, then raise
            await (await self.error_handler(Request(scope), exc))(scope, receive, send)
            raise
        await response(scope, receive, send)


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
    port_of = lambda: state.port  # noqa: E731 - read at each request: set once listening
    app = WorkerApp(
        direct_routes=[r for r, ep in zip(routes, ENDPOINTS, strict=True) if ep.direct or ep.hook],
        error_handler=json_error,
        port_of=port_of,
        routes=routes,
        exception_handlers={HTTPException: json_error, Exception: json_error},
        middleware=[Middleware(LocalOnly, port_of=port_of)],
        lifespan=lifespan,
    )
    app.state.worker = state
    return app
