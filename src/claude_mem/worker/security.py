"""Requests must come from this machine's own clients: a loopback Host (defeats DNS rebinding)
and no foreign browser Origin. The token check lives in api.route, per endpoint."""

from __future__ import annotations

from collections.abc import Callable

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


def host_name(host_header: str) -> str:
    """`host` without its port: '127.0.0.1:8000' → '127.0.0.1', '[::1]:80' → '[::1]'."""
    if host_header.startswith("["):
        return host_header.split("]", 1)[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def allowed_origins(port: int | None) -> set[str]:
    return {f"http://{name}:{port}" for name in ("127.0.0.1", "localhost", "[::1]")}


def refusal(scope: Scope, port: int | None) -> JSONResponse | None:
    """The 403 for an http request that is not local (a foreign Host or Origin), else None:
    every request passes here, through LocalOnly or the app's hook fast path."""
    headers = Headers(scope=scope)
    host = headers.get("host", "")
    if host_name(host).lower() not in LOOPBACK_HOSTS:
        return JSONResponse(
            {"error": f"Host {host!r} is not a loopback name", "code": "forbidden_host"},
            status_code=403,
        )
    origin = headers.get("origin")
    if origin is not None and origin not in allowed_origins(port):
        return JSONResponse(
            {"error": f"cross-origin request from {origin!r} refused", "code": "forbidden_origin"},
            status_code=403,
        )
    return None


class LocalOnly:
    """ASGI middleware refusing non-loopback Host headers and cross-origin browser requests."""

    def __init__(self, app: ASGIApp, port_of: Callable[[], int | None]) -> None:
        self.app = app
        self.port_of = port_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = refusal(scope, self.port_of())
        if refused is not None:
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)
