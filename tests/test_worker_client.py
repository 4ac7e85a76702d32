"""The hook-side HTTP client against scripted raw-socket servers: framing, errors, deadlines."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from claude_mem.worker.client import WorkerUnavailable, request

Handler = Callable[[socket.socket, "ScriptedServer"], None]


# How long a scripted server keeps a connection open without closing it: far past any
# client timeout used here, so a client that waited for it would fail, not just be slow.
HOLD_S = 30.0


class ScriptedServer:
    """Serves one connection on 127.0.0.1 with `handler`, recording the raw request."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.received = b""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            conn.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    while len(body) < int(line.split(b":")[1]):
                        body += conn.recv(4096)
            self.received = head + b"\r\n\r\n" + body
            self.handler(conn, self)

    def close(self) -> None:
        self.done.set()
        self.listener.close()
        self.thread.join(5)


@pytest.fixture
def serve() -> Iterator[Callable[[Handler], ScriptedServer]]:
    servers: list[ScriptedServer] = []

    def start(handler: Handler) -> ScriptedServer:
        servers.append(ScriptedServer(handler))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def reply(raw: bytes, *, then_wait: bool = False) -> Handler:
    def handler(conn: socket.socket, server: ScriptedServer) -> None:
        conn.sendall(raw)
        if then_wait:  # open past the client's timeout: waiting for EOF would time it out
            server.done.wait(HOLD_S)

    return handler


def test_request_line_and_headers(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(reply(b"HTTP/1.1 204 No Content\r\n\r\n"))
    response = request(
        "POST",
        "/api/x?a=1",
        port=server.port,
        body=b'{"k": 1}',
        token="secret",
        headers={"X-Extra": "yes"},
    )
    assert response.status == 204
    assert response.body == b""
    head, _, body = server.received.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /api/x?a=1 HTTP/1.1"
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    assert headers["host"] == f"127.0.0.1:{server.port}"
    assert headers["connection"] == "close"
    assert headers["content-type"] == "application/json"
    assert headers["content-length"] == "8"
    assert headers["x-claude-mem-token"] == "secret"
    assert headers["x-extra"] == "yes"
    assert body == b'{"k": 1}'


def test_get_sends_no_body_headers(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(reply(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"))
    assert request("GET", "/api/health", port=server.port).json() == {}
    head = server.received.decode().lower()
    assert "content-type" not in head
    assert "content-length" not in head
    assert "x-claude-mem-token" not in head


def test_content_length_body_does_not_wait_for_close(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n"
    server = serve(reply(head + b'{"ok": true}EXTRA', then_wait=True))
    response = request("GET", "/", port=server.port, timeout=5)
    assert response.status == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"ok": True}


def test_chunked_body_with_extensions_and_trailers(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'5\r\n{"a":\r\n3;name=value\r\n 1,\r\nA\r\n "b": [2]}\r\n0\r\nX-Trailer: t\r\n\r\n'
    )
    server = serve(reply(raw, then_wait=True))
    response = request("GET", "/", port=server.port, timeout=5)
    assert response.headers["transfer-encoding"] == "chunked"
    assert response.json() == {"a": 1, "b": [2]}


def test_body_until_close_without_length(serve: Callable[[Handler], ScriptedServer]) -> None:
    server = serve(reply(b"HTTP/1.0 500 Oops\r\nX-A: 1\r\n\r\nplain text"))
    response = request("GET", "/", port=server.port)
    assert (response.status, response.body, response.headers) == (500, b"plain text", {"x-a": "1"})


@pytest.mark.parametrize(
    "raw",
    [
        b"garbage\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",  # closed mid-body
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",  # bad chunk size
        b"HTTP/1.1 200 OK\r\nContent-",  # closed mid-headers
    ],
)
def test_malformed_answers_are_unavailable(
    serve: Callable[[Handler], ScriptedServer], raw: bytes
) -> None:
    server = serve(reply(raw))
    with pytest.raises(WorkerUnavailable):
        request("GET", "/", port=server.port)


def test_connection_refused() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(WorkerUnavailable) as caught:
        request("GET", "/api/health", port=port)
    assert isinstance(caught.value, OSError)
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)


def test_silent_server_times_out_on_schedule(serve: Callable[[Handler], ScriptedServer]) -> None:
    held = threading.Event()

    def never_answer(conn: socket.socket, server: ScriptedServer) -> None:
        server.done.wait(HOLD_S)
        held.set()

    server = serve(never_answer)
    start = time.monotonic()
    with pytest.raises(WorkerUnavailable):
        request("GET", "/", port=server.port, timeout=0.3)
    assert not held.is_set()  # the client gave up while the server still held the request
    assert time.monotonic() - start > 0.25  # it did wait for its timeout


def test_trickling_server_cannot_stretch_the_deadline(
    serve: Callable[[Handler], ScriptedServer],
) -> None:
    """A byte every 0.1 s resets a per-read timeout forever; the overall deadline still holds."""

    def trickle(conn: socket.socket, server: ScriptedServer) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        while not server.done.wait(0.1):
            try:
                conn.sendall(b"X-A: b\r\n")
            except OSError:
                return

    server = serve(trickle)
    with pytest.raises(WorkerUnavailable):  # the server trickles until the test ends: only
        request("GET", "/", port=server.port, timeout=0.5)  # the client's deadline returns


def test_hook_path_imports_stay_light() -> None:
    """The modules hooks import pull in no third-party code, no http stack, no typing."""
    code = (
        "import sys, json; base = set(sys.modules);"
        "import claude_mem.worker.lifecycle, claude_mem.worker.client;"
        "print(json.dumps(sorted(set(sys.modules) - base)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    loaded = set(json.loads(out))
    heavy = {"typing", "dataclasses", "socket", "http", "http.client", "urllib.request"}
    heavy |= {"subprocess", "asyncio", "starlette", "uvicorn", "msgspec", "sqlite3", "contextlib"}
    assert not loaded & heavy, sorted(loaded & heavy)


def test_snippet_makes_an_html_page_one_short_line() -> None:
    from claude_mem.worker.client import snippet

    page = b"<html>\n<head><title>Error</title></head>\n<body><h1>Not\n  Found</h1>" + b"x " * 500
    line = snippet(page)
    assert line.startswith("Error Not Found x x")
    assert "\n" not in line
    assert "<" not in line
    assert len(line) <= 120
    assert line.endswith("…")
    assert snippet("short") == "short"
