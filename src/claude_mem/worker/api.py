"""Declared endpoints: each route names its query, body and response types, so requests are
validated and the OpenAPI document is generated from the same declarations the router uses."""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import typing
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from claude_mem import __version__
from claude_mem.store.db import NON_BLOCKING, WouldBlock
from claude_mem.viewer.auth import cookie_authorizes
from claude_mem.worker.state import WorkerState
from claude_mem.worker.token import HEADER as TOKEN_HEADER
from claude_mem.worker.token import HOOK_HEADER

JSON = "application/json"
# Handlers touch SQLite, which may wait on a lock, so they run off the event loop; a small
# dedicated pool hands results back sooner than anyio's general one (bench/worker_ingest_bench.py).
_EXECUTOR = ThreadPoolExecutor(max_workers=4, thread_name_prefix="handler")
MAX_ID = 2**63 - 1  # SQLite's largest integer


class ApiError(Exception):
    """A request the worker refuses; becomes {"error": message, "code": code} with `status`."""

    def __init__(self, status: int, message: str, code: str = "bad_request") -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


class ErrorBody(msgspec.Struct):
    error: str
    code: str


@dataclass(slots=True)
class Call:
    """Everything a handler gets: the worker state and the decoded request parts."""

    state: WorkerState
    request: Request
    query: Any = None
    body: Any = None
    params: dict[str, Any] = field(default_factory=dict)


Handler = Callable[[Call], Any]


@dataclass(frozen=True, slots=True)
class Endpoint:
    method: str
    path: str
    handler: Handler
    summary: str
    tag: str
    query: type | None = None
    body: type | None = None
    response: type | None = None
    media_type: str = JSON
    auth: bool = True
    needs_db: bool = True
    errors: tuple[int, ...] = (400,)
    # Try a sync handler on the event loop first, under store.db.NON_BLOCKING: it skips the
    # thread hop (bench/worker_ingest_bench.py) and moves to a thread only if it would wait.
    inline: bool = False
    # A hook route (Claude Code's http hooks): only the hook token in HOOK_HEADER opens it,
    # and that token opens nothing else. Always served directly (below).
    hook: bool = False
    # The handler gets the body's bytes (read under the body limit); `body` only documents it.
    raw_body: bool = False
    # Served ahead of Starlette's middleware and router (app.WorkerApp): a route a hook or an
    # agent asks often and waits for (a command hook's event, a search).
    direct: bool = False

    @property
    def operation_id(self) -> str:
        return self.handler.__name__


class Text(str):
    """A handler result sent as text/plain rather than JSON."""


def error_response(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status)


@functools.cache
def _query_fields(query: type) -> dict[str, bool]:
    """Field name → whether it is a list (a repeatable query parameter like ?path=a&path=b)."""

    def is_list(hint: Any) -> bool:
        return typing.get_origin(hint) is list or any(is_list(a) for a in typing.get_args(hint))

    return {name: is_list(hint) for name, hint in typing.get_type_hints(query).items()}


_LENGTH = re.compile(r"Expected `(str|array|object)` of length ([<>]=) (\d+)")
_LENGTH_WORDS = {"str": "characters", "array": "values", "object": "entries"}


def human_error(exc: msgspec.ValidationError) -> str:
    """`limit: expected int >= 1` or `q: too long (at most 20 characters)` from msgspec's
    "Expected `int` >= 1 - at `$.limit`": the field first, no validator notation."""
    problem, _, where = str(exc).rpartition(" - at ")
    if not problem:
        problem, where = str(exc), ""
    field = where.strip("`").removeprefix("$").lstrip(".") or "request"
    length = _LENGTH.fullmatch(problem)
    if length:
        kind, op, limit = length.groups()
        size = "too long (at most" if op == "<=" else "too short (at least"
        return f"{field}: {size} {limit} {_LENGTH_WORDS[kind]})"
    return f"{field}: {problem[:1].lower()}{problem[1:].replace('`', '')}"


