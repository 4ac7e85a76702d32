"""End to end with the real Claude Code CLI: our hooks in a temp HOME, a real worker, a mock model.

Session 1: the Anthropic mock scripts tool calls (Bash `ls`, then a Read of a file in the temp
project), the CLI runs them, and its hooks (as `claude-mem install` writes them: commands for
SessionStart and UserPromptSubmit, http hooks to the worker for the tool calls, Stop and
SessionEnd) capture every event. Once
the worker's queue is drained, the tool calls must be stored observations and the turn a
summary. Session 2: the request the CLI sends the mock must carry our injected context (a
title from session 1); the mock then reads the same file again, and the request after that
Read must carry the file-read gate's timeline of it. Nothing leaves 127.0.0.1: the CLI only
talks to the mock and the hooks only to the worker.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.claude_code import claude_binary, claude_env
from tests.llm_mocks import answer
from tests.llm_mocks.anthropic import AnthropicMock, anthropic_mock, tool_result_ids, tool_use

ROOT = Path(__file__).resolve().parents[1]
CLI_TIMEOUT_S = 90
DRAIN_TIMEOUT_S = 30
NOTES = "ARCHITECTURE-NOTES.md"
FIRST_PROMPT = f"List the files here, then read {NOTES} and tell me what it says."
SECOND_PROMPT = f"Read {NOTES} again and remind me what we looked at last time."
SECOND_ANSWER = "MOCK-SECOND: we read the ledger notes."
FINAL = f"Done: {NOTES} describes the ledger service and its retry policy."


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def notes_text() -> str:
    """A file of a few KB, as an agent would read in a real project."""
    lines = ["# Ledger service notes", ""]
    for n in range(1, 41):
        lines.append(
            f"{n}. Payments are posted in batches; batch {n} retries with exponential backoff "
            f"capped at {n * 5} seconds."
        )
    return "\n".join(lines) + "\n"


# --- installing our hooks ---------------------------------------------------------------------


def install_hooks(home: Path, env: dict[str, str]) -> str:
    """Our hooks into `$HOME/.claude/settings.json` by `claude-mem install`, as a user would:
    by default the per-tool-call hooks, Stop and SessionEnd are http hooks to the worker.

    Returns the transport of each event (for the failure messages).
    """
    cli = Path(sys.executable).with_name("claude-mem")
    done = subprocess.run(
        [str(cli), "install", "--ide", "claude-code"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"claude-mem install failed:\n{done.stdout}\n{done.stderr}"
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    kinds = {event: groups[0]["hooks"][0]["type"] for event, groups in settings["hooks"].items()}
    http = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"}
    assert {event for event, kind in kinds.items() if kind == "http"} == http, kinds
    assert settings["env"]["CLAUDE_MEM_HOOK_TOKEN"], settings
    return f"installer ({', '.join(f'{e}: {k}' for e, k in kinds.items())})"


# --- the worker -------------------------------------------------------------------------------


class Worker:
    """The real worker process on a free port, for the test's data dir; stopped at the end."""

    def __init__(self, port: int) -> None:
        from claude_mem.worker import lifecycle
        from claude_mem.worker.token import read_token

        info = lifecycle.ensure_running(wait_s=20)
        assert info is not None, f"worker did not start; see {lifecycle.stderr_log_path()}"
        assert info.port == port
        self.pid = info.pid
        self.port = port
        deadline = time.monotonic() + 20
        while self.call("/api/readiness", token=False)[0] != 200:
            assert time.monotonic() < deadline, "worker store never opened"
            time.sleep(0.05)
        self.token = read_token()

    def call(self, path: str, *, token: bool = True) -> tuple[int, Any]:
        from claude_mem.worker.client import WorkerUnavailable, request
        from claude_mem.worker.token import read_token

        try:
            response = request(
                "GET", path, port=self.port, token=read_token() if token else None, timeout=5
            )
        except WorkerUnavailable:
            return 0, None
        try:
            return response.status, response.json()
        except ValueError:
            return response.status, response.body.decode("utf-8", "replace")

    def get(self, path: str) -> Any:
        status, body = self.call(path)
        assert status == 200, f"GET {path}: {status} {body}"
        return body

    def drained(self, *, observations: int = 1, summaries: int = 0) -> dict[str, Any]:
        """Wait until nothing is queued and at least these records exist; the last stats."""
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while True:
            stats = self.get("/api/stats")
            queue, counts = stats["queue"], stats["counts"]
            if (
                queue["pending"] == 0
                and queue["processing"] == 0
                and counts["observations"] >= observations
                and counts["session_summaries"] >= summaries
            ):
                return stats
            assert time.monotonic() < deadline, f"queue not drained: {stats}"
            time.sleep(0.1)

    def stop(self) -> None:
        from claude_mem.worker import lifecycle

        info = lifecycle.read_pid_info()
        if info is not None and info["pid"] == self.pid:
            lifecycle.stop()


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[Worker]:
    port = free_port()
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(port))
    monkeypatch.delenv("CLAUDE_MEM_TURN_IDLE_S")  # a real host ends its turns: the default
    running = Worker(port)
    try:
        yield running
    finally:
        running.stop()


