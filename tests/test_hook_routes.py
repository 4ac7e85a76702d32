"""Claude Code's http hooks against a real worker on loopback: the recorded payloads POSTed as
Claude Code POSTs them, the same answers and rules as the command hooks, the hook token."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from claude_mem.worker.routes import ENDPOINTS
from claude_mem.worker.token import HEADER, HOOK_HEADER
from tests.agent_hooks import AGENT_HOOKS, read_capture
from tests.test_file_gate import BIG, read_hook, remember, write
from tests.test_hooks_process import hook
from tests.worker_fixtures import RunningWorker

CAPTURE = read_capture(AGENT_HOOKS / "claude-code-2.1.332.jsonl")
SESSION = CAPTURE[0][1]["session_id"]


def payload_of(event: str, nth: int = 0) -> dict[str, Any]:
    return [p for e, p in CAPTURE if e == event][nth]


def post(
    worker: RunningWorker, event: str, body: object, headers: dict[str, str] | None = None
) -> httpx2.Response:
    """One POST as Claude Code makes it: a fresh connection, the hook token header."""
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {HOOK_HEADER: worker.state.hook_token} if headers is None else headers
    return httpx2.post(f"{worker.base}/api/hooks/claude-code/{event}", content=content,
                       headers={"content-type": "application/json", **sent})  # fmt: skip


def prompt(hook_env: dict[str, str], session: str, text: str, cwd: Path | str) -> None:
    """UserPromptSubmit, which stays a command hook: the real hook process."""
    body = {**payload_of("UserPromptSubmit"), "session_id": session, "prompt": text,
            "cwd": str(cwd)}  # fmt: skip
    done = hook("claude-code", "UserPromptSubmit", body, hook_env)
    assert done.returncode == 0, done.stderr


def tool_rows(worker: RunningWorker) -> list[tuple[str, str]]:
    assert worker.state.db is not None
    rows = worker.state.db.read().execute("SELECT tool_name, tool_use_id FROM tool_uses")
    return [(r[0], r[1]) for r in rows.fetchall()]


def test_a_recorded_session_over_http_is_stored_and_answered_as_a_command_hook(
    worker: RunningWorker, hook_env: dict[str, str]
) -> None:
    prompt(hook_env, SESSION, payload_of("UserPromptSubmit")["prompt"], "/home/dev/proj")
    for event, payload in CAPTURE:
        if event in ("SessionStart", "UserPromptSubmit"):
            continue
        response = post(worker, event, payload)
        assert response.status_code == 200, response.text
        assert response.json() == {}, event  # nothing for a Bash PreToolUse, nor the others
    posted = [p["tool_use_id"] for e, p in CAPTURE if e == "PostToolUse"]
    assert sorted(tool_rows(worker)) == sorted(
        (p["tool_name"], p["tool_use_id"]) for e, p in CAPTURE if e == "PostToolUse"
    )
    assert len(posted) == 2
    assert worker.state.db is not None
    status = worker.state.db.read().execute("SELECT status FROM sessions").fetchone()[0]
    assert status == "completed"  # SessionEnd reached the session


def test_failure_events_are_stored_and_private_text_never_is(
    worker: RunningWorker, hook_env: dict[str, str], data_dir: Path
) -> None:
    prompt(hook_env, "http-2", "fix the flaky export test please", "/home/dev/proj")
    failure = {**payload_of("PostToolUse"), "session_id": "http-2",
               "hook_event_name": "PostToolUseFailure", "tool_use_id": "toolu_fail_1",
               "error": "exit 1: <private>hunter2-secret</private> not found"}  # fmt: skip
    failure.pop("tool_response", None)
    assert post(worker, "PostToolUseFailure", failure).status_code == 200
    assert ("Bash", "toolu_fail_1") in tool_rows(worker)
    for path in data_dir.rglob("*"):
        if path.is_file():
            assert b"hunter2-secret" not in path.read_bytes(), path


def test_skip_tools_and_nomem_hold_for_http_hooks(
    worker: RunningWorker, hook_env: dict[str, str]
) -> None:
    prompt(hook_env, "http-3", "tidy up the todo list", "/home/dev/proj")
    todo = {**payload_of("PostToolUse"), "session_id": "http-3", "tool_name": "TodoWrite",
            "tool_use_id": "toolu_todo"}  # fmt: skip
    assert post(worker, "PostToolUse", todo).status_code == 200
    prompt(hook_env, "http-3", "#nomem now try the password reset", "/home/dev/proj")
    after = {**payload_of("PostToolUse"), "session_id": "http-3", "tool_use_id": "toolu_paused"}
    assert post(worker, "PostToolUse", after).json() == {}
    assert tool_rows(worker) == []


def test_file_gate_over_http_shares_the_once_per_session_rule(
    worker: RunningWorker, hook_env: dict[str, str], tmp_path: Path
) -> None:
    project = tmp_path / "ledger"
    (project / "src").mkdir(parents=True)
    path = write(project / "src" / "batch.py", BIG, mtime_ms=1_000)
    remember(worker, "old-1", 2_000, modified=["src/batch.py"], title="Batch retries capped")
    body = {**payload_of("PreToolUse"), "session_id": "http-4", "cwd": str(project),
            "tool_name": "Read", "tool_input": {"file_path": str(path)}}  # fmt: skip
    first = post(worker, "PreToolUse", body).json()
    specific = first["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert "Batch retries capped" in specific["additionalContext"]
    assert "permissionDecision" not in json.dumps(first)
    assert post(worker, "PreToolUse", body).json() == {}  # once per file per session
    # ...and the command hook keeps the same record: it does not give the file again.
    assert read_hook(hook_env, project, str(path), session="http-4") is None


@pytest.mark.parametrize(
    ("event", "body", "status", "code"),
    [
        ("PostToolUse", b"{not json", 400, "invalid_json"),
        ("PostToolUse", b"[1, 2]", 400, "invalid_json"),
        ("NoSuchEvent", b"{}", 404, "unknown_event"),
        ("SessionStart", b"{}", 400, "not_http"),
        ("UserPromptSubmit", b"{}", 400, "not_http"),
    ],
)
def test_bad_requests_get_a_clear_4xx(
    worker: RunningWorker, event: str, body: bytes, status: int, code: str
) -> None:
    response = post(worker, event, body)
    assert response.status_code == status
    assert response.json()["code"] == code
    assert response.json()["error"]


def test_unknown_payload_fields_are_ignored_as_on_stdin(worker: RunningWorker) -> None:
    body = {**payload_of("Stop"), "session_id": "http-6", "added_in_a_later_version": {"x": 1}}
    response = post(worker, "Stop", body)
    assert response.status_code == 200
    assert response.json() == {}


def test_the_hook_token_opens_the_hook_routes_and_nothing_else(worker: RunningWorker) -> None:
    hook_token, api_token = worker.state.hook_token, worker.state.token
    assert hook_token != api_token
    tool = payload_of("PostToolUse")
    for headers in ({}, {HOOK_HEADER: api_token}, {HEADER: api_token}, {HOOK_HEADER: "x" * 64}):
        refused = post(worker, "PostToolUse", tool, headers)
        assert refused.status_code == 401, headers
        assert refused.json()["code"] == "unauthorized"
    for ep in ENDPOINTS:
        if ep.hook or not ep.auth or "{" in ep.path:
            continue
        for headers in ({HEADER: hook_token}, {HOOK_HEADER: hook_token}):
            got = httpx2.request(ep.method, f"{worker.base}{ep.path}", headers=headers)
            assert got.status_code == 401, (ep.path, headers)
    assert post(worker, "PostToolUse", tool).status_code == 200


def test_the_hook_token_is_a_0600_file_of_its_own(worker: RunningWorker, data_dir: Path) -> None:
    path = data_dir / "hook.token"
    assert path.read_text().strip() == worker.state.hook_token
    assert path.stat().st_mode & 0o777 == 0o600
    assert (data_dir / "worker.token").read_text().strip() != worker.state.hook_token


def test_a_busy_store_answers_at_the_hook_timeout_and_still_records(
    worker: RunningWorker, hook_env: dict[str, str], data_dir: Path
) -> None:
    """The writer held past CLAUDE_MEM_HOOK_TIMEOUT_MS: Claude Code gets `{}` while it is
    still held (never a host-side timeout), and the event is stored once it is free."""
    from claude_mem import paths
    from tests.polling import wait_until

    paths.settings_path().write_text(json.dumps({"CLAUDE_MEM_HOOK_TIMEOUT_MS": 300}))
    prompt(hook_env, "http-7", "profile the slow export path", "/home/dev/proj")
    body = {**payload_of("PostToolUse"), "session_id": "http-7", "tool_use_id": "toolu_busy"}
    assert worker.state.db is not None
    with worker.state.db.write():
        response = post(worker, "PostToolUse", body)
        assert response.status_code == 200
        assert response.json() == {}
        assert tool_rows(worker) == []  # not written yet: the writer is ours
    assert wait_until(lambda: ("Bash", "toolu_busy") in tool_rows(worker))


def test_hook_routes_keep_the_local_only_rules_and_method_answers(worker: RunningWorker) -> None:
    """Served ahead of Starlette's stack (app.WorkerApp), the hook routes still refuse a
    foreign Host or Origin before the token, and a method they don't serve is a 405."""
    tool = payload_of("PostToolUse")
    token = {HOOK_HEADER: worker.state.hook_token}
    evil_host = post(worker, "PostToolUse", tool, {**token, "host": "evil.example:80"})
    assert evil_host.status_code == 403
    assert evil_host.json()["code"] == "forbidden_host"
    evil_origin = post(worker, "PostToolUse", tool, {**token, "origin": "https://evil.example"})
    assert evil_origin.status_code == 403
    assert evil_origin.json()["code"] == "forbidden_origin"
    own = post(worker, "PostToolUse", {**tool, "session_id": "http-8"},
               {**token, "origin": worker.base})  # fmt: skip
    assert own.status_code == 200
    got = httpx2.get(f"{worker.base}/api/hooks/claude-code/PostToolUse", headers=token)
    assert got.status_code == 405
    deeper = post(worker, "PostToolUse/extra", tool)
    assert deeper.status_code == 404
    assert deeper.json()["code"] == "not_found"


