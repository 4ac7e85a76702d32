"""The command hook's fast path (hooks/forward.py): the payload handed whole to the running
worker, which answers as the hook's full path (hooks/runner.py) would have."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from claude_mem import __version__, locations
from claude_mem.hooks import forward
from claude_mem.hooks.installed import HOOK_FILES
from claude_mem.worker import lifecycle
from claude_mem.worker.client import WorkerUnavailable, request
from tests.polling import wait_until
from tests.test_hooks_process import (
    ENTRY,
    FORBIDDEN,
    PATTERN_MODULES,
    SECRET,
    FakeWorker,
    Live,
    answer,
    base_env,
    hook,
    live,
)

__all__ = ["live"]  # the real worker of tests/test_hooks_process.py, one per module

SRC = Path(__file__).resolve().parents[1] / "src" / "claude_mem"
# Imported by the full path only: a forwarded event never loads them.
FULL_PATH = (
    "claude_mem.hooks.runner", "claude_mem.hooks.handlers", "claude_mem.hooks.adapters",
    "claude_mem.settings", "claude_mem.privacy", "claude_mem.hooks.transport",
)  # fmt: skip


def traced(event: str, payload: dict[str, Any], env: dict[str, str], cwd: Path | None = None
           ) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:  # fmt: skip
    """The hook as a host runs it, with the modules it imported."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", str(ENTRY), "claude-code", event],
        input=json.dumps(payload).encode(),
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=60,
        check=False,
    )
    lines = done.stderr.decode().splitlines()
    modules = {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}
    said = b"\n".join(line for line in done.stderr.splitlines() if not line.startswith(b"import"))
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, said), modules


def full_path_env(live: Live) -> dict[str, str]:
    """live.env plus a variable only the Gemini CLI adapter reads: for a Claude Code event the
    same answer, but the worker's environment differs, so the full path runs."""
    return {**live.env, "GEMINI_CWD": "/elsewhere"}