def _decode_query(endpoint: Endpoint, request: Request) -> Any:
    """The declared query from the query string, parsed as Starlette's QueryParams parses it
    (a repeated single-valued parameter: its last value), without building one."""
    if endpoint.query is None:
        return None
    given: dict[str, list[str]] = {}
    query_string = request.scope["query_string"].decode("latin-1")
    for name, value in parse_qsl(query_string, keep_blank_values=True):
        given.setdefault(name, []).append(value)
    raw = {  # in the fields' order: the first bad one is the one named
        name: values if many else values[-1]
        for name, many in _query_fields(endpoint.query).items()
        if (values := given.get(name)) is not None
    }
    try:
        return msgspec.convert(raw, endpoint.query, strict=False)
    except msgspec.ValidationError as exc:
        raise ApiError(400, human_error(exc), "invalid_query") from None


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"request body is larger than the {limit:,}-byte limit", "too_large")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(
                413, f"request body is larger than the {limit:,}-byte limit", "too_large"
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _decode_body(endpoint: Endpoint, raw: bytes) -> Any:
    if endpoint.body is None:
        return None
    try:
        return msgspec.json.decode(raw or b"{}", type=endpoint.body)
    except msgspec.ValidationError as exc:
        raise ApiError(400, human_error(exc), "invalid_body") from None
    except msgspec.DecodeError as exc:
        raise ApiError(400, f"body is not valid JSON: {exc}", "invalid_json") from None
    except RecursionError:
        raise ApiError(400, "body JSON is nested too deeply", "invalid_json") from None


def _encode(endpoint: Endpoint, result: Any) -> Response:
    if isinstance(result, Response):
        return result
    if isinstance(result, Text):
        return PlainTextResponse(str(result))
    return Response(msgspec.json.encode(result), media_type=JSON)


BLOCKED = object()


def without_waiting(fn: Callable[[], Any]) -> Any:
    """fn() under store.db.NON_BLOCKING, on the event loop; BLOCKED when it would have waited
    (then nothing was written: run it again on a thread)."""
    token = NON_BLOCKING.set(True)
    try:
        return fn()
    except WouldBlock:
        return BLOCKED
    finally:
        NON_BLOCKING.reset(token)


def _authorize(endpoint: Endpoint, state: WorkerState, request: Request) -> None:
    if endpoint.hook:
        if not state.hook_token_matches(request.headers.get(HOOK_HEADER)):
            raise ApiError(401, f"missing or wrong {HOOK_HEADER} header", "unauthorized")
        return
    if endpoint.auth and not (
        state.token_matches(request.headers.get(TOKEN_HEADER))
        or cookie_authorizes(request, state)  # the web viewer, signed in by link
    ):
        raise ApiError(401, f"missing or wrong {TOKEN_HEADER} header", "unauthorized")


def _call(endpoint: Endpoint, state: WorkerState, request: Request, raw: bytes | None) -> Call:
    """The decoded request, once it may be served (the store is open, the ids fit)."""
    if endpoint.needs_db and not state.ready:
        reason = state.error or "the database is still opening"
        raise ApiError(503, f"worker is starting: {reason}", "starting")
    call = Call(state=state, request=request, params=dict(request.path_params))
    if any(isinstance(v, int) and v > MAX_ID for v in call.params.values()):
        raise ApiError(404, "no record has such an id", "not_found")
    call.query = _decode_query(endpoint, request)
    if endpoint.body is not None:
        call.body = raw if endpoint.raw_body else _decode_body(endpoint, raw or b"")
    return call


def route(endpoint: Endpoint, state: WorkerState, body_limit: int) -> Route:
    """A Starlette route that checks the token and readiness, decodes, calls, encodes."""
    is_async = inspect.iscoroutinefunction(endpoint.handler)

    async def asgi_endpoint(request: Request) -> Response:
        try:
            _authorize(endpoint, state, request)
            raw = None
            if endpoint.body is not None and (state.ready or not endpoint.needs_db):
                raw = await _read_body(request, body_limit)
            call = _call(endpoint, state, request, raw)
            if is_async:
                result = await typing.cast(Callable[[Call], Awaitable[Any]], endpoint.handler)(call)
            else:
                result = (
                    without_waiting(lambda: endpoint.handler(call)) if endpoint.inline else BLOCKED
                )
                if result is BLOCKED:  # run_in_executor doesn't carry NON_BLOCKING along
                    result = await asyncio.get_running_loop().run_in_executor(
                        _EXECUTOR, endpoint.handler, call
                    )
            return _encode(endpoint, result)
        except ApiError as exc:
            return error_response(exc.status, exc.message, exc.code)

    return Route(
        endpoint.path, asgi_endpoint, methods=[endpoint.method], name=endpoint.operation_id
    )


async def in_executor(fn: Callable[[], Any], timeout: float) -> tuple[bool, Any]:
    """(True, fn()) run on the handler pool, or (False, None) after `timeout` s; the call
    itself is never cancelled (an event it records is recorded, only later)."""
    future = asyncio.get_running_loop().run_in_executor(_EXECUTOR, fn)
    try:
        return True, await asyncio.wait_for(asyncio.shield(future), timeout)
    except TimeoutError:
        return False, None


def serve_here(
    endpoint: Endpoint, state: WorkerState, method: str, target: str, raw: bytes | None
) -> tuple[int, str, bytes]:
    """(status, content type, body) of `endpoint` for an already authorised request, run in
    this thread: the worker serving its own hook routes, with no socket in between."""
    path, _, query = target.partition("?")
    scope = {"type": "http", "method": method, "path": path, "query_string": query.encode(),
             "headers": [], "path_params": {}}  # fmt: skip
    try:
        if inspect.iscoroutinefunction(endpoint.handler):
            raise ApiError(405, f"{method} {path} is not served in-process", "not_local")
        response = _encode(endpoint, endpoint.handler(_call(endpoint, state, Request(scope), raw)))
    except ApiError as exc:
        response = error_response(exc.status, exc.message, exc.code)
    return response.status_code, response.media_type or "", bytes(response.body)


# --- OpenAPI ----------------------------------------------------------------------------------

_PATH_PARAM = re.compile(r"{(\w+)(?::(\w+))?}")


def openapi(endpoints: list[Endpoint]) -> dict[str, Any]:
    """The OpenAPI 3.1 document for `endpoints`, schemas generated from their declared types."""
    types: set[type] = {ErrorBody}
    for ep in endpoints:
        types.update(t for t in (ep.query, ep.body, ep.response) if t is not None)
    ordered = sorted(types, key=lambda t: t.__name__)
    schemas, components = msgspec.json.schema_components(
        ordered, ref_template="#/components/schemas/{name}"
    )
    requests = [t for ep in endpoints for t in (ep.query, ep.body) if t is not None]
    responses = [ep.response for ep in endpoints if ep.response is not None]
    for kind in _structs(responses) - _structs(requests):
        # msgspec names a component by its class, qualified by module when two share a name
        name = (
            kind.__name__
            if kind.__name__ in components
            else f"{kind.__module__}.{kind.__qualname__}"
        )
        _as_written(kind, components[name])
    by_type = dict(zip(ordered, schemas, strict=True))
    paths: dict[str, dict[str, Any]] = {}
    for ep in endpoints:
        path = _PATH_PARAM.sub(lambda m: "{" + m.group(1) + "}", ep.path)
        op: dict[str, Any] = {
            "operationId": ep.operation_id,
            "summary": ep.summary,
            "tags": [ep.tag],
            "parameters": _parameters(ep, components),
            "responses": _responses(ep, by_type),
        }
        op["security"] = [{"hookToken": []}] if ep.hook else [{"token": []}] if ep.auth else []
        if ep.body is not None:
            op["requestBody"] = {"required": True, "content": {JSON: {"schema": by_type[ep.body]}}}
        paths.setdefault(path, {})[ep.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "claude-mem worker", "version": __version__},
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "token": {"type": "apiKey", "in": "header", "name": TOKEN_HEADER},
                "hookToken": {"type": "apiKey", "in": "header", "name": HOOK_HEADER},
            },
        },
    }


