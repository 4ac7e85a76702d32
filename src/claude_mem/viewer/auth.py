"""Browser sign-in without putting the API token in a page: `claude-mem viewer` asks the
worker for a one-time link; opening it sets an HttpOnly, SameSite=Strict cookie derived from
the token, which the API then accepts in place of the `x-claude-mem-token` header.

The cookie value is an HMAC of the token, so it survives worker restarts and dies with the
token. Cookies ignore ports, so other servers on 127.0.0.1 share the cookie jar; CSRF from
them is refused here: a cookie counts only on requests the browser marks as same-origin
(Sec-Fetch-Site), and state-changing ones must also carry our own Origin (the foreign ones
never reach this far: security.LocalOnly refuses them).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
import weakref
from collections import OrderedDict
from typing import Protocol

from starlette.requests import Request

LINK_TTL_S = 600.0
MAX_OPEN_LINKS = 50
COOKIE_MAX_AGE_S = 30 * 86_400
SAFE_METHODS = frozenset({"GET", "HEAD"})
# What a browser says about where a request came from; absent for non-browser clients.
TRUSTED_FETCH_SITES = frozenset({"same-origin", "none"})


class HoldsToken(Protocol):
    token: str
    port: int | None


def cookie_name(port: int | None) -> str:
    """One name per worker port: two workers on one host don't overwrite each other's cookie."""
    return f"claude_mem_viewer_{port or 0}"


def cookie_value(token: str) -> str:
    return hmac.new(token.encode(), b"claude-mem viewer cookie v1", hashlib.sha256).hexdigest()


def set_cookie_header(state: HoldsToken) -> str:
    return (
        f"{cookie_name(state.port)}={cookie_value(state.token)}; Path=/; "
        f"Max-Age={int(COOKIE_MAX_AGE_S)}; HttpOnly; SameSite=Strict"
    )


def cookie_authorizes(request: Request, state: HoldsToken) -> bool:
    """Whether the request carries our viewer cookie under the CSRF rules above."""
    presented = request.cookies.get(cookie_name(state.port))
    if not presented or not hmac.compare_digest(presented, cookie_value(state.token)):
        return False
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in TRUSTED_FETCH_SITES:
        return False
    return request.method in SAFE_METHODS or request.headers.get("origin") is not None


class OneTimeLinks:
    """Codes that each sign in one browser once, within LINK_TTL_S of being issued."""

    def __init__(self) -> None:
        self._codes: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def issue(self) -> str:
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes[code] = time.monotonic() + LINK_TTL_S
            while len(self._codes) > MAX_OPEN_LINKS:
                self._codes.popitem(last=False)
        return code

    def redeem(self, code: str) -> bool:
        with self._lock:
            expires = self._codes.pop(code, None)
        return expires is not None and time.monotonic() < expires


_LINKS: weakref.WeakKeyDictionary[object, OneTimeLinks] = weakref.WeakKeyDictionary()
_LINKS_LOCK = threading.Lock()


def links_of(state: object) -> OneTimeLinks:
    """The open links of one running worker (codes never cross to another worker)."""
    with _LINKS_LOCK:
        links = _LINKS.get(state)
        if links is None:
            links = _LINKS[state] = OneTimeLinks()
        return links
