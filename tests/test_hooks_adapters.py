"""Adapters against the real payloads of Claude Code, Codex and Gemini CLI, and output shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mem.hooks.adapters import PLATFORMS, load
from claude_mem.hooks.adapters.base import event_key
from claude_mem.hooks.command import event_arg, hook_argv
from claude_mem.hooks.event import HookEvent, HookResult
from tests.agent_hooks import AGENT_HOOKS, HOOKS, read_capture


def capture(name: str) -> list[tuple[str, dict[str, object]]]:
    """(event, payload) of each line of a real capture in tests/fixtures/agent-hooks/."""
    return read_capture(AGENT_HOOKS / name)


def fixture(name: str) -> list[tuple[str, dict[str, object]]]:
    """(event, payload) of each line of a hand-written payload file in tests/fixtures/hooks/."""
    return read_capture(HOOKS / name)


def normalize(platform: str, event: str, payload: dict[str, object]) -> HookEvent:
    adapter = load(platform)
    assert adapter is not None
    found = adapter.EVENTS.get(event_key(event))
    assert found is not None, f"{platform} does not know {event}"
    return adapter.normalize(payload, *found)


def common(event: HookEvent, payload: dict[str, object]) -> None:
    assert event.session_id == payload["session_id"]
    assert event.cwd == payload["cwd"]
    assert event.transcript_path == payload["transcript_path"]


CLAUDE_KINDS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "pre_read",
    "PostToolUse": "tool",
    "Stop": "stop",
    "SessionEnd": "session_end",
}


def test_claude_code_capture_normalizes() -> None:
    rows = capture("claude-code-2.1.332.jsonl")
    assert {name for name, _ in rows} == set(CLAUDE_KINDS)
    for name, payload in rows:
        event = normalize("claude-code", name, payload)
        assert (event.platform, event.host_event, event.kind) == (
            "claude-code",
            name,
            CLAUDE_KINDS[name],
        )
        common(event, payload)
        assert event.agent_id is None
        if name == "SessionStart":
            assert event.source == "startup"
        elif name == "UserPromptSubmit":
            assert event.prompt == "List the files here, then read README.txt"
        elif name in ("PreToolUse", "PostToolUse"):
            assert event.tool_name == payload["tool_name"]
            assert event.tool_input == payload["tool_input"]
            assert event.tool_use_id == payload["tool_use_id"]
            assert event.tool_response == payload.get("tool_response")
        elif name == "Stop":
            assert event.last_assistant_message == "MOCK-FINAL: I listed the files."
            assert event.stop_hook_active is False
        elif name == "SessionEnd":
            assert event.reason == "other"
    read = next(p for n, p in rows if n == "PostToolUse" and p["tool_name"] == "Read")
    event = normalize("claude-code", "PostToolUse", read)
    assert isinstance(event.tool_response, dict)
    assert event.tool_response["file"]["content"] == "hello from README (e2e fixture)\n"


CODEX_KINDS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PreModelRequest": "noop",
    "PreToolUse": "pre_read",
    "PostToolUse": "tool",
    "Stop": "stop",
    "SessionEnd": "session_end",
}


def test_codex_capture_normalizes() -> None:
    rows = capture("codex-0.171.0.jsonl")
    assert {name for name, _ in rows} == set(CODEX_KINDS)
    for name, payload in rows:
        event = normalize("codex", name, payload)
        assert (event.platform, event.kind) == ("codex", CODEX_KINDS[name])
        common(event, payload)
        if name == "SessionStart":
            assert event.source == "startup"
        elif name == "UserPromptSubmit":
            assert event.prompt == "List the files here, then read README.txt"
        elif name == "PostToolUse":
            assert event.tool_name == "Bash"
            assert isinstance(event.tool_response, str)  # Codex sends plain text
            assert event.tool_response == payload["tool_response"]
            assert event.tool_input == payload["tool_input"]
            assert event.tool_use_id == payload["tool_use_id"]
        elif name == "Stop":
            assert event.last_assistant_message == "MOCK-FINAL: I listed the files."
            assert event.stop_hook_active is False
        elif name == "SessionEnd":
            assert event.reason == "other"
    outputs = [p for n, p in rows if n == "PostToolUse"]
    assert [normalize("codex", "PostToolUse", p).tool_response for p in outputs] == [
        "README.txt\n",
        "hello from README (e2e fixture)\n",
    ]


GEMINI_KINDS = {
    "SessionStart": "session_start",
    "BeforeAgent": "prompt",
    "PreCompress": "noop",
    "BeforeModel": "noop",
    "BeforeToolSelection": "noop",
    "AfterModel": "noop",
    "BeforeTool": "pre_read",
    "AfterTool": "tool",
    "AfterAgent": "stop",
    "SessionEnd": "session_end",
}


def test_gemini_cli_capture_normalizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_SESSION_ID", raising=False)
    monkeypatch.delenv("GEMINI_CWD", raising=False)
    rows = capture("gemini-cli-0.61.0.jsonl")
    assert {name for name, _ in rows} == set(GEMINI_KINDS)
    tool_ids = []
    for name, payload in rows:
        for platform in ("gemini-cli", "antigravity"):
            event = normalize(platform, name, payload)
            assert (event.platform, event.kind) == ("gemini-cli", GEMINI_KINDS[name])
            common(event, payload)
        if name == "SessionStart":
            assert event.source == "startup"
        elif name == "BeforeAgent":
            # The <hook_context> block is injected context, not the user's words.
            assert event.prompt == "List the files here, then read README.txt"
        elif name == "AfterTool":
            assert event.tool_name == payload["tool_name"]
            assert event.tool_input == payload["tool_input"]
            assert event.tool_response == payload["tool_response"]
            assert isinstance(event.tool_response, dict)
            assert set(event.tool_response) == {"llmContent", "returnDisplay"}
            tool_ids.append(event.tool_use_id)
        elif name == "AfterAgent":
            assert event.last_assistant_message == payload["prompt_response"]
            assert event.stop_hook_active is False
        elif name == "SessionEnd":
            assert event.reason == "exit"
    assert len(tool_ids) == 2
    assert len(set(tool_ids)) == 2
    assert all(tool_ids)


def test_gemini_env_fallbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_SESSION_ID", "env-session")
    monkeypatch.setenv("GEMINI_CWD", "/env/cwd")
    event = normalize("gemini-cli", "AfterTool", {"tool_name": "read_file"})
    assert (event.session_id, event.cwd) == ("env-session", "/env/cwd")
    assert event.tool_use_id is None  # no timestamp: the worker derives one from the content


def test_cursor_payloads_normalize() -> None:
    events = {name: normalize("cursor", name, payload) for name, payload in fixture("cursor.jsonl")}
    assert {e.session_id for e in events.values()} == {"cur-conv-1"}
    assert {e.cwd for e in events.values()} == {"/home/dev/proj"}
    assert events["beforeSubmitPrompt"].prompt == "Rename the helper in utils.py"
    shell = events["afterShellExecution"]
    assert (shell.kind, shell.tool_name) == ("tool", "Bash")
    assert shell.tool_input == {"command": "grep -n helper utils.py"}
    assert shell.tool_response == {"output": "3:def helper():\n"}
    mcp = events["afterMCPExecution"]
    assert (mcp.tool_name, mcp.tool_input, mcp.tool_response) == (
        "docs_lookup",
        {"query": "rename symbol"},
        {"hits": 2},
    )
    edit = events["afterFileEdit"]
    assert edit.tool_name == "Edit"
    assert edit.tool_input == {
        "file_path": "/home/dev/proj/utils.py",
        "edits": [{"old_string": "def helper():", "new_string": "def format_name():"}],
    }
    assert events["stop"].kind == "stop"
    assert events["beforeShellExecution"].kind == "noop"
    assert events["sessionEnd"].kind == "session_end"


def test_windsurf_payloads_normalize() -> None:
    rows = fixture("windsurf.jsonl")
    events = {name: normalize("windsurf", name, payload) for name, payload in rows}
    assert {e.session_id for e in events.values()} == {"ws-traj-1"}
    assert events["pre_user_prompt"].prompt == "Add a retry to the fetch call"
    run = events["post_run_command"]
    assert (run.tool_name, run.tool_input, run.cwd) == (
        "Bash",
        {"command": "pytest -q", "cwd": "/home/dev/proj"},
        "/home/dev/proj",
    )
    assert events["post_mcp_tool_use"].tool_name == "search_docs"
    assert events["post_mcp_tool_use"].tool_response == "2 results"
    assert events["post_write_code"].tool_name == "Write"
    assert events["post_read_code"].tool_input == {"file_path": "/home/dev/proj/fetch.py"}
    stop = events["post_cascade_response"]
    assert (stop.kind, stop.last_assistant_message) == (
        "stop",
        "Added a retry with backoff around fetch.",
    )
    assert events["pre_run_command"].kind == "noop"


def test_raw_payloads_normalize() -> None:
    events = {name: normalize("raw", name, payload) for name, payload in fixture("raw.jsonl")}
    assert events["session-start"].platform == "raw"
    tool = events["tool"]
    assert (tool.platform, tool.tool_name, tool.tool_use_id) == ("my-tool", "Read", "raw-tool-1")
    assert tool.tool_input == {"file_path": "/home/dev/proj/cache.py"}
    assert events["prompt"].session_id == "raw-sess-1"
    assert events["stop"].last_assistant_message == "The cache is an LRU keyed by path."
    assert normalize("raw", "tool", {"platform": "Bad Name!"}).platform == "raw"


def test_claude_code_failure_and_subagent_events() -> None:
    failed = normalize(
        "claude-code",
        "post-tool-use-failure",
        {"session_id": "s", "tool_name": "Bash", "tool_input": {"command": "false"}, "error": "x"},
    )
    assert (failed.kind, failed.tool_response) == ("tool", {"error": "x"})
    sub = normalize("claude-code", "SubagentStop", {"session_id": "s", "stop_hook_active": False})
    assert sub.kind == "stop"
    assert sub.agent_id  # always treated as a subagent
    long_id = normalize("claude-code", "Stop", {"session_id": "s", "agent_id": "x" * 129})
    assert long_id.agent_id is None
    assert normalize("codex", "Stop", {"stop_hook_active": "true"}).stop_hook_active is True


def test_unknown_fields_are_accepted_and_missing_become_none() -> None:
    event = normalize("claude-code", "PostToolUse", {"brand_new_field": [1, 2], "tool_name": 7})
    assert event.session_id is None
    assert event.tool_name is None
    assert event.tool_input is None
    assert event.stop_hook_active is False


def test_event_names_resolve_in_any_spelling() -> None:
    claude = load("Claude-Code")
    assert claude is not None
    for spelling in ("PostToolUse", "post-tool-use", "post_tool_use", "POSTTOOLUSE", "observation"):
        assert claude.EVENTS[event_key(spelling)] == ("PostToolUse", "tool")
    assert load("nope") is None
    for platform in PLATFORMS:
        adapter = load(platform)
        assert adapter is not None
        assert adapter.NAME in (platform, "raw")


CONTEXT = "# [proj] recent memory"


def out(platform: str, event: str, result: HookResult) -> dict[str, object]:
    adapter = load(platform)
    assert adapter is not None
    found = adapter.EVENTS[event_key(event)]
    return adapter.output(HookEvent(adapter.NAME, *found), result)


def test_output_shapes_per_platform() -> None:
    full = HookResult(CONTEXT, "claude-mem: 1 memory")
    empty = HookResult()
    assert out("claude-code", "SessionStart", full) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": CONTEXT},
        "systemMessage": "claude-mem: 1 memory",
    }
    assert out("claude-code", "PostToolUse", empty) == {}
    assert out("claude-code", "PreToolUse", empty) == {}  # never a permission decision
    assert out("claude-code", "Setup", HookResult("hint", stderr="hint")) == {}
    # Codex wants the block at session start even when there is nothing to inject.
    assert out("codex", "SessionStart", empty) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ""}
    }
    assert out("codex", "SessionStart", full) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": CONTEXT}
    }
    assert out("codex", "Stop", full) == {}
    assert out("codex", "PostToolUse", empty) == {}
    assert out("gemini-cli", "SessionStart", full) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": CONTEXT}
    }
    assert out("gemini-cli", "AfterTool", empty) == {}
    assert out("gemini-cli", "BeforeModel", empty) == {}
    assert out("cursor", "beforeSubmitPrompt", full) == {"continue": True}
    assert out("cursor", "beforeReadFile", empty) == {"continue": True, "permission": "allow"}
    assert out("windsurf", "post_run_command", empty) == {"continue": True}
    assert out("raw", "session-start", full) == {
        "additionalContext": CONTEXT,
        "systemMessage": "claude-mem: 1 memory",
    }
    assert out("raw", "tool", empty) == {}


def test_loud_kinds_never_include_blocking_events() -> None:
    for platform in ("claude-code", "codex"):
        adapter = load(platform)
        assert adapter is not None
        assert {"prompt", "pre_read", "stop"}.isdisjoint(adapter.LOUD)
        assert "tool" in adapter.LOUD
    gemini = load("gemini-cli")
    assert gemini is not None
    assert "tool" not in gemini.LOUD  # exit 2 is a "system block" there


def test_installer_command_line() -> None:
    assert event_arg("PostToolUse") == "post-tool-use"
    assert event_arg("afterMCPExecution") == "after-mcp-execution"
    assert event_arg("post_run_command") == "post-run-command"
    assert event_arg("SessionStart") == "session-start"
    argv = hook_argv("claude-code", "PostToolUse")
    assert argv[1:3] == ["-I", "-S"]
    assert Path(argv[0]).is_absolute()
    assert argv[3].endswith("claude_mem/hooks/entry.py")
    assert Path(argv[3]).is_file()
    assert argv[4:] == ["claude-code", "post-tool-use"]
    for platform in PLATFORMS:
        adapter = load(platform)
        assert adapter is not None
        for name, _ in adapter.EVENTS.values():
            assert adapter.EVENTS[event_key(event_arg(name))][0] == name


def test_claude_code_disabled_follows_each_settings_file_as_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker asks on every http hook and remembers each file by its stat: an edit, a new
    local file that overrides, and a removal all count at once."""
    import json
    import os

    from claude_mem.hooks.adapters import claude_code

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "user"))
    (tmp_path / "user").mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    payload: dict[str, object] = {"cwd": str(project)}

    def plugins(path: Path, value: object) -> None:
        path.write_text(json.dumps({"enabledPlugins": {"claude-mem-py@local": value}}))

    assert not claude_code.disabled(payload)  # no settings anywhere, no .claude folder
    user = tmp_path / "user" / "settings.json"
    plugins(user, False)
    assert claude_code.disabled(payload)
    plugins(user, True)
    assert not claude_code.disabled(payload)
    (project / ".claude").mkdir()
    local = project / ".claude" / "settings.local.json"
    plugins(local, False)  # local project settings beat the user's
    assert claude_code.disabled(payload)
    stat = local.stat()
    plugins(local, "off")  # the size of `false`: the moved mtime is what tells it changed
    os.utime(local, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert not claude_code.disabled(payload)  # not a bool: the user's True decides
    local.unlink()
    plugins(project / ".claude" / "settings.json", False)
    assert claude_code.disabled(payload)
