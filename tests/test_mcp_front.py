"""`claude-mem mcp` answers the handshake itself: the SDK's bytes, without loading the SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from claude_mem.install import mcp as mcp_entry
from claude_mem.install.base import HookCommand
from claude_mem.mcp.front import load_answers
from claude_mem.mcp.snapshot import SDK_ALONE, exchange, handshake_messages

# As the installer registers it with every agent.
INSTALLED = mcp_entry.argv(HookCommand.current())
STALE = "answers.json is stale: run `python -m claude_mem.mcp.snapshot` and commit the file"
# Not needed to shake hands: the SDK and pydantic, the store, search, the worker, event loops.
HEAVY = ("mcp", "mcp_types", "pydantic", "pydantic_core", "anyio", "msgspec", "sqlite3",
         "asyncio", "numpy", "onnxruntime", "claude_mem.store", "claude_mem.search",
         "claude_mem.worker", "claude_mem.mcp.server", "claude_mem.mcp.tools")  # fmt: skip


def test_the_recording_covers_every_handshake_version_of_the_sdk() -> None:
    assert list(load_answers()) == list(HANDSHAKE_PROTOCOL_VERSIONS), STALE


@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, "2099-01-01"])
def test_handshake_answers_are_the_sdks_byte_for_byte(data_dir: Path, version: str) -> None:
    ours = exchange(INSTALLED, version)
    sdk = exchange(SDK_ALONE, version)
    assert ours == sdk, STALE
    assert json.loads(ours[0])["result"]["protocolVersion"] == (
        version if version in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    )


def _converse(
    data_dir: Path, messages: list[dict[str, object]], answers: int
) -> tuple[list[dict[str, Any]], bytes, list[str]]:
    """Send `messages` to `claude-mem mcp`, read `answers` lines, close stdin: those answers,
    what the server wrote after them, and the modules it had loaded when it exited."""
    modules = data_dir.parent / "modules.json"
    code = (
        "import json, sys; from claude_mem.cli import main; code = main(['mcp']);"
        f"open({str(modules)!r}, 'w').write(json.dumps(sorted(sys.modules))); sys.exit(code)"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        server.stdin.flush()
        lines = [json.loads(server.stdout.readline()) for _ in range(answers)]
        server.stdin.close()
        rest = server.stdout.read()
        assert server.wait(timeout=120) == 0
    return lines, rest, json.loads(modules.read_text())


def test_the_handshake_loads_none_of_the_heavy_modules(data_dir: Path) -> None:
    initialize, listed = handshake_messages(LATEST_HANDSHAKE_VERSION)[0::2]
    (init, tools), rest, modules = _converse(data_dir, [initialize, listed], 2)
    assert init["id"] == 1
    assert init["result"]["serverInfo"]["name"] == "claude-mem"
    names = [tool["name"] for tool in tools["result"]["tools"]]
    assert {"search", "timeline", "get_observations", "save_memory"} <= set(names)
    assert rest == b""
    loaded = [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert loaded == []


def test_the_sdk_serves_the_rest_of_a_session_it_did_not_shake_hands_for(data_dir: Path) -> None:
    """A call pipelined after the handshake reaches the SDK, which validates it; its answer to
    the replayed handshake never reaches the client."""
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "get_observations", "arguments": {"ids": []}}}  # fmt: skip
    ping = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
    messages = [*handshake_messages(LATEST_HANDSHAKE_VERSION), call, ping]
    answers, rest, modules = _converse(data_dir, messages, 4)
    by_id = {answer["id"]: answer for answer in answers}
    assert sorted(by_id, key=str) == [1, 2, 3, "p"]
    assert by_id[3]["result"]["isError"] is True
    assert "ids" in by_id[3]["result"]["content"][0]["text"]
    assert by_id["p"]["result"] == {}
    assert rest == b""
    assert "mcp" in modules
