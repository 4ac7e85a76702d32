"""Liveness, readiness and the API's own description: answered before the store is open."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec

from claude_mem import log, paths
from claude_mem.worker.api import ApiError, Call, Endpoint


class Health(msgspec.Struct):
    status: str
    version: str
    pid: int
    port: int | None
    uptime_s: float
    ready: bool
    error: str | None
    data_dir_id: str  # paths.data_dir_id(): which memory this worker serves, without the path
    embedding: dict[str, Any] | None = None  # the embedder's state; None when vectors are off


class Readiness(msgspec.Struct):
    ready: bool
    reason: str | None = None


def health(call: Call) -> Health:
    state = call.state
    return Health(
        status="ok",
        version=state.version,
        pid=state.pid,
        port=state.port,
        uptime_s=round(time.time() - state.started_at, 3),
        ready=state.ready,
        error=state.error,
        data_dir_id=paths.data_dir_id(),
        embedding=state.embedding.health() if state.embedding else None,
    )


def readiness(call: Call) -> Readiness:
    if not call.state.ready:
        raise ApiError(503, call.state.error or "the database is still opening", "starting")
    return Readiness(ready=True)


class ShutdownQuery(msgspec.Struct):
    reason: str = "requested"


class Stopping(msgspec.Struct):
    stopping: bool
    pid: int


async def shutdown(call: Call) -> Stopping:
    """Stop gracefully after answering; a launcher then starts the current version."""
    stop = call.state.request_shutdown
    if stop is None:
        raise ApiError(409, "this worker was not started in a way that can stop itself", "conflict")
    query: ShutdownQuery = call.query
    log.info("worker", "shutdown requested", reason=query.reason)
    asyncio.get_running_loop().call_later(0.05, stop)
    return Stopping(True, call.state.pid)


def openapi_document(call: Call) -> Any:
    from claude_mem.worker.api import openapi  # noqa: PLC0415
    from claude_mem.worker.routes import ENDPOINTS  # noqa: PLC0415 - the list includes this module

    return openapi(ENDPOINTS)


ENDPOINTS = [
    Endpoint("GET", "/api/health", health, "Liveness and version", "health",
             response=Health, auth=False, needs_db=False, errors=()),
    Endpoint("GET", "/api/readiness", readiness, "200 once the store is open, 503 before",
             "health", response=Readiness, auth=False, needs_db=False, errors=(503,)),
    Endpoint("POST", "/api/admin/shutdown", shutdown,
             "Stop gracefully (in-flight requests finish, WAL checkpointed)", "health",
             query=ShutdownQuery, response=Stopping, needs_db=False, errors=(400, 409)),
    Endpoint("GET", "/api/openapi.json", openapi_document, "This API's OpenAPI document",
             "health", auth=True, needs_db=False, errors=()),
]  # fmt: skip
