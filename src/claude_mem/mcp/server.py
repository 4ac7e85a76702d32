"""The stdio MCP server (`claude-mem mcp`): the memory tools proxied to the worker, as the SDK
declares and serves them (`front.py` answers the handshake first, from this module's answers).

stdout belongs to the protocol: the SDK serves it from a private descriptor and points fd 1
at stderr, and Python logging goes to our log file, so nothing else can corrupt a message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field, ValidationError

from claude_mem import __version__, log
from claude_mem.mcp.tools import MemoryTools, ToolFailure, WorkerProxy
from claude_mem.text import one_line
from claude_mem.vocabulary import DEFAULT_TYPE, OBSERVATION_TYPES, ObservationType, SearchScope

NAME = "claude-mem"

INSTRUCTIONS = """\
Persistent memory of past coding sessions in this and other projects.
Read it in three steps to spend few tokens: `search` for a compact index (about 80 tokens \
per hit), `timeline` to see what happened around one hit, then `get_observations` only for \
the handful of ids you really need (about 500-1000 tokens each). Use `save_memory` to keep \
a decision or finding for future sessions."""

SEARCH = """\
Search past work (observations, session summaries, prompts) in persistent memory. \
Use this FIRST whenever earlier sessions might help: "how did we fix X", "why is Y like \
this", "what changed in file Z", before re-investigating something. Returns a compact \
index, one table row per hit, best first: id, date (UTC), type, title, a teammate's \
record's author, files, token cost to fetch. Then call timeline(anchor=id) for context \
or get_observations(ids) for the few hits that matter; never fetch everything. Plain \
words, paths and identifiers are all searched literally. A newer decision on the same \
subject supersedes an older one and ranks first; as_of=DATE answers with what held on \
that date."""

TIMELINE = """\
Show what happened just before and after one point in memory, in time order. Use it \
after search, to understand the context of a hit (what led to it, what followed), by \
passing anchor=<id from search> (12 for an observation, S12 a summary, P12 a prompt, or a \
date); or pass query=... to anchor on the best match. Returns index rows like search; \
fetch details with get_observations."""

GET_OBSERVATIONS = """\
Fetch full observations by id: title, subtitle, narrative, facts, concepts, files read \
and modified, session, prompt number, creation time. Use only for the few ids from \
search or timeline you actually need (each costs hundreds of tokens); batch them in \
one call."""

SAVE_MEMORY = """\
Store an explicit memory for future sessions: a decision and its reason, a gotcha, a \
convention, a finding worth keeping. Use when the user asks you to remember something, \
or when you learned something non-obvious that automatic capture might miss. Write it \
self-contained (future readers lack this conversation). Text inside <private> tags is \
never stored. Returns the new memory's id."""

SESSION_START_CONTEXT = """\
Get the same memory summary that is injected when a session starts: recent observations \
and summaries for the project. Use it when that context is missing (e.g. a platform \
without hooks, or after switching project) or to refresh it; pass project or cwd to look \
at another project. Defaults to the current directory's project."""

CORPUS_LIST = """\
List the knowledge corpora: named, saved selections of past observations (by project, \
type, concept, search query, dates) that can answer questions as a whole. Shows each \
corpus's size, date range and types. Use before corpus_query to pick a corpus."""

CORPUS_BUILD = """\
Build (or replace) a knowledge corpus: select past observations by project, search query, \
observation types, concepts and date, and save them under a name (letters, digits, . _ -). \
Use it to gather everything known about one topic (an area of the code, a long-running \
effort) so corpus_query can answer questions across all of it."""

CORPUS_QUERY = """\
Ask a knowledge corpus a question. The answer draws only on the corpus's observations and \
cites them by id (#12); with the offline provider it returns the best-matching \
observations instead of prose. Use get_observations on cited ids for full detail."""

CorpusName = Annotated[
    str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$",
               description="corpus name")
]  # fmt: skip

Query = Annotated[str, Field(min_length=1, description="what to look for (a long text is clipped)")]
Project = Annotated[str | None, Field(max_length=300, description="only this project")]
TypeFilter = Annotated[
    str | None,
    Field(description=f"observation types, comma-separated ({', '.join(OBSERVATION_TYPES)})"),
]  # fmt: skip
Since = Annotated[str | None, Field(description="only after this date (YYYY-MM-DD or ISO)")]
AsOf = Annotated[
    str | None,
    Field(description="what held on this date (YYYY-MM-DD or ISO): nothing newer, nothing "
          "superseded by then"),
]  # fmt: skip
Anchor = Annotated[
    int | str | None,
    Field(description="record to center on: an observation id (12), S<id>, P<id>, or a date"),
]
Scope = Annotated[
    SearchScope | None,
    Field(description="team: search the team server's memory beyond the local copy"),
]
AnchorQuery = Annotated[str | None, Field(description="center on the best match instead")]
Depth = Annotated[int, Field(ge=0, le=50)]
Ids = Annotated[
    list[Annotated[int, Field(ge=0)]],
    Field(min_length=1, max_length=100, description="observation ids from search or timeline"),
]
MemoryText = Annotated[
    str, Field(min_length=1, max_length=20_000, description="the memory, self-contained")
]
Title = Annotated[str | None, Field(max_length=300, description="a short title")]
Concepts = Annotated[
    list[str] | None,
    Field(max_length=20, description="tags: how-it-works, why-it-exists, gotcha, pattern, ..."),
]


