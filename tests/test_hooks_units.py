"""Hook building blocks in-process: state files, version check, transcripts, handlers."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from claude_mem import __version__, paths, settings
from claude_mem.hooks import handlers, installed, state, transcript, version_check
from claude_mem.hooks.adapters.gemini_cli import without_hook_context
from claude_mem.hooks.event import HookEvent, HookResult
from claude_mem.hooks.runner import parse, run
from claude_mem.install.base import HookCommand


def test_event_rejects_unknown_kinds_and_fields() -> None:
    with pytest.raises(ValueError, match="kind"):
        HookEvent("raw", "x", "lunch")
    with pytest.raises(TypeError, match="colour"):
        HookEvent("raw", "x", "tool", colour="red")
    event = HookEvent("raw", "x", "tool", session_id="s")
    assert event.as_dict()["session_id"] == "s"
    assert event.as_dict()["prompt"] is None
    assert event.stop_hook_active is False


def test_failure_counter_reports_at_threshold_then_rarely(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = [
        state.note_failure("down", threshold=3, can_report=True, start_attempted=True)
        for _ in range(5)
    ]
    assert counts == [0, 0, 3, 0, 0]  # reported once, then at most every REPORT_EVERY_S
    assert state.failure_count() == 5
    clock = [0.0]
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() + clock[0])
    clock[0] = state.REPORT_EVERY_S + 1
    assert state.note_failure("down", threshold=3, can_report=True, start_attempted=False) == 6
    state.note_success()
    assert state.failure_count() == 0
    saved = json.loads((paths.state_dir() / state.FAILURES).read_text())
    assert saved["last_error"] == "down"  # kept for `claude-mem doctor`
    assert state.note_failure("x", threshold=1, can_report=False, start_attempted=False) == 0
    assert state.note_failure("x", threshold=1, can_report=True, start_attempted=False) == 2


def test_no_start_storm_while_clearly_broken() -> None:
    assert state.may_start_worker(threshold=2)
    for _ in range(2):
        state.note_failure("down", threshold=2, can_report=False, start_attempted=True)
    assert not state.may_start_worker(threshold=2)
    later = time.time() + state.START_BACKOFF_S + 1
    assert state.may_start_worker(threshold=2, now=later)
    state.note_success()
    assert state.may_start_worker(threshold=2)


def test_state_files_are_private(data_dir: Path) -> None:
    state.note_failure("down", threshold=3, can_report=False, start_attempted=False)
    state.mark_capture_broken("no payload")
    for name in (state.FAILURES, state.CAPTURE_BROKEN):
        assert (data_dir / "state" / name).stat().st_mode & 0o777 == 0o600
    line = state.take_capture_broken()
    assert line is not None
    assert "no payload" in line
    assert state.take_capture_broken() is None


def test_install_hints_come_from_the_agents_config_not_the_data_dir(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    assert version_check.hint("claude-code", str(project)) is None  # not installed: no advice
    version_check.write_install_marker("0.0.9")  # the data dir says nothing about the hooks
    assert version_check.hint("claude-code", str(project)) is None
    settings = project / ".claude" / "settings.json"  # `install --project`, seen from a subdir
    settings.parent.mkdir()
    ours = {"type": "command", "command": "/venv/python -I -S /x/claude_mem/hooks/entry.py c e"}
    events = [e for e in installed.REGISTER["claude-code"] if e != "Stop"]
    settings.write_text(json.dumps({"hooks": {e: [{"hooks": [ours]}] for e in events}}))
    line = version_check.hint("claude-code", str(project / "src"))
    assert line == (
        f"claude-mem {__version__}: the hooks in {settings} lack Stop; "
        "run `claude-mem install` to refresh them."
    )
    assert version_check.hint_once("claude-code", str(project)) == line
    assert version_check.hint_once("claude-code", str(project)) is None  # once, not every session
    user = home / ".claude" / "settings.json"  # the user's file registers the rest
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [ours]}]}}))
    assert version_check.hint("claude-code", str(project)) is None


def test_the_installer_writes_the_events_and_files_the_hooks_check() -> None:
    from claude_mem.install import IDES
    from claude_mem.install.base import Scope
    from claude_mem.install.flow import ide_module

    scope = Scope(Path("/home/dev"), Path("/work/p"), {})
    for ide in IDES:
        module = ide_module(ide)
        assert tuple(hook.event for hook in module.HOOKS) == installed.REGISTER[ide], ide
        path = str(module.targets(scope, HookCommand("/py", "/e"), False)[0].path)
        assert path == installed.hook_file(ide, "/home/dev", {}, "/work/p"), ide


def write_lines(path: Path, records: list[object]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_transcript_shapes(tmp_path: Path) -> None:
    claude = tmp_path / "claude.jsonl"
    write_lines(
        claude,
        [
            {"type": "assistant", "message": {"role": "assistant", "content": "older"}},
            {"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "Fixed it."},
                {"type": "text", "text": "Tests pass."},
            ]}},
            {"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "name": "Bash", "input": {}}
            ]}},
            "not a record",
        ],
    )  # fmt: skip
    assert transcript.last_assistant_text(str(claude)) == "Fixed it.\nTests pass."
    codex = tmp_path / "codex.jsonl"
    write_lines(
        codex,
        [
            {"type": "response_item", "payload": {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "MOCK-FINAL: done"}]}},
            {"type": "response_item", "payload": {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "the assistant said"}]}},
        ],
    )  # fmt: skip
    assert transcript.last_assistant_text(str(codex)) == "MOCK-FINAL: done"
    assert transcript.last_assistant_text(str(tmp_path / "missing.jsonl")) is None
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert transcript.last_assistant_text(str(empty)) is None


def test_transcript_is_read_from_the_end_and_bounded(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    old = {"type": "assistant", "message": {"role": "assistant", "content": "ancient"}}
    filler = {"type": "user", "message": {"role": "user", "content": "y" * 1000}}
    newest = {"type": "assistant", "message": {"role": "assistant", "content": "newest"}}
    with path.open("w") as handle:
        handle.write(json.dumps(old) + "\n")
        for _ in range(3000):  # ~3 MB of lines that are not the assistant's
            handle.write(json.dumps(filler) + "\n")
        handle.write(json.dumps(newest) + "\n")
    assert transcript.last_assistant_text(str(path)) == "newest"
    path.write_text(
        json.dumps(old) + "\n" + "".join(json.dumps(filler) + "\n" for _ in range(3000))
    )
    assert transcript.last_assistant_text(str(path)) == "ancient"
    assert transcript.last_assistant_text(str(path), limit=1 << 20) is None  # beyond the bound


def test_gemini_hook_context_is_not_the_users_prompt() -> None:
    assert without_hook_context("<hook_context>M</hook_context>\n\nDo it") == "Do it"
    assert without_hook_context("a <hook_context>x</hook_context>b<hook_context>y") == "a b"
    assert without_hook_context("plain") == "plain"


def test_parse_accepts_objects_only() -> None:
    assert parse(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}
    assert parse(b'{"a": "\xff"}') == {"a": "\ufffd"}
    assert parse(b'{"a": "x\ty\x1b\x00"}') == {"a": "x\ty\x1b\x00"}  # raw bytes of a binary
    assert parse(b"[]") == "not a JSON object"
    assert parse(b"{") == "not valid JSON"


def test_bad_arguments_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run([]) == 0
    assert run(["claude-code"]) == 0
    assert run(["nope", "stop"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3
    assert all(line.startswith("claude-mem: ") for line in err)


class RecordingWorker:
    """Stands in for transport.Worker inside handlers."""

    in_process = False

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, object]] = []
        self.host, self.port, self.timeout = "127.0.0.1", 1, 0.1

    def call(self, method: str, path: str, payload: object = None) -> None:
        self.calls.append((method, path, payload))

    def ensure_started(self, wait_s: float) -> bool:
        return False


def handle(event: HookEvent, **env: str) -> tuple[HookResult, list[tuple[str, str, object]]]:
    worker = RecordingWorker()
    ctx = handlers.Context(settings.load(environ=env), worker)
    return handlers.HANDLERS[event.kind](event, ctx), worker.calls


def test_prompt_handler_edge_cases() -> None:
    def sent(prompt: str | None) -> object:
        event = HookEvent(
            "claude-code", "UserPromptSubmit", "prompt", session_id="s", prompt=prompt
        )
        _, calls = handle(event)
        return calls[0][2]["prompt"] if calls else None  # type: ignore[index]  # the JSON body sent

    assert sent("hello <private>x</private>") == "hello"
    assert sent("<private>x</private>") == handlers.PRIVATE_PROMPT
    assert sent("<private>unclosed and secret") == handlers.PRIVATE_PROMPT
    assert sent("") == ""  # an image-only prompt: the worker records "[media prompt]"
    assert sent(None) == ""
    assert sent("<task-notification>x</task-notification>") is None
    no_session = HookEvent("claude-code", "UserPromptSubmit", "prompt", prompt="hi")
    assert handle(no_session)[1] == []


def test_skip_tools_setting_is_honoured_at_the_edge() -> None:
    event = HookEvent("claude-code", "PostToolUse", "tool", session_id="s", tool_name="Grep")
    assert len(handle(event)[1]) == 1
    assert handle(event, CLAUDE_MEM_SKIP_TOOLS="Grep,Glob")[1] == []


def test_session_start_without_a_worker_still_reports_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no agent config: no install hint
    state.mark_capture_broken("cursor stop hook got no payload")
    event = HookEvent("claude-code", "SessionStart", "session_start", session_id="s", cwd="/p")
    result, calls = handle(event)
    assert calls == []
    assert result.context is not None
    assert result.context.startswith("claude-mem: capture was broken: cursor stop hook got no")
    assert "install" not in result.context
    assert result.system_message is not None


def test_terminal_line_counts_index_lines() -> None:
    text = "# [my-app] recent memory, now\nLegend: x\n\n### Nov 30\n12 10:00 ● a\n13 10:05 ○ b"
    line = handlers._terminal_line(text, "::1", 4242)
    assert line == "claude-mem: 2 memories for my-app - viewer: http://[::1]:4242/"
    assert "0 memories for this project" in handlers._terminal_line("odd", "127.0.0.1", 1)


def test_entry_finds_the_package_from_its_own_location() -> None:
    entry = Path(handlers.__file__).with_name("entry.py")
    source = entry.read_text()
    assert "sys.path.insert(0" in source
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(entry))))
    assert Path(top, "claude_mem", "__init__.py").is_file()
