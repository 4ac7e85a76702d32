"""The real hook command as the hosts run it (`python -I -S .../hooks/entry.py PLATFORM EVENT`),
against a real worker, a stand-in worker that records raw requests, or no worker at all."""

from __future__ import annotations

import json
import os
import pty
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from claude_mem import __version__, paths
from claude_mem.hooks.command import event_arg
from tests.agent_hooks import AGENT_HOOKS, HOOKS, read_capture
from tests.net import DeadPort, free_port, worker_pids
from tests.polling import wait_until

ENTRY = Path(__file__).resolve().parents[1] / "src" / "claude_mem" / "hooks" / "entry.py"
CLI = Path(sys.executable).with_name("claude-mem")
SECRET = "sk-ant-api03-" + "Q" * 40
PROMPT = "List the files here, then read README.txt"


def base_env(data_dir: Path, port: int, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_MEM_", "GEMINI_"))}
    env.update(
        CLAUDE_MEM_DATA_DIR=str(data_dir),
        CLAUDE_MEM_WORKER_PORT=str(port),
        HOME=str(home),
    )
    env.pop("CLAUDE_CONFIG_DIR", None)
    return env


def hook(
    platform: str,
    event: str,
    payload: dict[str, Any] | bytes | None,
    env: dict[str, str],
    *,
    cwd: Path | None = None,
    stdin: int | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run the hook exactly as a host config would, payload on stdin."""
    data = json.dumps(payload).encode() if isinstance(payload, dict) else payload
    return subprocess.run(
        [sys.executable, "-I", "-S", str(ENTRY), platform, event],
        input=data if stdin is None else None,
        stdin=stdin,
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=60,
        check=False,
    )


def answer(done: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    """The one JSON object a hook prints; anything else on stdout is a failure."""
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 1, done.stdout
    value = json.loads(lines[0])
    assert isinstance(value, dict)
    return value


def failures(data_dir: Path) -> dict[str, object]:
    path = data_dir / "state" / "hook-failures.json"
    return json.loads(path.read_text()) if path.exists() else {}


# --- a real worker --------------------------------------------------------------------------


class Live:
    def __init__(self, root: Path) -> None:
        self.data_dir = root / "data"
        self.home = root / "home"
        self.home.mkdir()
        self.project = root / "project"
        self.project.mkdir()
        self.port = free_port()
        self.env = base_env(self.data_dir, self.port, self.home)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(CLI), *args], env=self.env, capture_output=True, text=True, timeout=60, check=False
        )

    def query(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        conn = sqlite3.connect(f"file:{self.data_dir / 'claude-mem.db'}?mode=ro", uri=True)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    def session(self, platform: str, host_id: str) -> tuple[object, ...] | None:
        found = self.query(
            "SELECT id, status, end_reason FROM sessions"
            " WHERE platform = ? AND host_session_id = ?",
            platform,
            host_id,
        )
        return found[0] if found else None


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """One real worker for this module's replays; stopped (and checked gone) afterwards."""
    worker = Live(tmp_path_factory.mktemp("live"))
    worker.data_dir.mkdir(mode=0o700)
    (worker.data_dir / "install-version").write_text(__version__ + "\n")  # as the installer
    started = worker.cli("worker", "start")
    assert started.returncode == 0, started.stderr
    yield worker
    worker.cli("worker", "stop")
    leaked = worker_pids(worker.data_dir)
    for pid in leaked:
        os.kill(pid, signal.SIGKILL)
    assert not leaked, f"worker processes leaked: {leaked}"


# platform → (payload file, host session id, worker platform, prompt, tool events, ends session)
REPLAYS = {
    "claude-code": (
        AGENT_HOOKS / "claude-code-2.1.332.jsonl",
        "3a02dcef-abe3-49dc-8a0e-0c8ad7971493",
        "claude-code",
        PROMPT,
        2,
        True,
    ),
    "codex": (
        AGENT_HOOKS / "codex-0.171.0.jsonl",
        "01a22ab3-8009-7d73-a612-e47e229c2646",
        "codex",
        PROMPT,
        2,
        True,
    ),
    "gemini-cli": (
        AGENT_HOOKS / "gemini-cli-0.61.0.jsonl",
        "5a70031d-654a-49fc-b42b-6d2759f215f6",
        "gemini-cli",
        PROMPT,
        2,
        True,
    ),
    "cursor": (
        HOOKS / "cursor.jsonl",
        "cur-conv-1",
        "cursor",
        "Rename the helper in utils.py",
        3,
        True,
    ),
    "windsurf": (
        HOOKS / "windsurf.jsonl",
        "ws-traj-1",
        "windsurf",
        "Add a retry to the fetch call",
        4,
        False,
    ),
    "raw": (HOOKS / "raw.jsonl", "raw-sess-1", "my-tool", "Explain the cache layer", 1, True),
}
CONTEXT_PLATFORMS = {"claude-code", "codex", "gemini-cli", "raw"}


@pytest.mark.parametrize("platform", list(REPLAYS))
def test_every_event_reaches_the_real_worker(live: Live, platform: str, tmp_path: Path) -> None:
    path, host_id, stored_as, prompt, tool_count, ends = REPLAYS[platform]
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(
        json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": "x"}]}})
        + "\n"
        + json.dumps(
            {"type": "assistant", "message": {"content": [{"type": "text", "text": "Renamed."}]}}
        )
        + "\n"
    )
    contexts = []
    for event, sent in read_capture(path):
        payload = sent
        if platform == "cursor" and event == "stop":
            payload = {**sent, "transcript_path": str(transcript)}
        done = hook(platform, event_arg(event), payload, live.env, cwd=live.project)
        assert done.returncode == 0, (event, done.stderr)
        assert done.stderr == b"", (event, done.stderr)
        out = answer(done)
        if platform in ("cursor", "windsurf"):
            assert out["continue"] is True
        if event in ("SessionStart", "session-start"):
            context = out.get("additionalContext") or out["hookSpecificOutput"]["additionalContext"]
            contexts.append(context)
        elif platform not in ("cursor", "windsurf"):
            # The earlier replays' identical prompt is relevant past work (injection is on), and
            # so is their session's summary once the worker has written it.
            injected = (out.get("hookSpecificOutput") or out).get("additionalContext", "")
            if injected.startswith("## Relevant past work\n") and "\n- #P" in injected:
                out = {}
            assert out == {}, (event, out)
    if platform in CONTEXT_PLATFORMS:
        assert len(contexts) == 1
        assert "# [proj]" in contexts[0]
        assert "capture was broken" not in contexts[0]
    session = live.session(stored_as, host_id)
    assert session is not None, f"no session for {stored_as}/{host_id}"
    sid = session[0]
    prompts = live.query("SELECT text, is_private FROM user_prompts WHERE session_id = ?", sid)
    assert prompts == [(prompt, 0)]
    tools = live.query("SELECT tool_name FROM tool_uses WHERE session_id = ?", sid)
    assert len(tools) == tool_count, tools

    def summarized() -> bool:
        queued = live.query(
            "SELECT COUNT(*) FROM queue WHERE session_id = ? AND kind = 'summary'", sid
        )[0][0]
        made = live.query("SELECT COUNT(*) FROM session_summaries WHERE session_id = ?", sid)
        return bool(queued or made[0][0])

    assert wait_until(summarized), "the Stop event queued no summary"
    if ends:
        assert live.session(stored_as, host_id)[1] == "completed"  # type: ignore[index]  # stored by now
    if platform == "cursor":
        payloads = live.query(
            "SELECT payload FROM queue WHERE session_id = ? AND kind = 'summary'", sid
        )
        made = live.query("SELECT COUNT(*) FROM session_summaries WHERE session_id = ?", sid)
        assert made[0][0] or "Renamed." in str(payloads)
    assert failures(live.data_dir).get("consecutive_failures", 0) == 0


def test_private_prompt_reaches_the_worker_as_private(live: Live) -> None:
    payload = {
        "session_id": "private-1",
        "cwd": "/home/dev/proj",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "<private>the launch date is secret</private>",
    }
    done = hook("claude-code", "user-prompt-submit", payload, live.env)
    assert (done.returncode, answer(done)) == (0, {})
    session = live.session("claude-code", "private-1")
    assert session is not None
    stored = live.query(
        "SELECT text, is_private FROM user_prompts WHERE session_id = ?", session[0]
    )
    assert stored == [("", 1)]


def test_binary_tool_output_is_kept_not_dropped(live: Live) -> None:
    """A host passing a binary file's bytes through: invalid UTF-8 and raw control bytes
    inside a string of an otherwise valid JSON object. The event is stored, not dropped."""
    output = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR caf\xe9 \xff\xfe \x1b[31mred\x1b[0m"
    payload = (
        b'{"session_id": "binary-1", "cwd": "/home/dev/proj", "hook_event_name": "PostToolUse",'
        b' "tool_name": "Bash", "tool_use_id": "toolu_binary_1",'
        b' "tool_input": {"command": "cat logo.png"}, "tool_response": {"stdout": "'
        + output
        + b'"}}'
    )
    done = hook("claude-code", "post-tool-use", payload, live.env)
    assert (done.returncode, answer(done), done.stderr) == (0, {}, b"")
    session = live.session("claude-code", "binary-1")
    assert session is not None, "the event was dropped"
    stored = live.query("SELECT tool_response FROM tool_uses WHERE session_id = ?", session[0])
    assert len(stored) == 1
    assert "caf\ufffd \ufffd\ufffd" in str(stored[0][0])
    assert "IHDR" in str(stored[0][0])
    assert "not a JSON object" not in log_text(live.data_dir)


# --- a stand-in worker that records every request byte --------------------------------------


class FakeWorker:
    """Answers like the worker (health, readiness, context, ingest) and keeps raw requests."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, bytes]] = []
        self.status: dict[str, int] = {}
        self.context = "# [proj] recent memory, stand-in\n7 12:00 ● Fixed the parser"
        self.terminal = "Nov 30, 2026\n  #7      12:00 ● Fixed the parser"
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                fake.requests.append((self.command, self.path, body))
                path = self.path.split("?", 1)[0]
                if path == "/api/health":
                    ident = paths.data_dir_id()  # the hooks' own data dir: "ours"
                    data = json.dumps({"pid": os.getpid(), "version": __version__,
                                       "ready": True, "data_dir_id": ident})  # fmt: skip
                    self._send(200, data.encode(), "application/json")
                elif path == "/api/context/session-start":
                    data = json.dumps({"context": fake.context, "terminal": fake.terminal,
                                       "tokens": 1, "dropped": 0})  # fmt: skip
                    self._send(fake.status.get(path, 200), data.encode())
                else:
                    self._send(fake.status.get(path, 200), b'{"status": "queued"}')

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def ingest(self) -> list[tuple[str, dict[str, Any]]]:
        """Requests other than health checks, bodies decoded."""
        return [
            (path, json.loads(body) if body else {})
            for method, path, body in self.requests
            if not path.startswith(("/api/health", "/api/readiness"))
        ]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeWorker]:
    server = FakeWorker()
    yield server
    server.close()
    stray = worker_pids(tmp_path, below=True)  # a hook that took the stand-in for foreign
    for pid in stray:
        os.kill(pid, signal.SIGTERM)
    assert not stray, "a hook started a real worker beside the stand-in"


@pytest.fixture
def env(data_dir: Path, tmp_path: Path, fake: FakeWorker) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    data_dir.mkdir(mode=0o700, exist_ok=True)
    (data_dir / "install-version").write_text(__version__ + "\n")
    return base_env(data_dir, fake.port, home)


CLAUDE_TOOL = {
    "session_id": "s-1",
    "cwd": "/home/dev/proj",
    "hook_event_name": "PostToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "cat .env"},
    "tool_use_id": "toolu_1",
}


def test_privacy_is_applied_before_anything_leaves_the_hook(
    fake: FakeWorker, env: dict[str, str]
) -> None:
    prompt = {
        "session_id": "s-1",
        "cwd": "/home/dev/proj",
        "prompt": "fix the parser <private>the launch date is May 4</private> please",
    }
    assert hook("claude-code", "user-prompt-submit", prompt, env).returncode == 0
    whole = {**prompt, "prompt": "<private>all of this is mine</private>"}
    assert hook("claude-code", "user-prompt-submit", whole, env).returncode == 0
    secret_tool = {
        **CLAUDE_TOOL,
        "tool_response": {
            "stdout": f"ANTHROPIC_API_KEY={SECRET}\n<private>salary: 1</private>\nok",
            "stderr": "",
        },
    }
    assert hook("claude-code", "post-tool-use", secret_tool, env).returncode == 0
    stop = {
        "session_id": "s-1",
        "cwd": "/home/dev/proj",
        "stop_hook_active": False,
        "last_assistant_message": "Done. <private>do not keep this</private>",
    }
    assert hook("claude-code", "stop", stop, env).returncode == 0
    raw = b"".join(body for _, _, body in fake.requests)
    leaks = (b"launch date", b"all of this is mine", SECRET.encode(), b"salary", b"keep this")
    for leaked in leaks:
        assert leaked not in raw
    sent = dict(fake.ingest())
    assert sent["/api/sessions/observations"]["tool_response"]["stdout"].startswith(
        "ANTHROPIC_API_KEY=[REDACTED"
    )
    assert sent["/api/sessions/summarize"]["last_assistant_message"] == "Done."
    prompts = [body["prompt"] for path, body in fake.ingest() if path == "/api/sessions/init"]
    assert prompts == ["fix the parser  please", "<private></private>"]


def test_secrets_stay_when_redaction_is_off_but_tags_never(
    fake: FakeWorker, env: dict[str, str]
) -> None:
    env = {**env, "CLAUDE_MEM_REDACT_SECRETS": "false"}
    payload = {**CLAUDE_TOOL, "tool_response": f"key {SECRET} <private>x-secret-x</private>"}
    assert hook("claude-code", "post-tool-use", payload, env).returncode == 0
    (_, _, body) = fake.requests[-1]
    assert SECRET.encode() in body
    assert b"x-secret-x" not in body


def test_skip_rules_at_the_edge_send_nothing(fake: FakeWorker, env: dict[str, str]) -> None:
    todo = {**CLAUDE_TOOL, "tool_name": "TodoWrite", "tool_response": {}}
    assert answer(hook("claude-code", "post-tool-use", todo, env)) == {}
    notification = {"session_id": "s-1", "prompt": "<task-notification>done</task-notification>"}
    assert answer(hook("claude-code", "user-prompt-submit", notification, env)) == {}
    reentry = {"session_id": "s-1", "stop_hook_active": True, "last_assistant_message": "x"}
    assert answer(hook("claude-code", "stop", reentry, env)) == {}
    sub = {"session_id": "s-1", "agent_id": "agent-7", "last_assistant_message": "x"}
    assert answer(hook("claude-code", "stop", sub, env)) == {}
    assert answer(hook("claude-code", "subagent-stop", {"session_id": "s-1"}, env)) == {}
    read = {**CLAUDE_TOOL, "hook_event_name": "PreToolUse", "tool_name": "Read"}
    assert answer(hook("claude-code", "pre-tool-use", read, env)) == {}  # never blocks the Read
    noise = {"session_id": "g", "llm_request": {"messages": []}}
    assert answer(hook("gemini-cli", "before-model", noise, env)) == {}
    assert fake.ingest() == []


def test_internal_sessions_and_a_disabled_plugin_send_nothing(
    fake: FakeWorker, env: dict[str, str], data_dir: Path
) -> None:
    internal = {**env, "CLAUDE_MEM_INTERNAL": "1"}
    done = hook("claude-code", "post-tool-use", CLAUDE_TOOL, internal)
    assert (done.returncode, answer(done), done.stderr) == (0, {}, b"")
    done = hook("codex", "session-start", {"session_id": "c"}, internal)
    assert answer(done) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ""}
    }
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"enabledPlugins": {"claude-mem-py@local": False}}))
    for event in ("session-start", "user-prompt-submit", "post-tool-use", "stop"):
        done = hook("claude-code", event, {**CLAUDE_TOOL, "prompt": "hi"}, env)
        assert (done.returncode, answer(done), done.stderr) == (0, {}, b"")
    assert fake.requests == []
    settings.write_text(json.dumps({"enabledPlugins": {"claude-mem-py@local": True}}))
    assert hook("claude-code", "post-tool-use", CLAUDE_TOOL, env).returncode == 0
    assert [path for path, _ in fake.ingest()] == ["/api/sessions/observations"]


def test_stop_falls_back_to_the_transcript(
    fake: FakeWorker, env: dict[str, str], tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "first"}]}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash"}]}},
        {
            "type": "assistant",
            "message": {"content": [{"type": "text", "text": "All pass.<private>p</private>"}]},
        },
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result"}]}},
    ]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    payload = {"session_id": "s-1", "transcript_path": str(transcript), "stop_hook_active": False}
    assert hook("claude-code", "stop", payload, env).returncode == 0
    assert fake.ingest() == [
        (
            "/api/sessions/summarize",
            {
                "host_session_id": "s-1",
                "platform": "claude-code",
                "cwd": str(Path.cwd()),
                "last_assistant_message": "All pass.",
                "transcript_path": str(transcript),  # the worker reads the turn's words there
            },
        )
    ]


def test_stop_with_a_fifo_for_a_transcript_does_not_hang(
    fake: FakeWorker, env: dict[str, str], tmp_path: Path
) -> None:
    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)  # nothing ever writes it: opening it to read would wait forever
    payload = {"session_id": "s-1", "transcript_path": str(fifo), "stop_hook_active": False}
    assert hook("claude-code", "stop", payload, env).returncode == 0  # hook() times out a hang
    [(path, body)] = fake.ingest()
    assert path == "/api/sessions/summarize"
    assert body["last_assistant_message"] == ""


def test_session_start_context_and_terminal_line(fake: FakeWorker, env: dict[str, str]) -> None:
    payload = {"session_id": "s-1", "cwd": "/home/dev/proj", "source": "startup"}
    out = answer(hook("claude-code", "session-start", payload, env))
    assert out == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": fake.context},
        "systemMessage": f"claude-mem: 1 memory for proj - viewer: http://127.0.0.1:{fake.port}/"
        f"\n{fake.terminal}",
    }
    (_, path, _) = next(r for r in fake.requests if r[1].startswith("/api/context"))
    assert (
        path
        == "/api/context/session-start?cwd=%2Fhome%2Fdev%2Fproj&session=s-1&platform=claude-code"
    )
    quiet = {**env, "CLAUDE_MEM_CONTEXT_SHOW_TERMINAL_OUTPUT": "false"}
    out = answer(hook("claude-code", "session-start", payload, quiet))
    assert "systemMessage" not in out
    out = answer(hook("gemini-cli", "session-start", payload, env))
    assert out == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": fake.context}
    }


def test_four_hundreds_are_not_worker_failures(
    fake: FakeWorker, env: dict[str, str], data_dir: Path
) -> None:
    fake.status["/api/sessions/observations"] = 400
    for _ in range(4):
        done = hook("claude-code", "post-tool-use", {**CLAUDE_TOOL, "tool_response": "x"}, env)
        assert (done.returncode, done.stderr) == (0, b"")
    assert failures(data_dir).get("consecutive_failures", 0) == 0


def test_a_refused_token_counts_as_broken_capture(
    fake: FakeWorker, env: dict[str, str], data_dir: Path
) -> None:
    fake.status["/api/sessions/observations"] = 401
    for _ in range(2):
        assert hook("claude-code", "post-tool-use", CLAUDE_TOOL, env).returncode == 0
    done = hook("claude-code", "post-tool-use", CLAUDE_TOOL, env)
    assert done.returncode == 2
    assert b"API token" in done.stderr


# --- no worker at all ------------------------------------------------------------------------


def test_worker_down_counts_reports_once_and_success_resets(
    dead: DeadPort, fake: FakeWorker, env: dict[str, str], data_dir: Path
) -> None:
    # A short hook timeout: the wait for a worker the hook starts is 3/4 of it, not the longer
    # wait lifecycle.ensure_running would take by default.
    down = {**env, "CLAUDE_MEM_WORKER_PORT": str(dead.port), "CLAUDE_MEM_HOOK_TIMEOUT_MS": "500"}
    payload = {**CLAUDE_TOOL, "tool_response": "ok"}
    for count in (1, 2):
        done = hook("claude-code", "post-tool-use", payload, down)
        assert (done.returncode, answer(done), done.stderr) == (0, {}, b""), done.stderr
        assert failures(data_dir)["consecutive_failures"] == count
    done = hook("claude-code", "post-tool-use", payload, down)
    assert done.returncode == 2
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("claude-mem: capture has failed 3 times in a row (worker unre")
    assert lines[0].endswith("run `claude-mem doctor`")
    assert answer(done) == {}
    tried_at = failures(data_dir)["last_start_attempt_at"]
    done = hook("claude-code", "post-tool-use", payload, down)
    assert (done.returncode, done.stderr) == (0, b"")  # reported once, not on every tool call
    state = failures(data_dir)
    assert state["last_start_attempt_at"] == tried_at  # clearly broken: no new start, no wait
    assert state["consecutive_failures"] == 4
    assert "worker unreachable" in str(state["last_error"])
    assert isinstance(state["last_failure_at"], float)
    # Any success resets the count.
    assert hook("claude-code", "post-tool-use", payload, env).returncode == 0
    assert failures(data_dir)["consecutive_failures"] == 0
    done = hook("claude-code", "post-tool-use", payload, down)
    assert (done.returncode, done.stderr) == (0, b"")
    assert failures(data_dir)["consecutive_failures"] == 1
    assert worker_pids(data_dir) == []


def test_blocking_events_count_but_never_exit_2(
    dead: DeadPort, env: dict[str, str], data_dir: Path
) -> None:
    down = {**env, "CLAUDE_MEM_WORKER_PORT": str(dead.port)}
    down["CLAUDE_MEM_HOOK_FAIL_LOUD_THRESHOLD"] = "1"
    down["CLAUDE_MEM_HOOK_TIMEOUT_MS"] = "500"
    # Exit 2 would erase the user's prompt (UserPromptSubmit) or make the agent carry on (Stop).
    prompt = {"session_id": "s-1", "prompt": "hi"}
    done = hook("claude-code", "user-prompt-submit", prompt, down)
    assert (done.returncode, done.stderr) == (0, b"")
    stop = {"session_id": "s-1", "last_assistant_message": "done"}
    done = hook("claude-code", "stop", stop, down)
    assert (done.returncode, done.stderr) == (0, b"")
    assert failures(data_dir)["consecutive_failures"] == 2
    # Codex session start is a place to say it (and still gets its empty context block).
    done = hook("codex", "session-start", {"session_id": "c", "cwd": "/home/dev/proj"}, down)
    assert done.returncode == 2
    assert done.stderr.decode().count("\n") == 1
    assert answer(done) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ""}
    }
    assert worker_pids(data_dir) == []


# --- input the hook cannot use ---------------------------------------------------------------


def log_text(data_dir: Path) -> str:
    return "".join(p.read_text() for p in sorted((data_dir / "logs").glob("*.log")))


def test_bad_input_never_crashes(fake: FakeWorker, env: dict[str, str], data_dir: Path) -> None:
    for payload in (b"{not json", b"[1, 2]", b"\x00\x01", b'"just a string"', b"{" * 100_000):
        done = hook("claude-code", "post-tool-use", payload, env)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert "payload is not a JSON object" in log_text(data_dir)
    assert "payload is not valid JSON" in log_text(data_dir)
    huge = json.dumps({**CLAUDE_TOOL, "tool_response": "x" * (20 << 20)}).encode()
    done = hook("claude-code", "post-tool-use", huge, env)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert "payload over 16 MiB dropped" in log_text(data_dir)
    assert fake.ingest() == []
    assert not (data_dir / "state" / "capture-broken").exists()


def test_a_data_dir_that_is_a_file_keeps_hooks_silent(
    fake: FakeWorker, env: dict[str, str], tmp_path: Path
) -> None:
    not_a_dir = tmp_path / "memory"
    not_a_dir.write_text("")
    broken = {**env, "CLAUDE_MEM_DATA_DIR": str(not_a_dir), "CLAUDE_MEM_HOOK_TIMEOUT_MS": "500"}
    for event, payload in (
        ("session-start", {"session_id": "s-1", "cwd": "/home/dev/proj"}),
        ("post-tool-use", {**CLAUDE_TOOL, "tool_response": "ok"}),
    ):
        done = hook("claude-code", event, payload, broken)
        assert (done.returncode, done.stderr) == (0, b""), done.stderr
        via_cli = subprocess.run(
            [str(CLI), "hook", "claude-code", event], input=json.dumps(payload).encode(),
            env=broken, capture_output=True, timeout=60, check=False,
        )  # fmt: skip
        assert (via_cli.returncode, via_cli.stderr) == (0, b""), via_cli.stderr
    assert not_a_dir.read_text() == ""


def test_invalid_utf8_is_replaced_not_fatal(fake: FakeWorker, env: dict[str, str]) -> None:
    payload = b'{"session_id": "s-1", "cwd": "/p", "prompt": "caf\xe9 \xff\xfe ok"}'
    done = hook("claude-code", "user-prompt-submit", payload, env)
    assert (done.returncode, answer(done), done.stderr) == (0, {}, b"")
    ((path, body),) = fake.ingest()
    assert path == "/api/sessions/init"
    assert body["prompt"] == "caf\ufffd \ufffd\ufffd ok"


def test_unknown_platform_or_event_is_one_clear_line(env: dict[str, str]) -> None:
    done = hook("vim", "post-tool-use", dict(CLAUDE_TOOL), env)
    assert done.returncode == 0
    (line,) = done.stderr.decode().splitlines()
    assert "unknown platform 'vim'" in line
    assert "claude-code" in line
    done = hook("claude-code", "after-lunch", dict(CLAUDE_TOOL), env)
    assert done.returncode == 0
    (line,) = done.stderr.decode().splitlines()
    assert "unknown event 'after-lunch'" in line
    assert "PostToolUse" in line
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(ENTRY)], env=env, capture_output=True, check=False
    )
    assert (done.returncode, done.stderr.decode().count("\n")) == (0, 1)
    assert b"Traceback" not in done.stderr


def test_empty_stdin_marks_capture_broken_reported_once(
    fake: FakeWorker, env: dict[str, str], data_dir: Path
) -> None:
    done = hook("claude-code", "post-tool-use", b"", env)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    marker = json.loads((data_dir / "state" / "capture-broken").read_text())
    assert "PostToolUse" in marker["what"]
    assert marker["at"] > 0
    assert "capture broken" in log_text(data_dir)
    start = {"session_id": "s-2", "cwd": "/home/dev/proj", "source": "startup"}
    out = answer(hook("claude-code", "session-start", start, env))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("claude-mem: capture was broken: claude-code PostToolUse hook got")
    assert fake.context in context
    assert "capture was broken" in str(out["systemMessage"])
    assert not (data_dir / "state" / "capture-broken").exists()
    again = answer(hook("claude-code", "session-start", start, env))
    assert "capture was broken" not in str(again)


def test_a_terminal_on_stdin_is_not_a_broken_host(env: dict[str, str], data_dir: Path) -> None:
    parent, child = pty.openpty()
    try:
        done = hook("claude-code", "post-tool-use", None, env, stdin=child)
    finally:
        os.close(child)
        os.close(parent)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not (data_dir / "state" / "capture-broken").exists()


def install(env: dict[str, str], data_dir: Path) -> Path:
    """`claude-mem install --no-start` into env's HOME with `data_dir`; the settings file."""
    done = subprocess.run(
        [str(CLI), "install", "--no-start"],
        env={**env, "CLAUDE_MEM_DATA_DIR": str(data_dir)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return Path(env["HOME"]) / ".claude" / "settings.json"


def installed_hook(
    settings: Path, event: str, payload: dict[str, Any], env: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    """Run the command the installer wrote for `event`, as Claude Code does (through a shell)."""
    doc = json.loads(settings.read_text())
    command = doc["hooks"][event][0]["hooks"][0]["command"]
    return subprocess.run(
        ["bash", "-c", command], input=json.dumps(payload).encode(), env=env,
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip


def test_a_data_dir_the_installer_never_saw_gets_no_install_hint(
    fake: FakeWorker, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = install(env, tmp_path / "seen-by-the-installer")
    never_seen = {**env, "CLAUDE_MEM_DATA_DIR": str(tmp_path / "never-seen")}
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", never_seen["CLAUDE_MEM_DATA_DIR"])  # fake serves it
    start = {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "SessionStart"}
    done = installed_hook(settings, "SessionStart", start, never_seen)
    assert done.returncode == 0, done.stderr
    context = answer(done)["hookSpecificOutput"]["additionalContext"]
    assert "Fixed the parser" in context  # the worker's context, and nothing else
    assert "install" not in context
    setup = installed_hook(settings, "Setup", {"session_id": "s", "cwd": str(tmp_path)}, never_seen)
    assert (setup.returncode, answer(setup), setup.stderr) == (0, {}, b"")


def test_hooks_an_older_version_installed_get_one_hint(
    fake: FakeWorker, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = install(env, tmp_path / "data-a")
    doc = json.loads(settings.read_text())
    del doc["hooks"]["PostToolUseFailure"]  # as an older installer wrote them
    settings.write_text(json.dumps(doc))
    other = {**env, "CLAUDE_MEM_DATA_DIR": str(tmp_path / "data-b")}
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", other["CLAUDE_MEM_DATA_DIR"])  # fake serves it
    setup = installed_hook(settings, "Setup", {"session_id": "s", "cwd": str(tmp_path)}, other)
    assert setup.returncode == 0
    assert setup.stderr.decode() == (
        f"claude-mem {__version__}: the hooks in {settings} lack PostToolUseFailure; "
        "run `claude-mem install` to refresh them.\n"
    )
    start = {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "SessionStart"}
    first = answer(installed_hook(settings, "SessionStart", start, other))
    context = first["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(f"claude-mem {__version__}: the hooks in {settings} lack")
    second = answer(installed_hook(settings, "SessionStart", start, other))
    assert "lack" not in str(second)  # once, not every session
    install(env, tmp_path / "data-c")  # repaired: silent again
    setup = installed_hook(settings, "Setup", {"session_id": "s", "cwd": str(tmp_path)}, other)
    assert (setup.returncode, setup.stderr) == (0, b"")


def test_claude_mem_hook_cli_runs_the_same_hook(fake: FakeWorker, env: dict[str, str]) -> None:
    done = subprocess.run(
        [str(CLI), "hook", "claude-code", "PostToolUse"],
        input=json.dumps({**CLAUDE_TOOL, "tool_response": "fine"}).encode(),
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"{}\n", b"")
    assert [path for path, _ in fake.ingest()] == ["/api/sessions/observations"]


# Heavy or wrong-layer modules a hook must never load (each one costs milliseconds per event).
FORBIDDEN = (
    "msgspec", "starlette", "uvicorn", "rich", "subprocess", "dataclasses", "typing", "asyncio",
    "sqlite3", "logging", "http.client", "urllib.request", "socket", "claude_mem.cli",
    "claude_mem.worker.app", "claude_mem.store", "claude_mem.project", "claude_mem.log",
    "hashlib",  # loads OpenSSL on every session start, for one digest
    "encodings.idna", "unicodedata",  # a str host given to getaddrinfo loads them
    "json", "pathlib", "urllib", "ipaddress",  # hooks.jsonio, claude_mem.locations, percent
)  # fmt: skip
# Needed only by a privacy rule: a payload with no '<' and no trigger word never loads them.
PATTERN_MODULES = ("re", "enum", "functools", "collections")


def imported(platform: str, event: str, payload: dict[str, Any], env: dict[str, str]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", str(ENTRY), platform, event],
        input=json.dumps(payload).encode(),
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    lines = done.stderr.decode().splitlines()
    return {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}


def test_hooks_import_only_the_standard_library_and_light_modules(
    fake: FakeWorker, env: dict[str, str]
) -> None:
    start = {"session_id": "s-1", "cwd": "/home/dev/proj"}
    prompt = {**start, "prompt": "hello"}
    tool = {**CLAUDE_TOOL, "tool_response": "ok"}
    stop = {**start, "last_assistant_message": "done"}
    for event, payload in (
        ("session-start", start),
        ("user-prompt-submit", prompt),
        ("post-tool-use", tool),
        ("stop", stop),
        ("session-end", start),
    ):
        modules = imported("claude-code", event, payload, env)
        assert "claude_mem.hooks.handlers" in modules
        banned = (*FORBIDDEN, *PATTERN_MODULES)
        bad = {m for m in modules if m.split(".")[0] in banned or m in banned}
        bad |= {m for m in modules for f in banned if m.startswith(f + ".")}
        assert not bad, (event, sorted(bad))
        # Only session start may need the code that starts a worker.
        assert ("claude_mem.worker.lifecycle" in modules) == (event == "session-start"), event
    assert len(fake.ingest()) == 5


def test_a_payload_that_needs_a_privacy_rule_still_gets_it(
    fake: FakeWorker, env: dict[str, str]
) -> None:
    """The other side of PATTERN_MODULES: a secret in a prompt or a tool call is redacted
    before it leaves the hook (re loaded for it), and a private region never leaves it."""
    prompt = {
        "session_id": "s-1",
        "cwd": "/tmp",
        "prompt": f"use {SECRET} <private>pin 4321</private>",
    }
    assert "re" in imported("claude-code", "user-prompt-submit", prompt, env)
    tool = {**CLAUDE_TOOL, "tool_input": {"api_key": "abcdefgh12"}, "tool_response": SECRET}
    assert "re" in imported("claude-code", "post-tool-use", tool, env)
    sent = json.dumps([body for _, body in fake.ingest()])
    for leaked in (SECRET, "4321", "abcdefgh12"):
        assert leaked not in sent
    assert "[REDACTED:api-key]" in sent