class _ToLogFile(logging.Handler):
    """Forward library log records (the SDK's, anyio's) to our log file."""

    def emit(self, record: logging.LogRecord) -> None:
        level = {logging.DEBUG: "DEBUG", logging.INFO: "INFO", logging.WARNING: "WARN"}.get(
            record.levelno, "ERROR" if record.levelno > logging.WARNING else "DEBUG"
        )
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            message = str(record.msg)
        log.event(level, "mcp", message, logger=record.name)


def _route_logging() -> None:
    """Send all logging to our file; the SDK's basicConfig then finds handlers and adds none."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(_ToLogFile())
    root.setLevel(logging.INFO)


def argument_error(tool: str, error: ValidationError) -> str:
    """Arguments that break a tool's schema, on one line for the model: what is wrong with
    which argument, without pydantic's report and its links to pydantic's site."""
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        what = "is required" if item["type"] == "missing" else item["msg"]
        problems.append(f"`{where}` {what[:1].lower()}{what[1:]}")
    return one_line(f"{tool}: invalid arguments: {'; '.join(problems)} (see its input schema)")


def build_server(tools: MemoryTools | None = None) -> Any:
    """The MCPServer with our five tools (`tools` is injectable for tests)."""
    from mcp.server.mcpserver import MCPServer  # noqa: PLC0415 - a slow import, only here
    from mcp.server.mcpserver.exceptions import (  # noqa: PLC0415
        ToolError,
        UnexpectedToolError,
    )

    class Server(MCPServer):
        """The SDK's server, its tool errors in our words: our own message as it is (not
        behind "Error executing tool"), bad arguments as `argument_error` says them."""

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if isinstance(exc, UnexpectedToolError) or cause is None:
                    raise
                if isinstance(cause, ValidationError):
                    raise ToolError(argument_error(name, cause)) from cause
                raise ToolError(one_line(str(cause))) from cause

    memory = tools or MemoryTools(WorkerProxy())

    async def run(fn: Callable[..., str], *args: Any, **kwargs: Any) -> str:
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except ToolFailure as exc:
            log.warn("mcp", "tool failed", tool=fn.__name__, error=str(exc))
            raise ToolError(str(exc)) from None

    server = Server(NAME, instructions=INSTRUCTIONS, version=__version__, log_level="INFO")

    @server.tool(description=SEARCH, structured_output=False)
    async def search(
        query: Query,
        project: Project = None,
        type: TypeFilter = None,
        since: Since = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
        *,
        scope: Scope = None,
        as_of: AsOf = None,
    ) -> str:
        return await run(memory.search, query, project, type, since, limit, scope=scope,
                         as_of=as_of)  # fmt: skip

    @server.tool(description=TIMELINE, structured_output=False)
    async def timeline(
        anchor: Anchor = None,
        query: AnchorQuery = None,
        depth_before: Depth = 5,
        depth_after: Depth = 5,
        project: Project = None,
    ) -> str:
        return await run(memory.timeline, anchor, query, depth_before, depth_after, project)

    @server.tool(description=GET_OBSERVATIONS, structured_output=False)
    async def get_observations(ids: Ids) -> str:
        return await run(memory.get_observations, ids)

    @server.tool(description=SAVE_MEMORY, structured_output=False)
    async def save_memory(
        text: MemoryText,
        title: Title = None,
        type: ObservationType = DEFAULT_TYPE,
        concepts: Concepts = None,
        project: Annotated[str | None, Field(description="default: the cwd's project")] = None,
    ) -> str:
        return await run(memory.save_memory, text, title, type, concepts, project)

    @server.tool(description=SESSION_START_CONTEXT, structured_output=False)
    async def session_start_context(
        cwd: Annotated[str | None, Field(description="a directory inside the project")] = None,
        project: Annotated[str | None, Field(description="a project name")] = None,
    ) -> str:
        return await run(memory.session_start_context, cwd, project)

    @server.tool(description=CORPUS_LIST, structured_output=False)
    async def corpus_list() -> str:
        return await run(memory.corpus_list)

    @server.tool(description=CORPUS_BUILD, structured_output=False)
    async def corpus_build(
        name: CorpusName,
        *,
        project: Project = None,
        query: Annotated[str | None, Field(max_length=2000, description="only matches")] = None,
        types: Annotated[
            list[ObservationType] | None, Field(max_length=len(OBSERVATION_TYPES))
        ] = None,
        concepts: Concepts = None,
        since: Since = None,
        limit: Annotated[int | None, Field(ge=1, le=5000)] = None,
        description: Annotated[str, Field(max_length=2000)] = "",
    ) -> str:
        return await run(memory.corpus_build, name, project=project, query=query, types=types,
                         concepts=concepts, since=since, limit=limit,
                         description=description)  # fmt: skip

    @server.tool(description=CORPUS_QUERY, structured_output=False)
    async def corpus_query(
        name: CorpusName,
        question: Annotated[str, Field(min_length=1, max_length=4000)],
    ) -> str:
        return await run(memory.corpus_query, name, question)

    return server


def serve_stdio() -> None:
    """Serve the SDK's stdio session (the front in `front.py` feeds it) until stdin closes."""
    _route_logging()
    build_server().run("stdio")
