"""The web viewer's own routes: the page and its files, browser sign-in, and the filter and
settings metadata the page offers. Everything else the page reads through the ordinary API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import msgspec
from starlette.responses import RedirectResponse, Response

from claude_mem.settings import SPECS
from claude_mem.store import facets
from claude_mem.viewer.assets import ASSETS, INDEX, LINK_USED, Asset
from claude_mem.viewer.auth import LINK_TTL_S, links_of, set_cookie_header
from claude_mem.vocabulary import OBSERVATION_TYPES
from claude_mem.worker.api import ApiError, Call, Endpoint

SettingValue = str | int | bool


class AuthQuery(msgspec.Struct, kw_only=True):
    code: Annotated[str, msgspec.Meta(max_length=200)] = ""


class ViewerLink(msgspec.Struct):
    url: str
    expires_in_s: int


class SettingSpec(msgspec.Struct, kw_only=True):
    key: str
    kind: str
    default: SettingValue
    doc: str
    choices: list[str]
    minimum: int | None
    maximum: int | None
    secret: bool


class ViewerMeta(msgspec.Struct, kw_only=True):
    platforms: list[str]
    types: list[str]
    settings: list[SettingSpec]


def _serve(asset: Asset) -> Callable[[Call], Response]:
    def handler(call: Call) -> Response:
        return asset.response(call.request.headers.get("if-none-match"))

    handler.__name__ = "page" if asset.name == INDEX else "asset_" + asset.name.replace(".", "_")
    return handler


def sign_in(call: Call) -> Response:
    """Redeem a one-time link: set the viewer cookie and go to the page. A link that does not
    work is refused with a page saying what to run for a new one (JSON for API clients)."""
    query: AuthQuery = call.query
    if not query.code or not links_of(call.state).redeem(query.code):
        if "text/html" in call.request.headers.get("accept", ""):
            return ASSETS[LINK_USED].refusal(403)
        raise ApiError(
            403,
            "this viewer link is unknown, expired or already used; "
            "run `claude-mem viewer` for a new one",
            "invalid_link",
        )
    response = RedirectResponse("/", status_code=303)
    response.headers["Set-Cookie"] = set_cookie_header(call.state)
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def new_link(call: Call) -> ViewerLink:
    """A one-time sign-in link on the address the caller reached (a loopback name)."""
    code = links_of(call.state).issue()
    host = call.request.headers.get("host", f"127.0.0.1:{call.state.port}")
    return ViewerLink(f"http://{host}/auth?code={code}", int(LINK_TTL_S))


def viewer_meta(call: Call) -> ViewerMeta:
    assert call.state.db is not None
    conn = call.state.db.read()
    stored = facets.observation_types(conn)
    return ViewerMeta(
        platforms=facets.platforms(conn),
        types=[*OBSERVATION_TYPES, *(t for t in stored if t not in OBSERVATION_TYPES)],
        settings=[
            SettingSpec(key=s.key, kind=s.kind, default=s.default, doc=s.doc,
                        choices=list(s.choices), minimum=s.minimum, maximum=s.maximum,
                        secret=s.secret)
            for s in SPECS.values()
        ],
    )  # fmt: skip


ENDPOINTS = [
    Endpoint("GET", "/", _serve(ASSETS[INDEX]), "The web viewer page", "viewer",
             media_type=ASSETS[INDEX].content_type, auth=False, needs_db=False, errors=()),
    *(
        Endpoint("GET", f"/static/{asset.name}", _serve(asset), f"Viewer file {asset.name}",
                 "viewer", media_type=asset.content_type, auth=False, needs_db=False, errors=())
        for asset in ASSETS.values() if asset.name not in (INDEX, LINK_USED)
    ),
    Endpoint("GET", "/auth", sign_in,
             "Redeem a one-time viewer link: sets the HttpOnly viewer cookie, 303 to /; a link "
             "that does not work: 403, a page saying what to run (JSON without Accept: text/html)",
             "viewer", query=AuthQuery, media_type="text/html", auth=False, needs_db=False,
             errors=(400, 403)),
    Endpoint("POST", "/api/viewer/links", new_link,
             "A one-time browser sign-in link (what `claude-mem viewer` prints)", "viewer",
             response=ViewerLink, needs_db=False, errors=()),
    Endpoint("GET", "/api/viewer/meta", viewer_meta,
             "Platforms and observation types for the filters; settings' types and limits",
             "viewer", response=ViewerMeta, errors=()),
]  # fmt: skip
