"""The corpus MCP tools through the SDK's own stdio client, against a real worker process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from tests.test_mcp_server import store_observations, text_of, with_session
from tests.worker_process import Env, worker_env

CORPUS_TOOLS = {"corpus_list", "corpus_build", "corpus_query"}


@pytest.fixture
def env(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    yield from worker_env(data_dir, monkeypatch)


def test_corpus_tools_build_list_and_answer(env: Env, tmp_path: Path) -> None:
    ids = store_observations("demo-proj")
    env.start()

    async def work(session: ClientSession) -> dict[str, Any]:
        listed = await session.list_tools()
        out: dict[str, Any] = {"tools": {t.name: t for t in listed.tools}}

        async def call(tool: str, **arguments: Any) -> Any:
            return await session.call_tool(tool, arguments)

        out["empty"] = await call("corpus_list")
        out["build"] = await call(
            "corpus_build", name="demo", project="demo-proj", types=["bugfix", "decision"],
            description="fixes and calls",
        )  # fmt: skip
        out["list"] = await call("corpus_list")
        out["query"] = await call("corpus_query", name="demo", question="why WAL for the queue?")
        out["missing"] = await call("corpus_query", name="nope", question="anything")
        out["escape"] = await call("corpus_build", name="../etc")
        return out

    out = with_session(env.vars, tmp_path, work)
    tools = out["tools"]
    assert set(tools) >= CORPUS_TOOLS
    for name in CORPUS_TOOLS:
        assert len(tools[name].description) > 100, name
    assert tools["corpus_query"].input_schema["required"] == ["name", "question"]

    assert "No corpora yet" in text_of(out["empty"])
    built = text_of(out["build"])
    assert not out["build"].is_error, built
    assert built.startswith("Built corpus demo: 2 observations")
    assert "(bugfix 1, decision 1) — fixes and calls" in built
    assert "- demo: 2 observations" in text_of(out["list"])
    answer = text_of(out["query"])
    assert not out["query"].is_error, answer
    assert answer.startswith('Best-matching observations in corpus "demo"')
    assert f"1. [#{ids[1]}]" in answer
    assert out["missing"].is_error
    assert "no corpus named 'nope'" in text_of(out["missing"])
    assert out["escape"].is_error


def test_a_corpus_answer_may_take_longer_than_other_tool_calls(data_dir: Path) -> None:
    """An LLM answer (a first prime sends the whole corpus) outlasts the usual 30 s."""
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from claude_mem.mcp import tools
    from claude_mem.worker.lifecycle import WorkerInfo

    class Slow(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            time.sleep(0.6)
            body = b'{"answer": "slow but sure", "citations": [], "provider": "local"}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    info = WorkerInfo(pid=0, port=server.server_address[1], version="", ready=True)
    try:
        proxy = tools.WorkerProxy(start=lambda: info, timeout=0.3)
        with pytest.raises(tools.ToolFailure):
            proxy.json("POST", "/api/corpus/x/query", body={"question": "q"})
        assert tools.ANSWER_TIMEOUT_S >= 120
        answer = proxy.json("POST", "/api/corpus/x/query", body={"question": "q"}, timeout=5)
        assert answer["answer"] == "slow but sure"
    finally:
        server.shutdown()
        server.server_close()