def _structs(types: list[type]) -> set[type[msgspec.Struct]]:
    """The Struct classes inside `types`, at any depth."""
    found: set[type[msgspec.Struct]] = set()
    todo: list[Any] = list(msgspec.inspect.multi_type_info(types))
    while todo:
        info = todo.pop()
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls not in found:
                found.add(info.cls)
                todo.extend(f.type for f in info.fields)
            continue
        for name in info.__struct_fields__:
            value = getattr(info, name)
            todo.extend(v for v in (value if isinstance(value, tuple) else (value,))
                        if isinstance(v, msgspec.inspect.Type))  # fmt: skip
    return found


def _as_written(kind: type[msgspec.Struct], schema: dict[str, Any]) -> None:
    """A response Struct is written with every field, defaults included (unless it omits
    them), so its schema requires them all and names no defaults: a record's defaults are
    for building one, not for reading one."""
    if kind.__struct_config__.omit_defaults:
        return
    schema["required"] = list(schema.get("properties", {}))
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)


def _parameters(ep: Endpoint, components: dict[str, Any]) -> list[dict[str, Any]]:
    params = [
        {
            "name": m.group(1),
            "in": "path",
            "required": True,
            "schema": {"type": "integer", "minimum": 0}
            if m.group(2) == "int"
            else {"type": "string"},
        }
        for m in _PATH_PARAM.finditer(ep.path)
    ]
    if ep.query is not None:
        schema = components[ep.query.__name__]
        required = set(schema.get("required", ()))
        for name, prop in schema.get("properties", {}).items():
            params.append(
                {"name": name, "in": "query", "required": name in required, "schema": prop}
            )
    return params


def _responses(ep: Endpoint, by_type: dict[type, Any]) -> dict[str, Any]:
    ok: dict[str, Any] = {"description": "OK"}
    if ep.media_type == JSON and ep.response is not None:
        ok["content"] = {JSON: {"schema": by_type[ep.response]}}
    elif ep.media_type != JSON:
        ok["content"] = {ep.media_type: {"schema": {"type": "string"}}}
    responses: dict[str, Any] = {"200": ok}
    error = {"description": "error", "content": {JSON: {"schema": by_type[ErrorBody]}}}
    codes = set(ep.errors) | ({401} if ep.auth else set()) | ({503} if ep.needs_db else set())
    if ep.body is not None:
        codes.add(413)
    for code in sorted(codes):
        responses[str(code)] = error
    return responses
