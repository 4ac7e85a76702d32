"""The page's static files (package data, no build step), served with their content type, an
ETag for cheap revalidation, and a Content-Security-Policy that allows only our own scripts:
even a bug that put user text into HTML could not run it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from starlette.responses import Response

STATIC_DIR = Path(__file__).parent / "static"
INDEX = "index.html"
LINK_USED = "link-used.html"  # what a browser gets for a sign-in link that no longer works
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


@dataclass(frozen=True, slots=True)
class Asset:
    name: str
    body: bytes
    content_type: str
    etag: str

    def refusal(self, status: int) -> Response:
        """The file as the page of a refused request (never cached)."""
        headers = {"Cache-Control": "no-store", **SECURITY_HEADERS}
        return Response(self.body, status, media_type=self.content_type, headers=headers)

    def response(self, if_none_match: str | None) -> Response:
        """200 with the file, or 304 when the browser's copy is current. `no-cache` makes the
        browser ask every time (names carry no version), which costs one 304 per file."""
        headers = {"ETag": self.etag, "Cache-Control": "no-cache", **SECURITY_HEADERS}
        if if_none_match is not None and self.etag in if_none_match.split(", "):
            return Response(status_code=304, headers=headers)
        return Response(self.body, media_type=self.content_type, headers=headers)


def _load() -> dict[str, Asset]:
    assets = {}
    for path in sorted(STATIC_DIR.iterdir()):
        content_type = CONTENT_TYPES.get(path.suffix)
        if content_type is None or not path.is_file():
            continue
        body = path.read_bytes()
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        assets[path.name] = Asset(path.name, body, content_type, etag)
    return assets


ASSETS: dict[str, Asset] = _load()