def events(
    session: str, cwd: str, prompt: str = "Run the tests of the parser and fix what fails"
) -> list[tuple[str, dict[str, Any]]]:
    base = {"session_id": session, "cwd": cwd, "transcript_path": "/nonexistent.jsonl"}
    tool = {"tool_name": "Bash", "tool_input": {"command": "pytest -q"},
            "tool_response": {"stdout": f"3 passed, key {SECRET} <private>pin 4321</private>"},
            "tool_use_id": f"toolu_{session}"}  # fmt: skip
    return [
        ("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        ("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit",
                              "prompt": prompt}),
        ("PostToolUse", {**base, "hook_event_name": "PostToolUse", **tool}),
        ("Stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                  "last_assistant_message": "All green."}),
        ("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "other"}),
    ]  # fmt: skip


@pytest.fixture(autouse=True)
def ready(live: Live) -> Live:
    """The module's worker once its store is open (until then it declines, with 503, and the
    full path waits for it)."""

    def answers() -> bool:
        try:
            return request("GET", "/api/readiness", port=live.port).status == 200
        except WorkerUnavailable:
            return False

    assert wait_until(answers)
    return live


def test_a_running_worker_takes_the_whole_event_and_the_hook_loads_no_handler(
    live: Live,
) -> None:
    for event, payload in events("fwd-1", str(live.project)):
        done, modules = traced(event, payload, live.env)
        assert (done.returncode, done.stderr) == (0, b""), (event, done.stderr)
        answer(done)
        assert "claude_mem.hooks.forward" in modules
        assert not {m for m in modules if m.startswith(FULL_PATH)}, (event, sorted(modules))
        banned = (*FORBIDDEN, *PATTERN_MODULES)  # the full path's fence holds here too
        assert not {m for m in modules if m.split(".")[0] in banned or m in banned}, event
    session = live.session("claude-code", "fwd-1")
    assert session is not None
    assert session[1] == "completed"
    tools = live.query("SELECT tool_use_id FROM tool_uses WHERE session_id = ?", session[0])
    assert tools == [("toolu_fwd-1",)]
    prompts = live.query("SELECT text FROM user_prompts WHERE session_id = ?", session[0])
    assert prompts == [("Run the tests of the parser and fix what fails",)]
    for path in live.data_dir.rglob("*"):  # the store cleaned what the hook no longer did
        if path.is_file():
            data = path.read_bytes()
            assert SECRET.encode() not in data, path
            assert b"pin 4321" not in data, path


def test_the_fast_path_answers_byte_for_byte_as_the_full_path(live: Live, tmp_path: Path) -> None:
    fast_env, full_env = live.env, full_path_env(live)
    # A project of its own, whose memory the worker's pipeline cannot change between the two
    # session starts (the other tests' events are compressed meanwhile), and a prompt too
    # short to look for related work: the first path's would be the second's.
    project, short = tmp_path / "compared", "fix it"
    project.mkdir()
    for (event, fast), (_, full) in zip(
        events("fwd-fast", str(project), short),
        events("fwd-full", str(project), short),
        strict=True,
    ):
        done_fast, fast_modules = traced(event, fast, fast_env)
        done_full, full_modules = traced(event, full, full_env)
        assert "claude_mem.hooks.runner" not in fast_modules
        assert "claude_mem.hooks.runner" in full_modules
        got = (done_fast.returncode, done_fast.stdout, done_fast.stderr)
        assert got == (done_full.returncode, done_full.stdout, done_full.stderr), event
    for session in ("fwd-fast", "fwd-full"):
        found = live.session("claude-code", session)
        assert found is not None
        assert found[1] == "completed"
        tools = live.query("SELECT COUNT(*) FROM tool_uses WHERE session_id = ?", found[0])
        assert tools == [(1,)]


def test_stderr_and_the_exit_code_come_back_from_the_worker(live: Live, tmp_path: Path) -> None:
    """Setup's upgrade hint, a line on stderr, through either path alike."""
    project = tmp_path / "old-install"
    (project / ".claude").mkdir(parents=True)
    ours = {"type": "command", "command": f"python {ENTRY} claude-code SessionStart"}
    settings = {"hooks": {"SessionStart": [{"hooks": [ours]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    payload = {"session_id": "fwd-setup", "cwd": str(project), "hook_event_name": "Setup"}
    fast, fast_modules = traced("Setup", payload, live.env)
    full, _ = traced("Setup", payload, full_path_env(live))
    assert "claude_mem.hooks.runner" not in fast_modules
    assert b"claude-mem install" in fast.stderr
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        full.returncode,
        full.stdout,
        full.stderr,
    )


def test_a_payload_without_cwd_gets_the_hook_process_own(live: Live, tmp_path: Path) -> None:
    where = tmp_path / "somewhere"
    where.mkdir()
    payload = {"session_id": "fwd-cwd", "hook_event_name": "UserPromptSubmit",
               "prompt": "Explain how the cache layer evicts"}  # fmt: skip
    done, modules = traced("UserPromptSubmit", payload, live.env, cwd=where)
    assert done.returncode == 0
    assert "claude_mem.hooks.runner" not in modules
    session = live.session("claude-code", "fwd-cwd")
    assert session is not None
    projects = live.query("SELECT project FROM sessions WHERE id = ?", session[0])
    assert projects == [("somewhere",)]


def test_a_hook_timeout_longer_than_the_fast_path_waits_takes_the_full_path(live: Live) -> None:
    settings = live.data_dir / "settings.json"
    settings.write_text(json.dumps({"CLAUDE_MEM_HOOK_TIMEOUT_MS": forward.WAIT_MS + 1000}))
    try:
        payload = dict(events("fwd-slow", str(live.project))[2][1])
        done, modules = traced("PostToolUse", payload, live.env)
    finally:
        settings.unlink()
    assert (done.returncode, answer(done)) == (0, {})
    assert "claude_mem.hooks.runner" in modules  # the worker declined; the full path ran
    session = live.session("claude-code", "fwd-slow")
    assert session is not None
    tools = live.query("SELECT COUNT(*) FROM tool_uses WHERE session_id = ?", session[0])
    assert tools == [(1,)]  # once: the decline stored nothing


def test_a_stale_pid_file_never_sends_the_raw_payload_to_whoever_holds_the_port(
    tmp_path: Path,
) -> None:
    """The worker died (kill -9) and another program now listens on its port: only the full
    path talks to it, and it sends what the privacy rules left."""
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    (data_dir / "install-version").write_text(__version__ + "\n")
    fake = FakeWorker()
    try:
        (tmp_path / "home").mkdir()
        env = base_env(data_dir, fake.port, tmp_path / "home")
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
        info = {"pid": int(dead.stdout), "host": "127.0.0.1", "port": fake.port,
                "env": forward.environment_digest(env), "version": __version__,
                "start_time": 1}  # fmt: skip
        (data_dir / "worker.pid").write_text(json.dumps(info))
        (data_dir / "worker.token").write_text("t" * 64)
        payload = events("fwd-stale", "/home/dev/proj")[2][1]
        done = hook("claude-code", "PostToolUse", payload, env)
        assert done.returncode == 0
        paths = [path for _, path, _ in fake.requests]
        assert not [p for p in paths if p.startswith(forward.ROUTE)], paths
        sent = b"".join(body for _, _, body in fake.requests)
        assert SECRET.encode() not in sent
        assert b"pin 4321" not in sent
        assert "/api/sessions/observations" in [p.split("?")[0] for p in paths]
    finally:
        fake.close()


# --- which worker the fast path may use (hooks.forward._worker) -----------------------------


def publish(data_dir: Path, **changed: object) -> None:
    """A pid file naming this test process as the worker, as the worker writes it."""
    data_dir.mkdir(mode=0o700, exist_ok=True)
    pid = os.getpid()
    info = {"pid": pid, "host": "127.0.0.1", "port": 40001,
            "env": forward.environment_digest(os.environ), "version": __version__,
            "start_time": lifecycle.process_start_time(pid), "started_at": time.time()}  # fmt: skip
    info.update(changed)
    locations.write_private_file(str(data_dir / "worker.pid"), json.dumps(info))


def test_only_a_live_worker_of_this_version_and_environment_is_used(data_dir: Path) -> None:
    publish(data_dir)
    assert forward._worker() is None  # no token yet: the worker makes it as it starts
    locations.write_private_file(str(data_dir / "worker.token"), "h" * 64 + "\n")
    assert forward._worker() == ("127.0.0.1", 40001, "h" * 64)
    for changed in (
        {"version": "0.0.1"},  # an older worker still running after an upgrade
        {"env": forward.environment_digest({"HOME": "/elsewhere"})},
        {"start_time": 1},  # the pid now belongs to another process
        {"host": None},
        {"port": "40001"},
    ):
        publish(data_dir, **changed)
        assert forward._worker() is None, changed


def test_the_environment_digest_covers_what_the_hook_path_reads() -> None:
    base = {"HOME": "/home/dev", "PATH": "/usr/bin", "CLAUDE_MEM_DATA_DIR": "/d"}
    digest = forward.environment_digest(base)
    assert forward.environment_digest({**base, "PATH": "/bin", "PWD": "/x"}) == digest
    assert forward.environment_digest({**base, "CLAUDE_MEM_HOOK_TOKEN": "t"}) == digest
    for name in (*forward.ENVIRONMENT, "CLAUDE_MEM_INTERNAL", "CLAUDE_MEM_MODE"):
        assert forward.environment_digest({**base, name: "1"}) != digest, name


ENV_READ = re.compile(r"""(?:environ|env)(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]*)["']""")


def test_every_variable_the_hook_path_reads_is_in_the_digest() -> None:
    """The code a command hook's full path runs in the hook process (the hooks package and the
    shared modules it imports): each variable it reads is one the digest covers."""
    files = [*(SRC / "hooks").rglob("*.py"), *(SRC / f"{name}.py" for name in
             ("settings", "locations", "control", "privacy"))]  # fmt: skip
    read = set()
    for path in files:
        text = path.read_text()
        read |= set(ENV_READ.findall(text))
        if "expanduser" in text:
            read.add("HOME")
    read |= {variable for _, variable, _, _ in HOOK_FILES.values() if variable}
    covered = {n for n in read if n.startswith(forward.ENV_PREFIX) or n in forward.ENVIRONMENT}
    assert read - covered == set()
    assert read >= forward.ENVIRONMENT  # none listed that nothing reads
    assert forward.UNREAD.isdisjoint(read)


@pytest.mark.parametrize("text", ["", "plain", "a%20b", "%E2%82%AC", "100%", "%zz", "%4", "%C3"])
def test_unquote_is_urllibs(text: str) -> None:
    from urllib.parse import unquote as urllib_unquote

    from claude_mem.hooks.percent import quote, unquote

    assert unquote(text) == urllib_unquote(text)
    assert unquote(quote(text)) == text