# --- running the CLI --------------------------------------------------------------------------


def run_claude(prompt: str, env: dict[str, str], project: Path) -> dict[str, Any]:
    started = time.monotonic()
    done = subprocess.run(
        [
            str(claude_binary()),
            "-p",
            prompt,
            "--output-format",
            "json",
            "--allowedTools",
            "Bash Read",
        ],
        env=env,
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    seconds = time.monotonic() - started
    assert done.returncode == 0, (
        f"claude -p exited {done.returncode} after {seconds:.1f} s\n"
        f"stdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-3000:]}"
    )
    result = json.loads(done.stdout)
    assert isinstance(result, dict)
    assert not result.get("is_error"), result
    return result


def strings(value: object) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def model_input(request_body: Any) -> str:
    """What the model is shown: the system prompt and the messages, as one text."""
    body = request_body if isinstance(request_body, dict) else {}
    return "\n".join(strings([body.get("system"), body.get("messages")]))


def assert_loopback_only(api: AnthropicMock) -> None:
    assert api.requests, "the CLI never called the mock"
    for request in api.requests:
        host = request.headers.get("host", "")
        assert host.split(":")[0] in ("127.0.0.1", "localhost"), (request.path, host)
        assert request.path.startswith("/v1/"), request.path


def assert_transcript_matches_hooks(home: Path, data_dir: Path) -> None:
    """The transcript the CLI wrote parses into its words and the tool calls the hooks sent."""
    import sqlite3

    from claude_mem.paths import db_path
    from claude_mem.transcripts import read_since

    paths = sorted((home / ".claude" / "projects").rglob("*.jsonl"))
    assert len(paths) == 1, paths
    entries = read_since(str(paths[0]), 0, platform="claude-code").entries
    with contextlib.closing(sqlite3.connect(db_path())) as conn:
        hook_ids = {row[0] for row in conn.execute("SELECT tool_use_id FROM tool_uses")}
    assert len(hook_ids) == 2, (hook_ids, data_dir)
    assert FINAL in [e.text for e in entries if e.role == "assistant"], entries
    assert {e.tool_use_id for e in entries if e.role == "tool_use"} == hook_ids, entries
    assert {e.tool_use_id for e in entries if e.role == "tool_result"} == hook_ids, entries


# --- the test ---------------------------------------------------------------------------------


def failures(data_dir: Path) -> int:
    """Consecutive hook failures recorded by the hooks (0 when none ever happened)."""
    path = data_dir / "state" / "hook-failures.json"
    if not path.exists():
        return 0
    return int(json.loads(path.read_text()).get("consecutive_failures") or 0)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_claude_code_sessions_are_remembered(
    tmp_path: Path, data_dir: Path, worker: Worker
) -> None:
    claude = claude_binary()  # installed before the clock starts (slow once per machine)
    assert os.access(claude, os.X_OK)
    started = time.monotonic()
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "ledger"
    project.mkdir()
    notes = project / NOTES
    notes.write_text(notes_text())
    assert notes.stat().st_size >= 1536
    (project / "main.py").write_text("print('ledger')\n")

    with anthropic_mock(default=answer("MOCK-DEFAULT: nothing scripted for this request")) as api:
        env = claude_env(api.url, home, {"CLAUDE_MEM_WORKER_PORT": str(worker.port)})
        assert env["CLAUDE_MEM_DATA_DIR"] == os.environ["CLAUDE_MEM_DATA_DIR"]
        how = install_hooks(home, env)

        # Session 1: two tool turns, then the answer.
        ls_call = tool_use("Bash", {"command": "ls", "description": "List files"})
        read_call = tool_use("Read", {"file_path": str(notes)})
        ls_id = ls_call.options["tool_uses"][0]["id"]
        read_id = read_call.options["tool_uses"][0]["id"]
        read_call.when = lambda r: ls_id in tool_result_ids(r)
        final = answer(FINAL, when=lambda r: read_id in tool_result_ids(r))
        api.script(ls_call, read_call, final)
        first = run_claude(FIRST_PROMPT, env, project)
        assert first["result"] == FINAL, first
        assert api.pending == 0, "the CLI did not take every scripted turn"
        first_requests = len(api.requests)

        stats = worker.drained(observations=1, summaries=1)
        observations = worker.get("/api/observations?limit=50")["items"]
        summaries = worker.get("/api/summaries")["items"]
        sessions = worker.get("/api/sessions")["items"]
        detail = (how, stats["counts"], [o["title"] for o in observations])

        assert len(sessions) == 1, detail
        assert stats["counts"]["tool_uses"] == 2, detail  # one raw event per tool call
        # One unit of work for the turn: the listing and the read fold into it, and it says
        # what was found in the agent's own words (from the real transcript).
        (unit,) = observations
        assert unit["project"] == "ledger", detail
        assert unit["files_read"] == [NOTES], detail
        assert unit["source"] == "transcript", detail
        assert "describes the ledger service and its retry policy" in unit["title"], detail
        assert "Looked into: the working directory" in unit["facts"], detail  # the `ls`
        assert len(summaries) == 1, detail
        assert summaries[0]["request"] == FIRST_PROMPT, summaries
        assert FINAL in summaries[0]["learned"], summaries
        assert failures(data_dir) == 0, "a hook could not reach the worker"
        assert_transcript_matches_hooks(home, data_dir)

        # Session 2: its first request must carry what session 1 left behind; then a Read of
        # the same file, whose result must come with the file's timeline.
        reread = tool_use("Read", {"file_path": str(notes)})
        reread_id = reread.options["tool_uses"][0]["id"]
        api.script(reread, answer(SECOND_ANSWER, when=lambda r: reread_id in tool_result_ids(r)))
        second = run_claude(SECOND_PROMPT, env, project)
        assert second["result"] == SECOND_ANSWER, second
        later = api.requests[first_requests:]
        assert later, "session 2 sent nothing to the mock"
        shown = [model_input(r.json) for r in later]
        titles = [unit["title"]]
        assert any(t in shown[0] for t in titles), (
            f"no session-1 title {titles} in the first session-2 request; "
            f"excerpt: {shown[0][:3000]}"
        )
        assert f"# [{project.name}] recent memory (claude-mem)" in shown[0]
        after_read = [
            t for r, t in zip(later, shown, strict=True) if reread_id in tool_result_ids(r)
        ]
        gate = f"claude-mem: earlier sessions' memory of {NOTES}"
        assert any(gate in text for text in after_read), (
            f"no file timeline after the Read; excerpts: {[t[-2000:] for t in after_read]}"
        )
        timeline = next(text for text in after_read if gate in text)
        assert f"{unit['id']} " in timeline.split(gate, 1)[1]
        assert_loopback_only(api)

        stats = worker.drained(observations=2, summaries=2)  # one unit a turn
        assert len(worker.get("/api/sessions")["items"]) == 2
        assert failures(data_dir) == 0
        assert not (data_dir / "state" / "capture-broken").exists()

    elapsed = time.monotonic() - started  # reported, not a budget: load decides it
    print(f"\ne2e: {elapsed:.1f} s, hooks via {how}, {stats['counts']}")


def stored_tool_uses() -> list[tuple[str, str, int | None]]:
    """(session, tool_use_id, observation_id) of every stored tool event."""
    import sqlite3

    from claude_mem.paths import db_path

    with contextlib.closing(sqlite3.connect(db_path())) as conn:
        rows = conn.execute(
            "SELECT s.host_session_id, t.tool_use_id, t.observation_id"
            " FROM tool_uses t JOIN sessions s ON s.id = t.session_id ORDER BY t.id"
        ).fetchall()
    return [(str(a), str(b), c) for a, b, c in rows]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_session_whose_worker_is_killed_half_way_loses_nothing(
    tmp_path: Path, data_dir: Path, worker: Worker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker dies (SIGKILL) after the session's second tool call: Claude Code's http hooks
    for the rest of it fail (a non-blocking error for the CLI), and the next session's
    SessionStart command hook starts a new worker, which recovers them from the transcript."""
    claude_binary()
    # The dead period's turn never gets its Stop: it ends by silence, so make that short.
    monkeypatch.setenv("CLAUDE_MEM_TURN_IDLE_S", "2")
    home = tmp_path / "home"
    project = tmp_path / "ledger"
    project.mkdir()
    notes = project / NOTES
    notes.write_text(notes_text())
    retry = project / "retry.py"
    retry.write_text("def backoff(n):\n    return min(2 ** n, 60)\n")

    with anthropic_mock(default=answer("MOCK-DEFAULT: nothing scripted for this request")) as api:
        env = claude_env(api.url, home, {"CLAUDE_MEM_WORKER_PORT": str(worker.port)})
        install_hooks(home, env)
        calls = [
            tool_use("Bash", {"command": "ls", "description": "List files"}),
            tool_use("Read", {"file_path": str(notes)}),
            tool_use("Bash", {"command": "wc -l retry.py", "description": "Count lines"}),
            tool_use("Read", {"file_path": str(retry)}),
        ]
        ids = [call.options["tool_uses"][0]["id"] for call in calls]
        killed: list[int] = []

        def after(n: int) -> Callable[[Any], bool]:
            """Accepts the request carrying call n's result; after the second, kills the
            worker (once)."""

            def accepts(request: Any) -> bool:
                if ids[n] not in tool_result_ids(request):
                    return False
                if n == 1 and not killed:
                    os.kill(worker.pid, signal.SIGKILL)
                    killed.append(worker.pid)
                return True

            return accepts

        for n, call in enumerate(calls[1:]):
            call.when = after(n)
        api.script(*calls, answer(FINAL, when=after(len(calls) - 1)))
        first = run_claude(FIRST_PROMPT, env, project)
        assert first["result"] == FINAL, first
        assert killed == [worker.pid], "the scripted kill never ran"
        assert worker.call("/api/health", token=False)[0] == 0, "the killed worker still answers"
        before = stored_tool_uses()
        assert [i for _, i, _ in before] == ids[:2], before  # the rest reached no worker

        # The next session: its SessionStart command hook starts a worker, which recovers.
        api.script(answer(SECOND_ANSWER))
        second = run_claude("What did we look at last time?", env, project)
        assert second["result"] == SECOND_ANSWER, second

    from claude_mem.worker import lifecycle

    info = lifecycle.read_pid_info()
    assert info is not None, "no worker after the second session"
    assert info["pid"] != killed[0], info
    worker.pid = info["pid"]  # the fixture stops the worker the hook started
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    while any(obs is None for _, _, obs in stored_tool_uses()) or len(stored_tool_uses()) < 4:
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
    worker.drained(observations=1)
    rows = stored_tool_uses()
    assert len({s for s, _, _ in rows}) == 1, rows  # all of the first session
    assert sorted(i for _, i, _ in rows) == sorted(ids), rows  # each call once, none twice
    assert all(obs is not None for _, _, obs in rows), rows  # every one is in an observation
    observations = worker.get("/api/observations?limit=50")["items"]
    read = {name for o in observations for name in o["files_read"]}
    assert {NOTES, "retry.py"} <= read, observations


# --- the mock's scripted tool calls (fast; what the CLI above relies on) -----------------------


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_mock_tool_use_reply_streamed_and_whole() -> None:
    import httpx2

    tool_input = {"command": "ls -la " + "x" * 60, "description": "List files"}
    body = {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
    with anthropic_mock() as api, httpx2.Client(trust_env=False) as client:
        api.script(
            tool_use("Bash", tool_input, text="Let me look.", tool_id="toolu_mock_1"),
            tool_use("Read", {"file_path": "/p/a.py"}, calls=[("Grep", {"pattern": "x"})]),
        )
        whole = client.post(api.url + "/v1/messages", json=body).json()
        streamed = client.post(api.url + "/v1/messages?beta=true", json={**body, "stream": True})
    assert whole["stop_reason"] == "tool_use"
    assert whole["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_mock_1", "name": "Bash", "input": tool_input},
    ]
    events = sse_events(streamed.text)
    names = [name for name, _ in events]
    assert names[0] == "message_start"
    assert names[-2:] == ["message_delta", "message_stop"]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    starts = [data for name, data in events if name == "content_block_start"]
    assert [b["content_block"]["type"] for b in starts] == ["tool_use", "tool_use"]
    assert [b["index"] for b in starts] == [0, 1]
    assert starts[0]["content_block"]["name"] == "Read"
    assert starts[0]["content_block"]["input"] == {}
    assert starts[0]["content_block"]["id"].startswith("toolu_mock_")
    for index, expected in ((0, {"file_path": "/p/a.py"}), (1, {"pattern": "x"})):
        pieces = [
            data["delta"]["partial_json"]
            for name, data in events
            if name == "content_block_delta" and data["index"] == index
        ]
        assert all(
            d["delta"]["type"] == "input_json_delta"
            for n, d in events
            if n == "content_block_delta"
        )
        assert json.loads("".join(pieces)) == expected
    assert names.count("content_block_stop") == 2


def test_tool_result_ids_reads_the_turn_after_the_model() -> None:
    from tests.llm_mocks import RecordedRequest

    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a"}]},
        {"role": "system", "content": [{"type": "text", "text": "reminder"}]},
    ]
    request = RecordedRequest(
        "POST", "/v1/messages", {}, {}, json.dumps({"messages": messages}).encode()
    )
    assert tool_result_ids(request) == ["toolu_a"]
    earlier = RecordedRequest(
        "POST", "/v1/messages", {}, {}, json.dumps({"messages": messages[:2]}).encode()
    )
    assert tool_result_ids(earlier) == []
    assert tool_result_ids(RecordedRequest("POST", "/v1/messages", {}, {}, b"")) == []
