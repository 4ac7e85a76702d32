"""The direct routes (app.WorkerApp serves them ahead of Starlette's middleware and router):
every answer, refusals included, is byte for byte the one Starlette's whole stack gives."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Any

import httpx2
import msgspec
import pytest
from starlette.applications import Starlette
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.routing import Match, Route
from starlette.types import Receive, Scope, Send

from claude_mem.viewer.auth import cookie_name, cookie_value
from claude_mem.worker.api import ApiError, _decode_query
from claude_mem.worker.app import WorkerApp
from claude_mem.worker.routes import search
from claude_mem.worker.token import HEADER
from tests.store_helpers import observation, session
from tests.worker_fixtures import RunningWorker, loopback_socket, running_worker, serving

T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningWorker]:
    mp = pytest.MonkeyPatch()
    mp.setenv("CLAUDE_MEM_DATA_DIR", str(tmp_path_factory.mktemp("data")))
    mp.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    try:
        with running_worker() as running:
            db = running.state.db
            assert db is not None
            sid = session(db, "s-1", project="proj")
            for i in range(12):
                observation(db, sid, title=f"Cache warmup step {i}", type="feature",
                            narrative="Warm the café cache before the first request.",
                            files_modified=[f"src/cache/m{i}.py"], created_at=T0 + i)  # fmt: skip
            yield running
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def stack_base(worker: RunningWorker) -> Iterator[str]:
    """The same app and state on a second port, every request through Starlette's stack."""
    app = worker.app
    assert isinstance(app, WorkerApp)

    async def whole_stack(scope: Scope, receive: Receive, send: Send) -> None:
        await Starlette.__call__(app, scope, receive, send)

    sock = loopback_socket()
    with serving(whole_stack, sock, lifespan="off"):
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_direct_routes_are_the_routes_the_router_would_pick(worker: RunningWorker) -> None:
    app = worker.app
    assert isinstance(app, WorkerApp)
    direct = [route for routes in app.direct_routes.values() for route in routes]
    assert {"/api/search", "/api/timeline"} <= set(app.direct_routes)
    for route in direct:
        assert not route.param_convertors  # found by the path alone
        for method in route.methods or ():
            scope = {"type": "http", "path": route.path, "method": method}
            first = next(r for r in app.routes
                         if isinstance(r, Route) and r.matches(scope)[0] is Match.FULL)  # fmt: skip
            assert first is route


def answers(worker: RunningWorker, stack_base: str, method: str, target: str,
            headers: dict[str, str]) -> tuple[Any, Any]:  # fmt: skip
    """(status, headers but the date, body) of one request, served directly and by the stack."""
    got = []
    for base in (worker.base, stack_base):
        response = httpx2.request(method, base + target, headers=headers, timeout=10)
        kept = sorted((k, v) for k, v in response.headers.items() if k != "date")
        got.append((response.status_code, kept, response.content))
    return got[0], got[1]


@pytest.mark.parametrize(
    "target",
    [
        "/api/search?query=cache",
        "/api/search?query=caf%C3%A9+cache&project=proj&limit=3&offset=2&format=text",
        "/api/search?query=warmup&kind=observation&kind=summary&type=feature&file=src/cache/m3.py",
        "/api/search?query=cache&project=proj&project=&limit=5&limit=2",
        "/api/search",
        "/api/search?limit=0",
        "/api/search?limit=abc",
        "/api/search?type=no-such-type",
        "/api/search?session_id=-1",
        "/api/search?kind=nothing",
        "/api/search?query=cache&scope=team",
        "/api/search?since=tomorrow-ish",
        "/api/timeline?query=cache&depth_before=2&depth_after=3",
        "/api/timeline?anchor=3&format=text",
        "/api/timeline?anchor=999999",
        "/api/timeline",
    ],
)
def test_search_answers_as_through_the_stack(
    worker: RunningWorker, stack_base: str, target: str
) -> None:
    direct, stack = answers(worker, stack_base, "GET", target, {HEADER: worker.state.token})
    assert direct == stack
    assert direct[0] in (200, 400, 404, 409)


@pytest.mark.parametrize("target", ["/api/search?query=cache", "/api/timeline?query=cache"])
def test_direct_routes_refuse_as_through_the_stack(
    worker: RunningWorker, stack_base: str, target: str
) -> None:
    """No token, a wrong one, a foreign Host or Origin, another method: the same refusal."""
    token = {HEADER: worker.state.token}
    cookie = {"cookie": f"{cookie_name(worker.port)}={cookie_value(worker.state.token)}"}
    cases = [
        ("GET", {}, 401),
        ("GET", {HEADER: "nope"}, 401),
        ("GET", {**token, "host": "evil.example:80"}, 403),
        ("GET", {**token, "origin": "https://evil.example"}, 403),
        ("GET", {**token, "origin": f"http://localhost:{worker.port}"}, 200),
        ("GET", {**cookie, "sec-fetch-site": "same-origin"}, 200),
        ("GET", {**cookie, "sec-fetch-site": "cross-site"}, 401),
        ("POST", token, 405),
        ("HEAD", token, 200),
    ]
    for method, headers, status in cases:
        direct, stack = answers(worker, stack_base, method, target, headers)
        assert direct == stack, (method, headers)
        assert direct[0] == status, (method, headers)


@pytest.mark.parametrize(
    "query_string",
    [
        "query=caf%C3%A9+cache&limit=5&limit=2&project=a&project=&project=b&unknown=1",
        "kind=prompt&kind=summary&format=text&offset=3&query=",
        "query=%2B%26%3D&since=2024-01-01&session_id=7&scope=local",
        "",
        "query&unknown=&project",
    ],
)
def test_query_strings_decode_as_starlette_parses_them(query_string: str) -> None:
    """The last value of a repeated single parameter, every value of a list one in order,
    blank values kept, unknown names ignored: what Starlette's QueryParams gives."""
    endpoint = search.ENDPOINTS[0]
    scope = {"type": "http", "query_string": query_string.encode(), "headers": []}
    params = QueryParams(query_string)
    fields = typing.get_type_hints(search.SearchQuery)
    expected = {name: params.getlist(name) if typing.get_origin(hint) is list else params[name]
                for name, hint in fields.items() if name in params}  # fmt: skip
    assert _decode_query(endpoint, Request(scope)) == msgspec.convert(
        expected, search.SearchQuery, strict=False
    )


def test_the_first_bad_parameter_named_is_the_first_declared() -> None:
    scope = {"type": "http", "query_string": b"offset=-1&limit=0", "headers": []}
    with pytest.raises(ApiError, match=r"^limit: "):
        _decode_query(search.ENDPOINTS[0], Request(scope))