def test_http_tool_events_are_stored_cleaned_as_a_command_hook_sends_them(
    worker: RunningWorker, hook_env: dict[str, str], data_dir: Path
) -> None:
    """The worker's own link skips the handler's edge pass: the store's clean is the same one,
    and an event without a tool_use_id still gets the id of its cleaned values."""
    from claude_mem import privacy
    from claude_mem.worker.ingest import ToolEvent, _synthetic_id

    secret = "sk-" + "Q7x" * 16
    prompt(hook_env, "http-clean", "look at the deploy config", "/home/dev/proj")
    tool_input = {"command": f"deploy --key {secret}", "note": "<private>hunter2-pw</private>ok"}
    tool_response = {"stdout": f"OPENAI_API_KEY={secret}\n<private>kept out</private>done"}
    event = {**payload_of("PostToolUse"), "session_id": "http-clean", "tool_input": tool_input,
             "tool_response": tool_response, "tool_use_id": "toolu_clean"}  # fmt: skip
    assert post(worker, "PostToolUse", event).json() == {}
    no_id = {k: v for k, v in event.items() if k != "tool_use_id"}
    assert post(worker, "PostToolUse", no_id).json() == {}
    assert worker.state.db is not None
    rows = (
        worker.state.db.read()
        .execute("SELECT tool_use_id, tool_input, tool_response FROM tool_uses ORDER BY id")
        .fetchall()
    )
    cleaned_input, cleaned_response = (privacy.clean_value(v) for v in (tool_input, tool_response))
    expected_id = _synthetic_id(ToolEvent(host_session_id="http-clean", tool_name="Bash",
                                          tool_input=cleaned_input,
                                          tool_response=cleaned_response))  # fmt: skip
    assert [(r[0], json.loads(r[1]), json.loads(r[2])) for r in rows] == [
        ("toolu_clean", cleaned_input, cleaned_response),
        (expected_id, cleaned_input, cleaned_response),
    ]
    for path in data_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert secret.encode() not in data, path
            assert b"hunter2-pw" not in data, path


