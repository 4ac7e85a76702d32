"""Progressive disclosure: a search index, a timeline around an anchor, prompt-time context.

Level 1 `GET /api/search` (ids, titles, token costs), level 2 `GET /api/timeline` (what
happened around one record), level 3 `POST /api/observations/batch` (full records, in
data.py); and the prompt-time injection (`POST /api/context/semantic`).
`format=text` adds the same result rendered for an agent (`text`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Annotated, Literal, TypedDict, Unpack

import msgspec

from claude_mem.context import given
from claude_mem.context.relevant import relevant
from claude_mem.control import injection_allowed, paused
from claude_mem.project import resolve_project
from claude_mem.search.filters import build_filters, check_types
from claude_mem.search.hybrid import Hit, HybridSearcher, SearchResult, Timeline, parse_anchor
from claude_mem.search.render import index_text, timeline_text
from claude_mem.store import facets
from claude_mem.store.fulltext import clip_query
from claude_mem.store.rows import safe_text
from claude_mem.store.search_queries import KINDS, SearchFilters
from claude_mem.store.sessions import find_session
from claude_mem.team import search as team_search
from claude_mem.text import shorten
from claude_mem.vocabulary import DEFAULT_SCOPE, SearchScope
from claude_mem.worker.api import MAX_ID, ApiError, Call, Endpoint
from claude_mem.worker.schemas import Limit, Offset

SEMANTIC_MIN_CHARS = 20  # shorter prompts ("yes", "go on") carry no topic to match

Depth = Annotated[int, msgspec.Meta(ge=0, le=50)]
RecordKind = Literal["observation", "summary", "prompt"]
Format = Literal["json", "text"]


class SearchQuery(msgspec.Struct, kw_only=True):
    query: str = ""  # any length: clipped to fulltext.QUERY_CHARS, and the answer says so
    project: list[str] = []
    cwd: str | None = None
    kind: list[RecordKind] = []
    type: list[str] = []
    concept: list[str] = []
    file: list[str] = []
    since: str | None = None
    until: str | None = None
    platform: list[str] = []
    session_id: Annotated[int, msgspec.Meta(ge=0, le=MAX_ID)] | None = None
    as_of: str | None = None  # what held then: a date (that whole day), ISO time or epoch ms
    limit: Limit = 20
    offset: Offset = 0
    format: Format = "json"
    scope: SearchScope = DEFAULT_SCOPE


class SearchResponse(msgspec.Struct, kw_only=True):
    query: str  # as searched: clipped when it was longer than QUERY_CHARS
    clipped: bool
    mode: Literal["hybrid", "fulltext", "recent"]
    hits: list[Hit]
    has_more: bool
    offset: int
    limit: int
    text: str | None = None


class TimelineQuery(msgspec.Struct, kw_only=True):
    anchor: str | None = None
    session: Annotated[int, msgspec.Meta(ge=0, le=MAX_ID)] | None = None
    query: str | None = None
    depth_before: Depth = 5
    depth_after: Depth = 5
    project: list[str] = []
    cwd: str | None = None
    format: Format = "json"


class TimelineResponse(msgspec.Struct, kw_only=True):
    anchor: Hit | None
    anchor_time: int
    anchor_index: int | None
    items: list[Hit]
    text: str | None = None


class SemanticBody(msgspec.Struct, kw_only=True):
    q: str
    project: str | list[str] | None = None
    cwd: str | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=20)] = 5
    # The host's session: its own records and what it was already given are left out, and
    # nothing is injected while it is paused.
    session: Annotated[str, msgspec.Meta(max_length=500)] | None = None
    platform: Annotated[str, msgspec.Meta(max_length=100)] = "claude-code"


class SemanticContext(msgspec.Struct, kw_only=True):
    context: str
    count: int
    mode: Literal["hybrid", "fulltext", "recent", "skipped"]


def _searcher(call: Call) -> HybridSearcher:
    assert call.state.db is not None
    return HybridSearcher(call.state.db, getattr(call.state, "embedding", None))


class _FilterValues(TypedDict, total=False):
    """build_filters' arguments but `excluded`, which comes from the settings."""

    projects: Iterable[str] | None
    cwd: str | None
    types: Iterable[str] | None
    concepts: Iterable[str] | None
    files: Iterable[str] | None
    since: str | int | None
    until: str | int | None
    platforms: Iterable[str] | None
    session_id: int | None
    as_of: str | int | None


def _filters(call: Call, **values: Unpack[_FilterValues]) -> SearchFilters:
    excluded = call.state.settings.get_str("CLAUDE_MEM_EXCLUDED_PROJECTS")
    try:
        return build_filters(excluded=excluded, **values)
    except ValueError as exc:
        raise ApiError(400, str(exc), "invalid_query") from None


def _check_types(call: Call, filters: SearchFilters) -> SearchFilters:
    """`filters` with its types as stored, matched without regard to case; 400 for a type
    that is neither known nor stored (see filters.check_types)."""
    if not filters.types:
        return filters
    assert call.state.db is not None
    try:
        types = check_types(filters.types, facets.observation_types(call.state.db.read()))
        return replace(filters, types=types)
    except ValueError as exc:
        raise ApiError(400, str(exc), "invalid_query") from None


def search(call: Call) -> SearchResponse:
    q: SearchQuery = call.query
    filters = _filters(
        call,
        projects=q.project,
        cwd=q.cwd,
        types=q.type,
        concepts=q.concept,
        files=q.file,
        since=q.since,
        until=q.until,
        platforms=q.platform,
        session_id=q.session_id,
        as_of=q.as_of,
    )
    filters = _check_types(call, filters)
    kinds = tuple(k for k in KINDS if not q.kind or k in q.kind)
    query = clip_query(q.query)
    if q.scope == "team":
        result = _team(call, query, filters, kinds, limit=q.limit, offset=q.offset)
    else:
        result = _searcher(call).search(query, filters, kinds=kinds, limit=q.limit, offset=q.offset)
    return SearchResponse(
        query=query,
        clipped=query != q.query,
        mode=result.mode,
        hits=result.hits,
        has_more=result.has_more,
        offset=q.offset,
        limit=q.limit,
        text=index_text(query, result, q.offset, team=q.scope == "team")
        if q.format == "text"
        else None,
    )


