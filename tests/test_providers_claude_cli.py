"""The claude-agent-sdk provider: argv/env construction and output reading against a fake
`claude`, then the real pinned Claude Code CLI against the loopback Anthropic mock."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from claude_mem import settings as settings_mod
from claude_mem.pipeline import registry
from claude_mem.pipeline.parser import parse_response
from claude_mem.pipeline.prompts import SYSTEM_PROMPT
from claude_mem.pipeline.providers.base import (
    Provider,
    ProviderError,
    Result,
    SessionContext,
    SummaryInput,
    ToolEvent,
)
from claude_mem.pipeline.providers.claude_cli import (
    DENIED_TOOLS,
    ClaudeCliProvider,
    CliFeatures,
    build_command,
    child_env,
    read_result,
)
from tests.claude_code import claude_binary, claude_env
from tests.llm_mocks import answer, anthropic_mock, error, slow

XML = """<observation>
  <type>bugfix</type>
  <title>Fixed cart rounding</title>
  <facts><fact>total() now uses Decimal</fact></facts>
  <narrative>Float sums drifted by a cent.</narrative>
</observation>
<observation><type>discovery</type><title>Prices are stored in cents</title></observation>"""
SUMMARY = "<summary><request>Fix totals</request><completed>Rounding fixed</completed></summary>"
PRIVATE = "the private launch plan"
SECRETS = ("sk-ant-api03-" + "K" * 40, "ghp_" + "G" * 36)
CTX = SessionContext(3, "shop", "claude-code", prompts=(f"fix it <private>{PRIVATE}</private>",))
EVENTS = [
    ToolEvent(11, "Read", {"file_path": "cart.py"}, f"KEY={SECRETS[0]}", cwd="/shop"),
    ToolEvent(12, "Bash", {"command": f"gh auth {SECRETS[1]}"}, f"<private>{PRIVATE}</private>"),
]
MODERN_HELP = """Usage: claude [options]
  -p, --print  --output-format <format>  --model <model>  --tools <tools...>
  --disallowedTools, --disallowed-tools <tools...>  --mcp-config <configs...>
  --strict-mcp-config  --setting-sources <sources>  --no-session-persistence
  --permission-mode <mode> (choices: "acceptEdits", "default", "dontAsk", "plan")
  --disable-slash-commands  --system-prompt <prompt>
"""
OLD_HELP = """Usage: claude [options]
  -p, --print  --output-format <format>  --model <model>
  --disallowedTools <tools...>  --mcp-config <configs...>  --strict-mcp-config
  --setting-sources <sources>  --permission-mode <mode> (choices: "default", "plan")
"""
ANCIENT_HELP = "Usage: claude\n  -p, --print  --output-format  --model  --disallowedTools\n"


def run(coro: Coroutine[Any, Any, Result]) -> Result:
    return asyncio.run(coro)


def failure(provider: Provider) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        run(provider.compress(EVENTS, CTX))
    return caught.value


def cli_json(result: str, *, is_error: bool = False, status: int | None = None, **more: Any) -> str:
    """What `claude -p --output-format json` prints (the fields we read, and some we don't)."""
    data = {"type": "result", "subtype": "success", "is_error": is_error, "result": result,
            "api_error_status": status, "num_turns": 1, "session_id": "s",
            "usage": {"input_tokens": 7, "cache_creation_input_tokens": 100,
                      "cache_read_input_tokens": 20, "output_tokens": 30},
            "modelUsage": {"claude-haiku-test": {"outputTokens": 30}}}  # fmt: skip
    data.update(more)
    return json.dumps(data) + "\n"


# --- argv and environment ---------------------------------------------------------------------


def test_command_is_locked_down_and_carries_no_prompt() -> None:
    argv = build_command("/bin/claude", "haiku", CliFeatures.from_help(MODERN_HELP), "SYS")
    assert argv[:6] == ["/bin/claude", "-p", "--output-format", "json", "--model", "haiku"]

    def value(flag: str) -> str:
        return argv[argv.index(flag) + 1]

    assert value("--tools") == ""
    assert value("--disallowedTools").split(",") == list(DENIED_TOOLS)
    assert {"Bash", "Read", "Write", "Edit", "WebFetch", "Task"} <= set(DENIED_TOOLS)
    assert json.loads(value("--mcp-config")) == {"mcpServers": {}}
    assert value("--setting-sources") == ""
    assert value("--permission-mode") == "dontAsk"
    assert value("--system-prompt") == "SYS"
    for flag in ("--strict-mcp-config", "--no-session-persistence", "--disable-slash-commands"):
        assert flag in argv
    assert "--dangerously-skip-permissions" not in argv


def test_older_cli_gets_what_it_supports_and_too_old_is_refused() -> None:
    old = CliFeatures.from_help(OLD_HELP)
    argv = build_command("claude", "haiku", old)
    assert "--tools" not in argv
    assert "--disallowedTools" in argv
    assert "--permission-mode" not in argv  # no dontAsk there; nothing can prompt without tools
    assert "--system-prompt" not in argv
    assert "--no-session-persistence" not in argv
    assert old.missing() == []
    assert set(CliFeatures.from_help(ANCIENT_HELP).missing()) == {
        "--setting-sources", "--strict-mcp-config", "--mcp-config"}  # fmt: skip


def test_environment_drops_our_settings_and_keeps_the_clis_auth() -> None:
    parent = {"CLAUDE_MEM_DATA_DIR": "/d", "CLAUDE_MEM_ANTHROPIC_API_KEY": "ours",
              "ANTHROPIC_API_KEY": "theirs", "ANTHROPIC_BASE_URL": "http://gw", "HOME": "/h",
              "CLAUDE_CODE_OAUTH_TOKEN": "tok", "CLAUDECODE": "1", "PATH": "/bin"}  # fmt: skip
    env = child_env(parent)
    assert [key for key in env if key.startswith("CLAUDE_MEM_")] == ["CLAUDE_MEM_INTERNAL"]
    assert env["CLAUDE_MEM_INTERNAL"] == "1"
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "HOME", "CLAUDE_CODE_OAUTH_TOKEN"):
        assert env[key] == parent[key]
    assert "CLAUDECODE" not in env  # the session that started the worker is not this one
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "1"
    assert child_env({"CLAUDE_CODE_MAX_RETRIES": "4"})["CLAUDE_CODE_MAX_RETRIES"] == "4"


