"""The text injected at session start, and the live event stream."""

from __future__ import annotations

from typing import Annotated

import msgspec
from starlette.responses import StreamingResponse

from claude_mem.context.render import render
from claude_mem.project import resolve_project
from claude_mem.worker.api import ApiError, Call, Endpoint, Text


class ContextQuery(msgspec.Struct, kw_only=True):
    project: list[str] = []
    cwd: str | None = None


class StreamQuery(msgspec.Struct, kw_only=True):
    last_event_id: Annotated[int, msgspec.Meta(ge=0)] | None = None


def inject_context(call: Call) -> Text:
    query: ContextQuery = call.query
    state = call.state
    if query.project:
        projects = tuple(query.project)
    elif query.cwd is not None:
        identity = resolve_project(
            query.cwd, excluded=state.settings.get_str("CLAUDE_MEM_EXCLUDED_PROJECTS")
        )
        if identity.excluded:
            return Text("")
        projects = identity.all_projects
    else:
        raise ApiError(400, "give project=NAME (repeatable) or cwd=PATH", "invalid_query")
    assert state.db is not None
    pipeline = state.pipeline
    warning = pipeline.health.warning(pipeline.chain()) if pipeline is not None else None
    return Text(render(state.db.read(), projects, state.settings, warning=warning))


async def event_stream(call: Call) -> StreamingResponse:
    query: StreamQuery = call.query
    header = call.request.headers.get("last-event-id", "")
    last = query.last_event_id
    if last is None and header.isdigit():
        last = int(header)
    hello = {"version": call.state.version}
    return StreamingResponse(
        call.state.stream.subscribe(last, hello),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


ENDPOINTS = [
    Endpoint("GET", "/api/context/inject", inject_context,
             "Session-start context for project(s) or a cwd (text/plain)", "context",
             query=ContextQuery, media_type="text/plain"),
    Endpoint("GET", "/api/stream", event_stream,
             "Server-sent events: prompts, observations, summaries, queue status; resumable "
             "with Last-Event-ID", "context", query=StreamQuery, media_type="text/event-stream",
             needs_db=False),
]  # fmt: skip
