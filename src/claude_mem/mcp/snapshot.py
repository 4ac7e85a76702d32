"""Record the SDK's own handshake answers in `answers.json`, which the front serves at once.

`python -m claude_mem.mcp.snapshot` rewrites the file after a change to the tools, their
texts or the SDK; a test replays the handshake through the SDK alone and through
`claude-mem mcp` and compares the bytes, so a stale recording fails it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from claude_mem.mcp.front import ANSWERS

SDK_ALONE = (sys.executable, "-c", "from claude_mem.mcp.server import serve_stdio; serve_stdio()")


def handshake_messages(version: str) -> list[dict[str, Any]]:
    """What a client sends first: `initialize` (id 1), `initialized`, `tools/list` (id 2)."""
    client = {"name": "claude-mem-snapshot", "version": "1"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]


def exchange(
    argv: Sequence[str], version: str, env: Mapping[str, str] | None = None
) -> list[bytes]:
    """The server's answers to `handshake_messages(version)`, the lines as it wrote them.

    stdin stays open until both answers are in: a server may stop at end of input without
    answering what is still in flight.
    """
    with subprocess.Popen(
        list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    ) as server:
        stdin, stdout = server.stdin, server.stdout
        if stdin is None or stdout is None:
            raise RuntimeError("no pipes to the server")
        stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in handshake_messages(version)))
        stdin.flush()
        answers = [stdout.readline(), stdout.readline()]
        stdin.close()
        server.wait(timeout=60)
    return answers


def derive(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every handshake version's answers, from the SDK serving our tools on its own."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # noqa: PLC0415 - the SDK

    versions: dict[str, Any] = {}
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        initialize, tools = (json.loads(a)["result"] for a in exchange(SDK_ALONE, version, env))
        versions[version] = {"initialize": initialize, "tools/list": tools}
    return {"versions": versions}


def main() -> int:
    path = os.path.join(os.path.dirname(__file__), ANSWERS)
    answers = derive()
    with open(path, "w", encoding="utf-8") as file:
        json.dump(answers, file, ensure_ascii=False, indent=1)
        file.write("\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
