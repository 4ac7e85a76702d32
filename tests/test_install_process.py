"""Written hook commands run as the hosts run them (`bash -c`); install starts the worker."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from claude_mem.install import flow, mcp
from claude_mem.install.base import HookCommand, Scope, is_ours
from claude_mem.worker import lifecycle
from tests.net import DeadPort, free_port
from tests.worker_fixtures import RunningWorker

REPO = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("claude-mem")
CONFIGS = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini-cli": ".gemini/settings.json",
    "cursor": ".cursor/hooks.json",
    "windsurf": ".codeium/windsurf/hooks.json",
}


def host_env(home: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_MEM_", "CODEX_"))}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.update(
        HOME=str(home),
        CLAUDE_MEM_DATA_DIR=os.environ["CLAUDE_MEM_DATA_DIR"],
        CLAUDE_MEM_WORKER_PORT=str(port),
        CLAUDE_MEM_HOOK_TIMEOUT_MS="300",
        CLAUDE_MEM_HOOK_FAIL_LOUD_THRESHOLD="1000",
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
    )
    return env


def commands(doc: Any) -> list[str]:
    """Every command of ours in a config document, wherever it sits."""
    if isinstance(doc, dict):
        found = [doc["command"]] if is_ours(doc.get("command")) else []
        return found + [c for v in doc.values() for c in commands(v)]
    if isinstance(doc, list):
        return [c for v in doc for c in commands(v)]
    return []


def payload(event: str, cwd: Path) -> bytes:
    """One payload with every platform's fields: adapters ignore what they don't use."""
    return json.dumps(
        {
            "session_id": "s-1",
            "conversation_id": "c-1",
            "trajectory_id": "t-1",
            "hook_event_name": event,
            "agent_action_name": event,
            "cwd": str(cwd),
            "workspace_roots": [str(cwd)],
            "prompt": "list the files",
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "tool_response": "README.md",
            "command": "ls",
            "output": "README.md",
            "tool_info": {"cwd": str(cwd), "command_line": "ls", "user_prompt": "list"},
        }
    ).encode()


def run_hook(command: str, event: str, env: dict[str, str], cwd: Path) -> None:
    """Run `command` like a host (through bash): exit 0, and nothing or one JSON object out."""
    done = subprocess.run(
        ["bash", "-c", command],
        input=payload(event, cwd),
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, (command, done.stderr)
    lines = done.stdout.decode().splitlines()
    assert len(lines) <= 1, (command, done.stdout)
    if lines:
        assert isinstance(json.loads(lines[0]), dict), (command, done.stdout)


def test_every_written_command_runs(
    tmp_path: Path, dead: DeadPort, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setattr(mcp, "available", lambda: False)
    scope = Scope(home, env={"CODEX_HOME": str(home / ".codex")})
    env = host_env(home, dead.port)
    ran = 0
    for ide, rel in CONFIGS.items():
        # Command hooks everywhere, Claude Code's per-tool-call ones included.
        opts = flow.Options("install", ide, worker=False, hook_transport="command")
        assert flow.run(opts, scope=scope, out=io.StringIO()) == 0
        found = commands(json.loads((home / rel).read_text()))
        assert found, ide
        for command in found:
            run_hook(command, command.rsplit(" ", 1)[1], env, project)
            ran += 1
    assert ran == 29


def test_paths_with_spaces(tmp_path: Path, dead: DeadPort) -> None:
    """A venv, a package and a home whose paths hold spaces: quoted right, and still run."""
    venv = tmp_path / "my venv"
    venv.symlink_to(Path(sys.prefix))
    site = tmp_path / "site packages"
    site.symlink_to(REPO / "src")
    home = tmp_path / "my home"
    project = tmp_path / "my project"
    project.mkdir()
    command = HookCommand(
        str(venv / "bin" / Path(sys.executable).name),
        str(site / "claude_mem" / "hooks" / "entry.py"),
    )
    scope = Scope(home, project)
    out = io.StringIO()
    opts = flow.Options(
        "install", "claude-code", project=True, worker=False, hook_transport="command"
    )
    assert flow.run(opts, scope=scope, command=command, out=out) == 0
    settings = project / ".claude" / "settings.json"
    doc = json.loads(settings.read_text())
    line = doc["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert line.startswith(f"'{venv}/bin/")
    assert f"'{site}/claude_mem/hooks/entry.py' claude-code PostToolUse" in line
    env = host_env(home, dead.port)
    for event in ("SessionStart", "PostToolUse", "Stop"):
        run_hook(doc["hooks"][event][0]["hooks"][0]["command"], event, env, project)
    opts = flow.Options("uninstall", "claude-code", project=True, worker=False)
    assert flow.run(opts, scope=scope, command=command, out=io.StringIO()) == 0
    assert not settings.exists()


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`claude-mem ARGS` as a user runs it, in `env`."""
    return subprocess.run(
        [str(CLI), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_install_starts_the_worker(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    port = free_port()
    env = host_env(home, port)

    try:
        done = cli(env, "install")
        assert done.returncode == 0, done.stderr
        # Not the bare viewer URL (its page says "not signed in"): the command that signs in.
        (worker_line,) = [line for line in done.stdout.splitlines() if line.startswith("worker:")]
        assert worker_line.endswith("; the viewer: `claude-mem viewer --open` signs a browser in")
        assert "http" not in worker_line
        link = cli(env, "viewer")
        assert link.returncode == 0, link.stderr
        assert f"http://127.0.0.1:{port}/auth?code=" in link.stdout
        health = lifecycle.probe(port, 2.0)
        assert health is not None
        assert f"started the worker (pid {health['pid']}, port {port})" in done.stdout
        again = cli(env, "install")  # the same worker: said, but not as a start
        assert again.returncode == 0, again.stderr
        assert "started the worker" not in again.stdout
        assert f"already running (pid {health['pid']}, port {port})" in again.stdout
        done = cli(env, "uninstall", "--keep-worker")
        assert done.returncode == 0, done.stderr
        assert lifecycle.probe(port, 2.0) is not None
        assert not (home / ".claude" / "settings.json").exists()
    finally:
        stop = cli(env, "worker", "stop")
    assert stop.returncode == 0, stop.stderr
    assert "worker stopped" in stop.stdout
    assert lifecycle.probe(port, 0.5) is None


def test_http_hooks_follow_the_port_the_started_worker_took(
    tmp_path: Path, worker: RunningWorker
) -> None:
    """The configured port is held by another data dir's worker: ours starts on a free port,
    and install rewrites the http hooks' URLs to it."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**host_env(home, worker.port), "CLAUDE_MEM_DATA_DIR": str(tmp_path / "second")}

    try:
        done = cli(env, "install")
        assert done.returncode == 0, done.stderr
        ours = json.loads((tmp_path / "second" / "worker.pid").read_text())["port"]
        assert ours != worker.port
        assert f"the worker listens on port {ours}: rewriting" in done.stdout
        settings = json.loads((home / ".claude" / "settings.json").read_text())
        url = settings["hooks"]["PostToolUse"][0]["hooks"][0]["url"]
        assert url == f"http://127.0.0.1:{ours}/api/hooks/claude-code/PostToolUse"
        token = (tmp_path / "second" / "hook.token").read_text().strip()
        assert settings["env"]["CLAUDE_MEM_HOOK_TOKEN"] == token
        assert token != worker.state.hook_token
    finally:
        stop = cli(env, "worker", "stop")
    assert stop.returncode == 0, stop.stderr