def _team(
    call: Call,
    query: str,
    filters: SearchFilters,
    kinds: tuple[RecordKind, ...],
    *,
    limit: int,
    offset: int,
) -> SearchResult:
    """The search on the team server, the query embedded here (full text only while the
    model loads); 409 without a team, 502 when the server does not answer."""
    try:
        searcher = team_search.searcher(call.state.settings.get_str("CLAUDE_MEM_TEAM_URL"))
        vector = _searcher(call).query_vector(query) if query.strip() else None
        return searcher.search(
            query,
            None if vector is None else [float(x) for x in vector],
            filters,
            kinds=kinds,
            limit=limit,
            offset=offset,
        )
    except team_search.TeamSearchError as exc:
        code = {400: "invalid_query", 409: "conflict"}.get(exc.status, "team_unavailable")
        raise ApiError(exc.status, str(exc), code) from None


def timeline(call: Call) -> TimelineResponse:
    q: TimelineQuery = call.query
    given = [name for name in ("anchor", "session", "query") if getattr(q, name) is not None]
    if len(given) != 1:
        raise ApiError(400, "give exactly one of anchor, session or query", "invalid_query")
    filters = _filters(call, projects=q.project, cwd=q.cwd)
    searcher = _searcher(call)
    if q.anchor is not None:
        try:
            anchor = parse_anchor(q.anchor)
        except ValueError as exc:
            raise ApiError(400, str(exc), "invalid_query") from None
        heading = f"anchor {q.anchor.strip()}"
    elif q.session is not None:
        anchor, heading = ("session", q.session), f"session {q.session}"
    else:
        best = searcher.search(q.query or "", filters, limit=1).hits
        if not best or not (q.query or "").strip():
            raise ApiError(404, "nothing matches that query", "not_found")
        anchor, heading = (best[0].kind, best[0].id), f'query "{shorten(q.query or "", 80)}"'
    found: Timeline | None = searcher.timeline(
        anchor, filters, before=q.depth_before, after=q.depth_after
    )
    if found is None:
        raise ApiError(404, f"no record or session for {heading}", "not_found")
    index = found.anchor_index
    return TimelineResponse(
        anchor=found.items[index] if index is not None else None,
        anchor_time=found.anchor_time,
        anchor_index=index,
        items=found.items,
        text=timeline_text(found, heading) if q.format == "text" else None,
    )


def semantic_context(call: Call) -> SemanticContext:
    """The prompt-time injection (context.relevant): nothing in capture-only mode, for a
    paused session or an excluded project, or when nothing is relevant enough."""
    body: SemanticBody = call.body
    text = safe_text(body.q).strip()
    settings = call.state.settings
    host = safe_text(body.session) if body.session else None
    skipped = SemanticContext(context="", count=0, mode="skipped")
    if len(text) < SEMANTIC_MIN_CHARS or not injection_allowed(settings.get_str("CLAUDE_MEM_MODE")):
        return skipped
    if host is not None and paused(host):
        return skipped
    projects = [body.project] if isinstance(body.project, str) else body.project or []
    cwd = safe_text(body.cwd) if body.cwd is not None else None
    filters = _filters(call, projects=[safe_text(p) for p in projects], cwd=cwd)
    if cwd is not None:
        try:
            excluded = resolve_project(
                cwd, excluded=settings.get_str("CLAUDE_MEM_EXCLUDED_PROJECTS")
            ).excluded
        except (OSError, ValueError):
            excluded = True
        if excluded:
            return skipped
    assert call.state.db is not None
    conn = call.state.db.read()
    platform = safe_text(body.platform)
    found = relevant(
        conn,
        _searcher(call),
        text,
        filters,
        own_session=find_session(conn, platform, host) if host is not None else None,
        given=given.given(platform, host) if host is not None else set(),
        limit=body.limit,
        budget=settings.get_int("CLAUDE_MEM_SEMANTIC_INJECT_TOKENS"),
    )
    if host is not None and found.labels:
        given.record(platform, host, found.labels)
    return SemanticContext(context=found.text, count=len(found.labels), mode=found.mode)


ENDPOINTS = [
    Endpoint("GET", "/api/search", search,
             "Search index (level 1): ranked hits with ids, titles and token costs; hybrid "
             "full text + vectors when embeddings are loaded, else full text (see `mode`); "
             "scope=team searches the team server (CLAUDE_MEM_TEAM_URL) instead; as_of=DATE: "
             "what held then (records made by then, each superseded only later)",
             "search", query=SearchQuery, response=SearchResponse, errors=(400, 409, 502),
             direct=True),
    Endpoint("GET", "/api/timeline", timeline,
             "Timeline (level 2): records in time order around an anchor (observation id, "
             "S<summary id>, P<prompt id>, a date), a session's start, or a query's best hit",
             "search", query=TimelineQuery, response=TimelineResponse, errors=(400, 404),
             direct=True),
    Endpoint("POST", "/api/context/semantic", semantic_context,
             "Past work relevant to a prompt, every kind, as context text within "
             "CLAUDE_MEM_SEMANTIC_INJECT_TOKENS (empty under 20 characters, or when nothing "
             "clears the relevance floor)",
             "search", body=SemanticBody, response=SemanticContext),
]  # fmt: skip