def test_paused_capture_holds_for_http_tool_events(
    worker: RunningWorker, hook_env: dict[str, str]
) -> None:
    from claude_mem import control

    prompt(hook_env, "http-pause", "run the migrations", "/home/dev/proj")
    control.pause()
    event = {**payload_of("PostToolUse"), "session_id": "http-pause", "tool_use_id": "toolu_p"}
    assert post(worker, "PostToolUse", event).json() == {}
    assert post(worker, "PostToolUse", {**event, "tool_use_id": None}).json() == {}
    assert tool_rows(worker) == []
    control.resume()
    assert post(worker, "PostToolUse", event).json() == {}
    assert tool_rows(worker) == [("Bash", "toolu_p")]


def command(worker: RunningWorker, platform: str, event: str, body: object,
            headers: dict[str, str] | None = None) -> httpx2.Response:  # fmt: skip
    """One POST as a command hook's fast path makes it (hooks/forward.py)."""
    from claude_mem.hooks import forward

    sent = {HEADER: worker.state.token, forward.WAIT_HEADER: str(forward.WAIT_MS)}
    url = f"{worker.base}{forward.ROUTE}/{platform}/{event}"
    return httpx2.post(url, content=json.dumps(body).encode(), headers={**sent, **(headers or {})})


def test_the_command_route_answers_what_the_hook_prints(worker: RunningWorker) -> None:
    from claude_mem.hooks import forward

    tool = {**payload_of("PostToolUse"), "session_id": "cmd-1"}
    done = command(worker, "claude-code", "PostToolUse", tool)
    assert (done.status_code, done.content) == (200, b"{}")
    assert forward.EXIT_HEADER not in done.headers
    assert forward.STDERR_HEADER not in done.headers
    assert tool_rows(worker) == [(tool["tool_name"], tool["tool_use_id"])]
    # Any host: Cursor's answer to a tool event is its own.
    cursor = {"conversation_id": "cmd-2", "hook_event_name": "afterShellExecution",
              "command": "ls", "output": "a b", "workspace_roots": ["/home/dev/proj"]}  # fmt: skip
    got = command(worker, "cursor", "afterShellExecution", cursor)
    assert got.status_code == 200
    assert got.json() == {"continue": True}


def test_the_command_route_declines_what_the_full_path_must_serve(worker: RunningWorker) -> None:
    from claude_mem.hooks import forward

    tool = payload_of("PostToolUse")
    cases = [
        (command(worker, "no-such-host", "PostToolUse", tool), 404),
        (command(worker, "claude-code", "NoSuchEvent", tool), 404),
        (command(worker, "claude-code", "PostToolUse", tool, {forward.WAIT_HEADER: "100"}), 409),
        (command(worker, "claude-code", "PostToolUse", tool, {forward.WAIT_HEADER: ""}), 409),
        # Its answers hold memory (a session start's context): the hook token, which only
        # sends events, does not open it.
        (command(worker, "claude-code", "PostToolUse", tool,
                 {HEADER: "", HOOK_HEADER: worker.state.hook_token}), 401),
        (command(worker, "claude-code", "SessionStart", tool,
                 {HEADER: worker.state.hook_token}), 401),
    ]  # fmt: skip
    for response, status in cases:
        assert response.status_code == status, response.text
        assert response.json()["error"]
    assert tool_rows(worker) == []  # a declined event is not stored
