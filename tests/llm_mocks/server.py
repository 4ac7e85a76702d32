"""The loopback HTTP server every wire mock builds on: recording, scripting, delays.

A mock binds 127.0.0.1 on a free port and serves from a thread, so any real client can talk
to it (our providers, or a CLI pointed at it by a base-URL variable). It records every
request and answers the next scripted `Reply` whose `when` matches, else its default. Speaks
HTTP/1.1 with keep-alive: JSON bodies carry Content-Length, event streams are chunked.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["MockServer", "RecordedRequest", "Reply", "Response", "answer", "error", "raw", "slow"]

_DISCONNECTS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str  # without the query string
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lowercased
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON, or None."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass(slots=True)
class Reply:
    """One scripted answer.

    status 200 with `text`: a successful model reply carrying that text, in the API's shape.
    Any other status: an error in the API's shape (`message`), unless `body` is given.
    `body` (bytes, str, or a JSON value) replaces the generated body whatever the status.
    `delay` seconds pass before anything is sent (longer than a client timeout = a timeout).
    `usage` (input, output) tokens, or None to leave usage out of the reply.
    `when` limits the reply to requests it accepts; the others skip it.
    `options` carries API-specific knobs (e.g. Anthropic stream errors).
    """

    status: int = 200
    text: str = ""
    message: str = ""
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    usage: tuple[int, int] | None = (120, 40)
    when: Callable[[RecordedRequest], bool] | None = None
    options: dict[str, Any] = field(default_factory=dict)


def answer(text: str, **kwargs: Any) -> Reply:
    """A successful reply whose model output is `text`."""
    return Reply(text=text, **kwargs)


def error(status: int, message: str = "", **kwargs: Any) -> Reply:
    """An error reply in the API's own error shape."""
    return Reply(status=status, message=message or f"mock error {status}", **kwargs)


def raw(status: int, body: Any, headers: dict[str, str] | None = None, **kwargs: Any) -> Reply:
    """A reply with exactly this body (bytes/str as is, anything else as JSON)."""
    return Reply(status=status, body=body, headers=headers or {}, **kwargs)


def slow(seconds: float, then: Reply | None = None) -> Reply:
    """`then` (default: an empty answer) after `seconds`."""
    reply = then or answer("")
    reply.delay = seconds
    return reply


@dataclass(slots=True)
class Response:
    """What a route sends: a whole body, or (when `events` is set) a chunked event stream."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    events: Iterable[bytes] | None = None


def json_response(status: int, value: Any, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(value).encode()
    return Response(status, body, {"content-type": "application/json", **(headers or {})})


def body_response(reply: Reply) -> Response:
    """The response for a reply with an explicit `body`."""
    if isinstance(reply.body, bytes):
        body = reply.body
    elif isinstance(reply.body, str):
        body = reply.body.encode()
    else:
        return json_response(reply.status, reply.body, reply.headers)
    headers = {"content-type": "text/plain; charset=utf-8", **reply.headers}
    return Response(reply.status, body, headers)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    mock: MockServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (a timeout test) is expected; stay quiet."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 10  # idle keep-alive connections end by themselves

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging."""

    def setup(self) -> None:
        super().setup()
        self.server.mock._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.mock._track(self.connection, add=False)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        url = urlsplit(self.path)
        request = RecordedRequest(
            method=self.command,
            path=url.path,
            query=parse_qs(url.query),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=self._read_body(),
        )
        mock = self.server.mock
        mock._record(request)
        try:
            response = mock.route(request)
            self._send(response, head_only=self.command == "HEAD")
        except _DISCONNECTS:
            self.close_connection = True

    def _send(self, response: Response, *, head_only: bool) -> None:
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        if response.events is None:
            self.send_header("content-length", str(len(response.body)))
            self.end_headers()
            if not head_only:
                self.wfile.write(response.body)
            self.wfile.flush()
            return
        self.send_header("transfer-encoding", "chunked")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for chunk in response.events:
            if chunk:
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _handle


class MockServer:
    """Base of the API mocks. Subclasses implement `route` (and usually `base_path`)."""

    base_path = ""  # appended to the root URL to form `.url`, e.g. "/v1"

    def __init__(self, default: Reply | None = None) -> None:
        self.default = default or answer("")
        self.requests: list[RecordedRequest] = []
        self._queue: list[Reply] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._ids = itertools.count(1)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- scripting ---

    def script(self, *replies: Reply | str) -> None:
        """Queue replies (a str is `answer(str)`); each is used once, in order."""
        with self._lock:
            self._queue.extend(answer(r) if isinstance(r, str) else r for r in replies)

    def next_reply(self, request: RecordedRequest) -> Reply:
        """The first queued reply whose `when` accepts `request`, else the default."""
        with self._lock:
            for i, reply in enumerate(self._queue):
                if reply.when is None or reply.when(request):
                    return self._queue.pop(i)
        return self.default

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._queue)

    def wait(self, reply: Reply) -> bool:
        """Sleep out the reply's delay; False if the server is stopping meanwhile."""
        return not reply.delay or not self._stopping.wait(reply.delay)

    def next_id(self) -> int:
        return next(self._ids)

    def route(self, request: RecordedRequest) -> Response:
        raise NotImplementedError

    # --- lifecycle ---

    @property
    def root(self) -> str:
        if self._server is None:
            raise RuntimeError("mock not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def url(self) -> str:
        """The base URL to give a client."""
        return self.root + self.base_path

    def calls(self, path_suffix: str = "") -> list[RecordedRequest]:
        """Recorded POSTs, optionally only those whose path ends with `path_suffix`."""
        return [r for r in self.requests if r.method == "POST" and r.path.endswith(path_suffix)]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def start(self) -> MockServer:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.mock = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._server.server_close()  # joins the handler threads
        if self._thread is not None:
            self._thread.join(5)
        self._server = None

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def sse(event: str | None, data: Any) -> bytes:
    """One server-sent event (`event:` line omitted when None), JSON data."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def chunks(text: str, size: int = 24) -> Iterator[str]:
    """`text` in pieces, the way a model streams it."""
    for start in range(0, len(text), size):
        yield text[start : start + size]
