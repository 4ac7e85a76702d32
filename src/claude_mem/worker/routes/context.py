"""What the agent is given: session-start context, the file-read gate; and the live stream.

Injection honours the user's switches: nothing for an excluded project (globs or a
`.claude-mem-ignore` file, judged from the cwd) nor in capture-only mode. `project=` names the
projects outright (API and MCP callers) and skips the cwd-based exclusion. Settings problems (a
broken settings.json, a value not allowed) head the context and the user's terminal view, so
the person whose edit was ignored hears of it at the next session start.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from starlette.responses import StreamingResponse

from claude_mem.context import given
from claude_mem.context.file_gate import file_timeline
from claude_mem.context.render import Context, compose
from claude_mem.context.terminal import terminal_view
from claude_mem.control import injection_allowed
from claude_mem.project import ProjectIdentity, resolve_project
from claude_mem.settings import Settings
from claude_mem.store.rows import safe_text
from claude_mem.worker.api import ApiError, Call, Endpoint, Text


class ContextQuery(msgspec.Struct, kw_only=True):
    project: list[str] = []
    cwd: str | None = None
    # The host's session being started: its rows become what it was given (context.given),
    # so prompt-time injection does not hand them over again.
    session: Annotated[str, msgspec.Meta(max_length=500)] | None = None
    platform: Annotated[str, msgspec.Meta(max_length=100)] = "claude-code"


class FileQuery(msgspec.Struct, kw_only=True):
    path: Annotated[str, msgspec.Meta(min_length=1, max_length=4096)]
    mtime_ms: Annotated[int, msgspec.Meta(ge=0)]
    cwd: str | None = None


class StreamQuery(msgspec.Struct, kw_only=True):
    last_event_id: Annotated[int, msgspec.Meta(ge=0)] | None = None


class SessionStartContext(msgspec.Struct):
    """`context` for the agent, `terminal` for the user (empty when there is nothing to show)."""

    context: str
    terminal: str
    tokens: int
    dropped: int


def _identity(call: Call, cwd: str) -> ProjectIdentity:
    return resolve_project(
        cwd, excluded=call.state.settings.get_str("CLAUDE_MEM_EXCLUDED_PROJECTS")
    )


def _allowed(call: Call) -> bool:
    return injection_allowed(call.state.settings.get_str("CLAUDE_MEM_MODE"))


def _settings_warning(settings: Settings) -> str | None:
    """One line on the settings' problems, or None when there are none."""
    problems = settings.problems
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"⚠ claude-mem: {problems[0]}{more}. Run `claude-mem doctor`."


def _context(call: Call) -> Context | None:
    """The context asked for, or None when the user's switches say inject nothing."""
    query: ContextQuery = call.query
    if query.project:
        projects = tuple(query.project)
    elif query.cwd is not None:
        identity = _identity(call, query.cwd)
        if identity.excluded:
            return None
        if call.state.history is not None:
            call.state.history.asked(identity)  # only queues: the history is read later
        projects = identity.all_projects
    else:
        raise ApiError(400, "give project=NAME (repeatable) or cwd=PATH", "invalid_query")
    if not _allowed(call):
        return None
    state = call.state
    assert state.db is not None
    pipeline = state.pipeline
    settings = state.settings
    warnings = [
        _settings_warning(settings),
        pipeline.health.warning(pipeline.chain()) if pipeline is not None else None,
    ]
    warning = "\n".join(line for line in warnings if line) or None
    context = compose(state.db.read(), projects, settings, warning=warning)
    if query.session:
        labels = (row.ident for row in context.rows)
        given.record(safe_text(query.platform), safe_text(query.session), labels, start=True)
    return context


def inject_context(call: Call) -> Text:
    context = _context(call)
    return Text(context.text if context is not None else "")


def session_start_context(call: Call) -> SessionStartContext:
    context = _context(call)
    if context is None:
        return SessionStartContext("", "", 0, 0)
    lines = [_settings_warning(call.state.settings), terminal_view(context)]
    terminal = "\n".join(line for line in lines if line)
    return SessionStartContext(context.text, terminal, context.tokens, context.dropped)


def file_context(call: Call) -> Text:
    query: FileQuery = call.query
    if not _allowed(call):
        return Text("")
    identity = _identity(call, query.cwd or query.path)
    if identity.excluded:
        return Text("")
    assert call.state.db is not None
    return Text(
        file_timeline(
            call.state.db.read(),
            query.path,
            folders=(query.cwd, identity.root, identity.parent_root),
            projects=identity.all_projects,
            mtime_ms=query.mtime_ms,
        )
    )


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
    Endpoint("GET", "/api/context/session-start", session_start_context,
             "Session-start context for the agent plus its terminal view for the user",
             "context", query=ContextQuery, response=SessionStartContext),
    Endpoint("GET", "/api/context/file", file_context,
             "File-read gate: earlier observations of a file unless it changed since, and "
             "the commits that explain it (text/plain, empty when none)", "context",
             query=FileQuery,
             media_type="text/plain"),
    Endpoint("GET", "/api/stream", event_stream,
             "Server-sent events: prompts, observations, summaries, queue status; resumable "
             "with Last-Event-ID", "context", query=StreamQuery, media_type="text/event-stream",
             needs_db=False),
]  # fmt: skip
