"""The front of `claude-mem mcp`: the handshake answered at once, the SDK behind it.

Importing the MCP SDK takes far longer than an agent waits for a new server's tool list, so
its first request could list none of our tools. The front reads the wire itself and answers
`initialize` and `tools/list` from `answers.json`, the SDK's own answers recorded by
`snapshot.py` (a test replays both ways and compares the bytes). Every other message goes, in
order, to the SDK's stdio server, which loads on the first of them: its stdin and stdout are
pipes, and it first gets the client's `initialize` again under an id of ours, whose answer is
dropped, so it serves the session exactly as if it had shaken hands itself. A handshake the
recording does not cover (another protocol version, odd params) goes to the SDK untouched.

Stdlib only until the SDK loads. While serving, fd 0 reads the null device and fd 1 writes to
stderr, as the SDK arranges, so nothing but protocol messages reaches the wire.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from typing import IO, Any

from claude_mem import __version__, log

ANSWERS = "answers.json"
REPLAY_ID = "claude-mem-replayed-initialize"
END = b"\n"  # the SDK writes one JSON object per line, never an empty one


def load_answers() -> dict[str, dict[str, Any]]:
    """Protocol version -> {"initialize": result, "tools/list": result}, as the SDK answers."""
    with open(os.path.join(os.path.dirname(__file__), ANSWERS), encoding="utf-8") as file:
        text = file.read()
    versions: dict[str, dict[str, Any]] = json.loads(text)["versions"]
    return versions


def _line(request_id: object, result: dict[str, Any]) -> bytes:
    """One JSON-RPC answer, serialised as the SDK does (compact, UTF-8, same key order)."""
    message = {"jsonrpc": "2.0", "id": request_id, "result": result}
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _handshake(message: dict[str, Any] | None, answers: dict[str, dict[str, Any]]) -> str | None:
    """The protocol version of an `initialize` the recording answers, else None."""
    if message is None or message.get("method") != "initialize":
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(message.get("id"), int | str):
        return None
    client = params.get("clientInfo")
    plain = (
        isinstance(params.get("capabilities"), dict)
        and isinstance(client, dict)
        and isinstance(client.get("name"), str)
        and isinstance(client.get("version"), str)
        and "_meta" not in params
    )
    version = params.get("protocolVersion")
    return version if plain and isinstance(version, str) and version in answers else None


def _plain_tools_list(message: dict[str, Any] | None) -> bool:
    return (
        message is not None
        and message.get("method") == "tools/list"
        and isinstance(message.get("id"), int | str)
        and not message.get("params")
    )


def _parse(line: bytes) -> dict[str, Any] | None:
    """A JSON object, else None (the SDK answers what is not one)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


class Front:
    """Reads the wire; answers the handshake itself and queues the rest for the SDK."""

    def __init__(self, wire_in: IO[bytes], wire_out: IO[bytes], to_sdk: IO[bytes]) -> None:
        self._in = wire_in
        self._out = wire_out
        self._to_sdk = to_sdk
        self._lock = threading.Lock()
        self._answers = load_answers()
        self._version: str | None = None  # set once the handshake was answered here
        self._replay: bytes | None = None
        self.sdk_needed = False
        self.wake = threading.Event()  # set by the first message for the SDK, or the end

    def write(self, data: bytes) -> None:
        """One whole message on the wire (the SDK's relay writes through here too)."""
        with self._lock:
            self._out.write(data)
            self._out.flush()

    def serve(self) -> None:
        """Until the client closes stdin; then the SDK's stdin closes too."""
        try:
            first = True
            for line in self._in:
                if not line.strip():
                    self._forward(line)
                    continue
                message = _parse(line)
                if first:
                    first = False
                    if self._answer_handshake(message):
                        continue
                if self._version is not None and message and _plain_tools_list(message):
                    self.write(_line(message["id"], self._answers[self._version]["tools/list"]))
                    continue
                self._forward(line)
        except (OSError, ValueError) as exc:
            log.warn("mcp", "reading the client failed", error=str(exc))
        finally:
            with contextlib.suppress(OSError):
                self._to_sdk.close()
            self.wake.set()

    def _answer_handshake(self, message: dict[str, Any] | None) -> bool:
        version = _handshake(message, self._answers)
        if message is None or version is None:
            return False
        result = self._answers[version]["initialize"]
        info = {**result["serverInfo"], "version": __version__}
        self.write(_line(message["id"], {**result, "serverInfo": info}))
        self._version = version
        replay = {**message, "id": REPLAY_ID}
        self._replay = json.dumps(replay, ensure_ascii=False).encode() + b"\n"
        log.debug("mcp", "handshake answered", protocol=version)
        return True

    def _forward(self, line: bytes) -> None:
        if not self.sdk_needed:
            self.sdk_needed = True
            self.wake.set()
            if self._replay is not None:
                self._to_sdk.write(self._replay)
        self._to_sdk.write(line if line.endswith(b"\n") else line + b"\n")
        self._to_sdk.flush()

    def relay(self, from_sdk: IO[bytes]) -> None:
        """The SDK's messages to the wire, minus its answer to the replayed handshake."""
        dropping = self._replay is not None
        for line in from_sdk:
            if line == END:
                return
            if dropping:
                message = _parse(line)
                if message is not None and message.get("id") == REPLAY_ID:
                    dropping = False
                    if "error" in message:
                        log.warn("mcp", "the SDK refused the handshake", error=message["error"])
                    continue
            self.write(line)


def _claim_stdio() -> tuple[IO[bytes], IO[bytes]]:
    """The wire on private descriptors; fd 0 reads the null device, fd 1 goes to stderr."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def _run_sdk(front: Front, to_sdk_r: int) -> None:
    """The SDK's stdio server on pipes in place of fd 0 and fd 1, relayed to the wire."""
    from claude_mem.mcp.server import serve_stdio  # noqa: PLC0415 - the slow import, only here

    from_sdk_r, from_sdk_w = os.pipe()
    os.dup2(to_sdk_r, 0)
    os.close(to_sdk_r)
    os.dup2(from_sdk_w, 1)
    os.close(from_sdk_w)
    with os.fdopen(from_sdk_r, "rb") as from_sdk:
        relay = threading.Thread(target=front.relay, args=(from_sdk,), name="mcp-relay")
        relay.start()
        try:
            serve_stdio()
        finally:
            os.write(1, END)  # the SDK gave fd 1 back: the pipe, which the relay drains
            relay.join()
    os.dup2(2, 1)


def main() -> int:
    """Serve over stdio until the client closes the connection."""
    from claude_mem.settings import load as load_settings  # noqa: PLC0415

    wire_in, wire_out = _claim_stdio()
    to_sdk_r, to_sdk_w = os.pipe()
    front = Front(wire_in, wire_out, os.fdopen(to_sdk_w, "wb"))
    threading.Thread(target=front.serve, name="mcp-front", daemon=True).start()
    settings = load_settings()
    log.configure(
        settings.get_str("CLAUDE_MEM_LOG_LEVEL"), settings.get_int("CLAUDE_MEM_LOG_RETENTION_DAYS")
    )
    log.info("mcp", "server starting", version=__version__)
    with contextlib.suppress(KeyboardInterrupt):
        front.wake.wait()
        if front.sdk_needed:
            _run_sdk(front, to_sdk_r)
    log.info("mcp", "server stopped")
    return 0