# --- a fake `claude`: what the process really receives ----------------------------------------

FAKE = """#!{python}
import json, os, sys
if "--help" in sys.argv:
    sys.stdout.write({help!r})
    sys.exit(0)
record = {{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(),
          "stdin": sys.stdin.read()}}
with open({record!r}, "w") as f:
    json.dump(record, f)
if {hang}:  # a stuck CLI with a child of its own
    import subprocess, time
    subprocess.Popen(["sleep", "60"])
    time.sleep(60)
sys.stdout.write({output!r})
sys.exit({code})
"""


def fake_cli(
    tmp: Path, output: str, *, code: int = 0, help_text: str = MODERN_HELP, hang: bool = False
) -> Path:
    path = tmp / "bin" / "claude"
    path.parent.mkdir(exist_ok=True)
    record = tmp / "record.json"
    source = FAKE.format(python=sys.executable, help=help_text, record=str(record),
                         output=output, code=code, hang=hang)  # fmt: skip
    path.write_text(source)
    path.chmod(0o755)
    return path


def recorded(tmp: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp / "record.json").read_text())
    return data


def test_fake_cli_sees_observer_cwd_clean_env_and_prompt_on_stdin(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_ANTHROPIC_API_KEY", "must-not-leak")
    monkeypatch.setenv("CLAUDE_MEM_CLAUDE_AGENT_SDK_MODEL", "claude-haiku-4-5")
    monkeypatch.setenv("CLAUDE_MEM_CLAUDE_PATH", str(fake_cli(tmp_path, cli_json(XML))))
    provider = registry.create("claude-agent-sdk", settings_mod.load())
    result = run(provider.compress(EVENTS, CTX))

    seen = recorded(tmp_path)
    observer = data_dir / "observer-sessions"
    assert Path(seen["cwd"]) == observer
    assert stat.S_IMODE(observer.stat().st_mode) == 0o700
    assert {k: v for k, v in seen["env"].items() if k.startswith("CLAUDE_MEM_")} == {
        "CLAUDE_MEM_INTERNAL": "1"}  # fmt: skip
    assert seen["argv"][seen["argv"].index("--model") + 1] == "claude-haiku-4-5"
    assert seen["argv"][seen["argv"].index("--system-prompt") + 1] == SYSTEM_PROMPT
    assert "cart.py" in seen["stdin"]
    assert "cart.py" not in " ".join(seen["argv"])
    assert PRIVATE not in seen["stdin"]
    assert not any(s in seen["stdin"] for s in SECRETS)

    assert [(o.type, o.title) for o in result.observations] == [
        ("bugfix", "Fixed cart rounding"), ("discovery", "Prices are stored in cents")]  # fmt: skip
    assert result.observations[0].source_event_ids == [11, 12]
    assert (result.input_tokens, result.output_tokens) == (127, 30)  # cache reads/writes count
    assert result.model == "claude-haiku-test"


def test_fake_old_cli_gets_the_system_prompt_on_stdin(tmp_path: Path) -> None:
    cli = fake_cli(tmp_path, cli_json(SUMMARY), help_text=OLD_HELP)
    provider = ClaudeCliProvider(claude_path=str(cli))
    result = run(provider.summarize(SummaryInput("Rounding is fixed."), CTX))
    assert result.summary is not None
    assert result.summary.request == "Fix totals"
    stdin = recorded(tmp_path)["stdin"]
    assert stdin.startswith(SYSTEM_PROMPT.strip()[:200])
    assert "Rounding is fixed." in stdin


def test_fake_cli_too_old_or_not_claude_is_setup_required(tmp_path: Path) -> None:
    cli = fake_cli(tmp_path, cli_json(XML), help_text=ANCIENT_HELP)
    err = failure(ClaudeCliProvider(claude_path=str(cli)))
    assert err.kind == "setup_required"
    assert "too old" in err.message
    (tmp_path / "other").mkdir()
    other = fake_cli(tmp_path / "other", "", help_text="usage: something else\n")
    err = failure(ClaudeCliProvider(claude_path=str(other)))
    assert err.kind == "setup_required"
    assert "does not look like Claude Code" in err.message


def test_missing_or_unusable_cli_is_setup_required(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_CLAUDE_PATH", str(tmp_path / "nowhere" / "claude"))
    err = failure(registry.create("claude-agent-sdk", settings_mod.load()))
    assert err.kind == "setup_required"
    assert "CLAUDE_MEM_CLAUDE_PATH" in err.message
    assert "install Claude Code" in err.message

    plain = tmp_path / "claude"
    plain.write_text("not a program")
    assert failure(ClaudeCliProvider(claude_path=str(plain))).kind == "setup_required"

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    err = failure(ClaudeCliProvider())
    assert err.kind == "setup_required"
    assert "PATH" in err.message


def processes_in(folder: Path) -> list[int]:
    """Live processes whose working directory is `folder`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if Path(os.readlink(entry / "cwd")) == folder:
                    found.append(int(entry.name))
    return found


def test_cancelled_or_timed_out_call_ends_the_whole_process_group(
    tmp_path: Path, data_dir: Path
) -> None:
    provider = ClaudeCliProvider(claude_path=str(fake_cli(tmp_path, "", hang=True)), timeout=30)
    observer = data_dir / "observer-sessions"

    async def cancel_midway() -> list[int]:
        task = asyncio.ensure_future(provider.compress(EVENTS, CTX))
        while len(processes_in(observer)) < 2:  # the CLI and its child
            await asyncio.sleep(0.02)
        running = processes_in(observer)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return running

    assert len(asyncio.run(cancel_midway())) == 2
    assert processes_in(observer) == []
    provider.timeout = 0.5
    assert failure(provider).kind == "transient"
    assert processes_in(observer) == []


@pytest.mark.parametrize(
    ("code", "stdout", "stderr", "kind"),
    [
        (1, cli_json("Failed to authenticate. API Error: 401 x", is_error=True, status=401), "",
         "auth"),
        (1, cli_json("Not logged in · Please run /login", is_error=True), "", "auth"),
        (1, cli_json("API Error: 429 rate_limit_error", is_error=True, status=429), "",
         "rate_limit"),
        (1, cli_json("Claude usage limit reached", is_error=True, status=429), "", "quota"),
        (1, cli_json("API Error: 402 billing", is_error=True, status=402), "", "quota"),
        (1, cli_json("API Error: 529 overloaded", is_error=True, status=529), "", "transient"),
        (1, cli_json("Prompt is too long", is_error=True, status=400), "", "unrecoverable"),
        (1, cli_json("", is_error=True, subtype="error_during_execution"), "", "transient"),
        (1, "", "Invalid API key · Please run /login", "auth"),
        (137, "", "", "transient"),
        (0, "not json", "", "transient"),
    ],
)  # fmt: skip
def test_cli_failures_are_classified(code: int, stdout: str, stderr: str, kind: str) -> None:
    with pytest.raises(ProviderError) as caught:
        read_result(code, stdout, stderr)
    assert caught.value.kind == kind


def test_cli_success_with_a_limit_notice_is_quota() -> None:
    """A CLI in front of a subscription may print its limit notice as the reply itself."""
    reply = read_result(0, cli_json("Claude AI usage limit reached|1700000000"), "")
    parsed = parse_response(reply.text)
    assert parsed.error is not None
    assert parsed.error.kind == "quota"


# --- the real Claude Code CLI against the loopback Anthropic mock ------------------------------


@pytest.fixture(scope="module")
def claude() -> Path:
    """The pinned real CLI (installed on first use; may take minutes on a fresh machine)."""
    return claude_binary()


def hooked_home(root: Path) -> tuple[Path, Path]:
    """A HOME whose user settings would run a hook on every event; the file it would touch."""
    home, fired = root / "home", root / "hook-fired"
    (home / ".claude").mkdir(parents=True)
    hook = {"type": "command", "command": f"touch {fired}"}
    events = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
    hooks = {name: [{"matcher": "", "hooks": [hook]}] for name in events}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    (home / ".claude" / "CLAUDE.md").write_text("USER-MEMORY-MARKER")
    return home, fired


def real(claude: Path, url: str, home: Path, **options: Any) -> ClaudeCliProvider:
    return ClaudeCliProvider(claude_path=str(claude), environ=claude_env(url, home), **options)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_real_cli_answers_become_drafts_sent_locked_down(claude: Path, tmp_path: Path) -> None:
    home, fired = hooked_home(tmp_path)
    with anthropic_mock() as api:
        api.script(answer(XML, usage=(900, 120)), answer(SUMMARY, usage=(400, 60)))
        provider = real(claude, api.url, home)
        result = run(provider.compress(EVENTS, CTX))
        summary = run(provider.summarize(SummaryInput("Done: rounding fixed."), CTX))
        calls = api.calls("/v1/messages")
    assert len(calls) == 2
    assert [(o.type, o.title) for o in result.observations] == [
        ("bugfix", "Fixed cart rounding"), ("discovery", "Prices are stored in cents")]  # fmt: skip
    assert (result.input_tokens, result.output_tokens) == (900, 120)
    assert summary.summary is not None
    assert summary.summary.completed == "Rounding fixed"
    assert (summary.input_tokens, summary.output_tokens) == (400, 60)
    body = calls[0].json
    assert result.model == body["model"]  # the CLI resolved the "haiku" alias
    assert not body.get("tools")  # no tools offered to the observer at all
    assert "cart.py" in calls[0].text
    for request in calls:
        assert PRIVATE not in request.text
        assert not any(secret in request.text for secret in SECRETS)
        assert "USER-MEMORY-MARKER" not in request.text
    assert SYSTEM_PROMPT.splitlines()[0] in json.dumps(body["system"])
    assert not fired.exists()  # the user's hooks never ran for the observer
    assert not list((home / ".claude").glob("projects/*/*.jsonl"))  # no transcript kept


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_real_cli_prose_is_empty_and_401_is_auth(claude: Path, tmp_path: Path) -> None:
    with anthropic_mock() as api:
        api.script(answer("I looked at the files; nothing notable happened."))
        result = run(real(claude, api.url, tmp_path / "home").compress(EVENTS, CTX))
    assert result.observations == []
    assert result.summary is None
    with anthropic_mock(error(401, "invalid x-api-key")) as api:
        err = failure(real(claude, api.url, tmp_path / "home"))
    assert err.kind == "auth"
    assert err.status == 401


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_real_cli_timeout_is_transient_and_leaves_no_process(
    claude: Path, tmp_path: Path, data_dir: Path
) -> None:
    observer = data_dir / "observer-sessions"

    async def scenario(url: str) -> tuple[list[int], ProviderError]:
        provider = real(claude, url, tmp_path / "home", timeout=5.0)
        await provider.features(provider.binary())  # probe first: the clock is for the call
        task = asyncio.ensure_future(provider.compress(EVENTS, CTX))
        while not api.calls("/v1/messages") and not task.done():
            await asyncio.sleep(0.05)
        running = processes_in(observer)
        with pytest.raises(ProviderError) as caught:
            await task
        return running, caught.value

    # The mock holds the request far longer than the provider's timeout: only the provider's
    # own timeout (and the kill after it) can end the call with an error.
    with anthropic_mock(slow(60)) as api:
        running, err = asyncio.run(scenario(api.url))
    assert running, "the CLI was not seen running while the mock held its request"
    assert err.kind == "transient"
    assert "stopped" in err.message
    assert processes_in(observer) == []


def test_fake_cli_answers_map_to_the_calls_they_name(tmp_path: Path) -> None:
    reply = XML.replace("<type>bugfix</type>", "<type>bugfix</type><tool_calls>2</tool_calls>")
    provider = ClaudeCliProvider(claude_path=str(fake_cli(tmp_path, cli_json(reply))))
    first, second = run(provider.compress(EVENTS, CTX)).observations
    assert (first.source_event_ids, second.source_event_ids) == ([12], [11, 12])
    assert '<tool_event call="2">' in recorded(tmp_path)["stdin"]
