"""A tiny HTTP/1.1 client for talking to the worker on loopback.

Hooks run it on every agent event, so it imports only `_socket` (cheaper than `socket`,
`http.client` or `urllib`) and speaks just enough HTTP for the worker: one request per
connection, Content-Length or chunked bodies, and one overall deadline.
"""

from __future__ import annotations

import _socket
from time import monotonic


class WorkerUnavailable(OSError):
    """The worker could not be reached or answered with something that is not HTTP."""


class Response:
    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers  # lower-case names
        self.body = body

    def json(self) -> object:
        from claude_mem.hooks import jsonio  # noqa: PLC0415 - only callers that decode pay

        return jsonio.loads(self.body)


SNIPPET_CHARS = 120


def snippet(body: bytes | str, limit: int = SNIPPET_CHARS) -> str:
    """A body as one short line: tags dropped, whitespace collapsed, cut with an ellipsis.

    What a foreign server (an HTML error page) said must fit in one stderr line.
    """
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    kept, depth = [], 0
    for char in text[: limit * 64]:  # bounded: a huge page costs no more than a small one
        if char == "<":
            depth = 1
        elif char == ">" and depth:
            depth = 0
            kept.append(" ")
        elif not depth:
            kept.append(char)
    line = " ".join("".join(kept).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


class _Reader:
    """Buffered reads from one socket, all bounded by the request's deadline."""

    __slots__ = ("buf", "deadline", "sock")

    def __init__(self, sock: _socket.socket, deadline: float) -> None:
        self.sock, self.deadline, self.buf = sock, deadline, bytearray()

    def fill(self) -> bool:
        """Read more into the buffer; False once the server has closed the connection."""
        remaining = self.deadline - monotonic()
        if remaining <= 0:
            raise TimeoutError("timed out")
        self.sock.settimeout(remaining)
        data = self.sock.recv(65536)
        self.buf += data
        return bool(data)

    def line(self) -> bytes:
        while (end := self.buf.find(b"\r\n")) < 0:
            if not self.fill():
                raise ValueError("connection closed mid-response")
        line = bytes(self.buf[:end])
        del self.buf[: end + 2]
        return line

    def exactly(self, size: int) -> bytes:
        while len(self.buf) < size:
            if not self.fill():
                raise ValueError("connection closed mid-body")
        data = bytes(self.buf[:size])
        del self.buf[:size]
        return data

    def rest(self) -> bytes:
        while self.fill():
            pass
        return bytes(self.buf)


def _read_response(reader: _Reader, method: str) -> Response:
    parts = reader.line().split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise ValueError("the answer is not HTTP")
    status, headers = int(parts[1]), {}
    while line := reader.line():
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return Response(status, headers, b"")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks = []
        while size := int(reader.line().split(b";", 1)[0], 16):
            chunks.append(reader.exactly(size))
            reader.line()  # the CRLF after each chunk
        while reader.line():  # trailers, up to the blank line
            pass
        return Response(status, headers, b"".join(chunks))
    if "content-length" in headers:
        return Response(status, headers, reader.exactly(int(headers["content-length"])))
    return Response(status, headers, reader.rest())


def request(
    method: str,
    path: str,
    *,
    port: int,
    host: str = "127.0.0.1",
    body: bytes | None = None,
    token: str | None = None,
    timeout: float = 2.0,
    headers: dict[str, str] | None = None,
) -> Response:
    """Send one request and read the whole answer; WorkerUnavailable on any transport problem."""
    deadline = monotonic() + timeout
    host_header = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    head = [f"{method} {path} HTTP/1.1", f"Host: {host_header}", "Connection: close"]
    if body is not None:
        head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    elif method in ("POST", "PUT", "PATCH"):
        head.append("Content-Length: 0")
    if token is not None:
        head.append(f"x-claude-mem-token: {token}")
    head += [f"{name}: {value}" for name, value in (headers or {}).items()]
    payload = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (body or b"")
    sock = None
    try:
        failure: OSError = ConnectionRefusedError(f"nothing listening on {host_header}")
        # An ASCII host as bytes: a str goes through the idna codec, whose import (stringprep,
        # unicodedata) would cost every hook more than the lookup itself.
        name: str | bytes = host.encode() if host.isascii() else host
        for family, kind, proto, _, address in _socket.getaddrinfo(
            name, port, 0, _socket.SOCK_STREAM
        ):
            sock = _socket.socket(family, kind, proto)
            sock.settimeout(max(deadline - monotonic(), 0.001))
            try:
                sock.connect(address)
                break
            except OSError as exc:
                sock.close()
                sock, failure = None, exc
        if sock is None:
            raise failure
        sock.sendall(payload)
        return _read_response(_Reader(sock, deadline), method)
    except (OSError, ValueError) as exc:
        raise WorkerUnavailable(f"worker at {host_header}: {exc}") from exc
    finally:
        if sock is not None:
            sock.close()
