"""`claude-mem install` / `uninstall` per IDE, on real files in a temporary HOME."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import claude_mem
from claude_mem import __version__
from claude_mem.cli import main
from claude_mem.install import files, http_hooks, mcp, merge
from claude_mem.worker.token import read_hook_token

PY = os.path.abspath(sys.executable)
ENTRY = str(Path(claude_mem.__file__).resolve().parent / "hooks" / "entry.py")
OTHER = {"type": "command", "command": "~/bin/notify.sh", "timeout": 5}
PORT = "45671"


def cmd(platform: str, event: str) -> str:
    return f"{shlex.quote(PY)} -I -S {shlex.quote(ENTRY)} {platform} {event}"


class Env:
    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.project = root / "project"
        self.codex_home = root / "codex-home"
        self.data_dir = data_dir
        self.capsys = capsys

    def cli(self, *args: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        code = main(list(args))
        captured = self.capsys.readouterr()
        return code, captured.out, captured.err

    def files(self) -> list[str]:
        """Every file outside the data dir, relative to the temp root."""
        return sorted(
            str(p.relative_to(self.root))
            for p in self.root.rglob("*")
            if p.is_file() and self.data_dir not in p.parents
        )


@pytest.fixture
def env(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    data_dir: Path,
) -> Env:
    e = Env(tmp_path, capsys, data_dir)
    e.home.mkdir()
    e.project.mkdir()
    monkeypatch.setenv("HOME", str(e.home))
    monkeypatch.setenv("CODEX_HOME", str(e.codex_home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / "xdg" / name.lower()))
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", PORT)
    # The pinned command lines name the venv's python: the choice among interpreters is
    # test_hook_python's; here it is forced, as a user may.
    monkeypatch.setenv("CLAUDE_MEM_HOOK_PYTHON", PY)
    monkeypatch.chdir(e.project)
    monkeypatch.setattr(mcp, "available", lambda: False)  # today's default, made explicit
    return e


def group(platform: str, event: str, timeout: int, matcher: str | None = None) -> dict[str, Any]:
    handler = {"type": "command", "command": cmd(platform, event), "timeout": timeout}
    return {**({"matcher": matcher} if matcher else {}), "hooks": [handler]}


def http_group(
    event: str, timeout: int, matcher: str | None = None, token: str = "$CLAUDE_MEM_HOOK_TOKEN"
) -> dict[str, Any]:
    handler: dict[str, Any] = {
        "type": "http",
        "url": f"http://127.0.0.1:{PORT}/api/hooks/claude-code/{event}",
        "timeout": timeout,
        "headers": {"x-claude-mem-hook-token": token},
    }
    if token.startswith("$"):
        handler["allowedEnvVars"] = ["CLAUDE_MEM_HOOK_TOKEN"]
    return {**({"matcher": matcher} if matcher else {}), "hooks": [handler]}


def claude_hooks(http: bool = True, token: str = "$CLAUDE_MEM_HOOK_TOKEN") -> dict[str, Any]:
    """What the installer writes for Claude Code: by default the per-tool-call events, Stop
    and SessionEnd as http hooks, the ones that start the worker as commands."""
    p = "claude-code"

    def tool(event: str, timeout: int, matcher: str | None = None) -> dict[str, Any]:
        if http:
            return http_group(event, timeout, matcher, token)
        return group(p, event, timeout, matcher)

    return {
        "Setup": [group(p, "Setup", 30)],
        "SessionStart": [group(p, "SessionStart", 60, "startup|resume|clear|compact")],
        "UserPromptSubmit": [group(p, "UserPromptSubmit", 30)],
        "PreToolUse": [tool("PreToolUse", 30, "Read")],
        "PostToolUse": [tool("PostToolUse", 30, "*")],
        "PostToolUseFailure": [tool("PostToolUseFailure", 30, "*")],
        "Stop": [tool("Stop", 30)],
        "SessionEnd": [tool("SessionEnd", 30)],
    }


def claude_doc() -> dict[str, Any]:
    return {"hooks": claude_hooks(), "env": {"CLAUDE_MEM_HOOK_TOKEN": read_hook_token()}}


def codex_doc() -> dict[str, Any]:
    reads = r"^Bash$|^mcp__.+__(read|view|cat)(_file|_files)?$"
    return {
        "hooks": {
            "SessionStart": [group("codex", "SessionStart", 60)],
            "UserPromptSubmit": [group("codex", "UserPromptSubmit", 30)],
            "PreToolUse": [group("codex", "PreToolUse", 30, reads)],
            "PostToolUse": [group("codex", "PostToolUse", 30)],
            "Stop": [group("codex", "Stop", 30)],
            "SessionEnd": [group("codex", "SessionEnd", 3)],
        }
    }


def gemini_doc() -> dict[str, Any]:
    hooks = {}
    for event, ms in (
        ("SessionStart", 60_000),
        ("BeforeAgent", 30_000),
        ("AfterTool", 30_000),
        ("AfterAgent", 30_000),
        ("SessionEnd", 30_000),
    ):
        handler = {"name": "claude-mem", "type": "command", "command": cmd("gemini-cli", event)}
        hooks[event] = [{"hooks": [{**handler, "timeout": ms, "description": "*"}]}]
    return {"hooks": hooks}


CURSOR = ("beforeSubmitPrompt", "afterShellExecution", "afterMCPExecution", "afterFileEdit", "stop")
WINDSURF = (
    "pre_user_prompt",
    "post_run_command",
    "post_mcp_tool_use",
    "post_write_code",
    "post_cascade_response",
)


def cursor_doc() -> dict[str, Any]:
    return {"version": 1, "hooks": {e: [{"command": cmd("cursor", e)}] for e in CURSOR}}


def windsurf_doc() -> dict[str, Any]:
    hooks = {e: [{"command": cmd("windsurf", e), "show_output": False}] for e in WINDSURF}
    return {"hooks": hooks}


# ide -> (file under HOME, file under the project with --project, expected fresh content)
IDES: dict[str, tuple[str, str, Callable[[], dict[str, Any]]]] = {
    "claude-code": (
        "home/.claude/settings.json",
        "project/.claude/settings.json",
        claude_doc,
    ),
    "codex": ("codex-home/hooks.json", "project/.codex/hooks.json", codex_doc),
    "gemini-cli": ("home/.gemini/settings.json", "project/.gemini/settings.json", gemini_doc),
    "cursor": ("home/.cursor/hooks.json", "project/.cursor/hooks.json", cursor_doc),
    "windsurf": (
        "home/.codeium/windsurf/hooks.json",
        "project/.windsurf/hooks.json",
        windsurf_doc,
    ),
}

# Unrelated content a user might already have, including a hook on one of our events.
EXISTING: dict[str, dict[str, Any]] = {
    "claude-code": {
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
        "hooks": {
            "PostToolUse": [{"matcher": "Edit|Write", "hooks": [OTHER]}],
            "Notification": [{"hooks": [OTHER]}],
        },
        "env": {"ÜNICODE": "é✓"},
    },
    "codex": {"hooks": {"Stop": [{"hooks": [OTHER]}], "PermissionRequest": [{"hooks": [OTHER]}]}},
    "gemini-cli": {
        "general": {"vimMode": True},
        "hooksConfig": {"enabled": True},
        "hooks": {"AfterTool": [{"matcher": "write_file", "hooks": [{**OTHER, "timeout": 500}]}]},
        "mcpServers": {"docs": {"command": "docs-mcp"}},
    },
    "cursor": {"version": 1, "hooks": {"stop": [{"command": "./audit.sh"}]}},
    "windsurf": {"hooks": {"post_write_code": [{"command": "prettier -w", "show_output": True}]}},
}


def without_ours(doc: dict[str, Any], ide: str) -> dict[str, Any]:
    copy = json.loads(json.dumps(doc))
    merge.remove(copy, flat=ide in ("cursor", "windsurf"))
    http_hooks.set_env(copy, None)
    return copy


def normalized(doc: dict[str, Any]) -> dict[str, Any]:
    """Gemini descriptions compared by presence only."""
    text = json.dumps(doc)
    value = json.loads(text)
    for groups in value.get("hooks", {}).values():
        for g in groups if isinstance(groups, list) else []:
            for h in g.get("hooks", []) if isinstance(g, dict) else []:
                if "description" in h and h["description"].startswith("claude-mem"):
                    h["description"] = "*"
    return value


def backups(path: Path) -> list[Path]:
    """The copies install/uninstall kept of `path`: all in the data dir, none beside it."""
    assert not list(path.parent.glob(path.name + ".bak-*")) if path.parent.exists() else True
    return files.backups_of(path)


@pytest.mark.parametrize("ide", list(IDES))
def test_fresh_install_writes_exactly_the_expected_file(env: Env, ide: str) -> None:
    rel, _, expected = IDES[ide]
    code, out, err = env.cli("install", "--ide", ide, "--no-start")
    assert (code, err) == (0, ""), err
    assert env.files() == [rel]
    path = env.root / rel
    assert normalized(json.loads(path.read_text())) == expected()
    assert path.read_text().endswith("\n")
    assert f"created   {path}" in out
    assert "; the viewer: `claude-mem viewer --open` signs a browser in" in out
    assert f"undo: claude-mem uninstall --ide {ide}" in out
    assert (env.data_dir / "install-version").read_text().strip() == __version__
    assert backups(path) == []


@pytest.mark.parametrize("ide", list(IDES))
def test_merge_is_idempotent_and_uninstall_restores(env: Env, ide: str) -> None:
    rel, _, expected = IDES[ide]
    path = env.root / rel
    path.parent.mkdir(parents=True)
    original = EXISTING[ide]
    original_text = json.dumps(original, indent=2, ensure_ascii=False)
    path.write_text(original_text)

    assert env.cli("install", "--ide", ide, "--no-start")[0] == 0
    installed = json.loads(path.read_text())
    assert without_ours(installed, ide) == original  # everything else, equal in content
    for key, value in original.items():
        if key not in ("hooks", "env"):
            assert installed[key] == value
    for key, value in original.get("env", {}).items():
        assert installed["env"][key] == value  # the user's own variables stay
    for event, entries in normalized(expected())["hooks"].items():
        assert all(e in normalized(installed)["hooks"][event] for e in entries)
    [saved] = backups(path)
    assert saved.read_text() == original_text

    first = path.read_bytes()
    code, out, _ = env.cli("install", "--ide", ide, "--no-start")
    assert code == 0
    assert f"unchanged {path}" in out
    assert path.read_bytes() == first
    assert backups(path) == [saved]

    code, out, _ = env.cli("uninstall", "--ide", ide, "--keep-worker")
    assert code == 0
    assert f"updated   {path}" in out
    assert json.loads(path.read_text()) == original
    assert len(backups(path)) == 2
    assert "your memory stays in" in out

    code, out, _ = env.cli("uninstall", "--ide", ide, "--keep-worker")
    assert (code, len(backups(path))) == (0, 2)
    assert json.loads(path.read_text()) == original


@pytest.mark.parametrize("ide", list(IDES))
def test_uninstall_of_a_fresh_install_leaves_no_file(env: Env, ide: str) -> None:
    rel = IDES[ide][0]
    env.cli("install", "--ide", ide, "--no-start")
    code, out, _ = env.cli("uninstall", "--ide", ide, "--keep-worker")
    assert code == 0
    assert f"removed   {env.root / rel}" in out
    assert env.files() == []  # no backup left in HOME either
    [saved] = backups(env.root / rel)
    assert saved.parent == env.data_dir / "backups" / "config"
    assert saved.stat().st_mode & 0o777 == 0o600
    assert f"(backup: {saved})" in out


def test_only_the_last_backups_of_each_file_are_kept(env: Env) -> None:
    path = env.home / ".claude" / "settings.json"
    for n in range(files.KEEP_BACKUPS + 3):
        assert env.cli("install", "--no-start")[0] == 0
        assert env.cli("uninstall", "--keep-worker")[0] == 0
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"model": f"m{n}"}))
    kept = backups(path)
    assert len(kept) == files.KEEP_BACKUPS
    assert json.loads(kept[-1].read_text())["model"] == f"m{files.KEEP_BACKUPS + 1}"
    assert not list(env.home.glob("**/*.bak-*"))


@pytest.mark.parametrize("ide", list(IDES))
def test_project_scope_writes_into_the_project(env: Env, ide: str) -> None:
    _, rel, expected = IDES[ide]
    code, out, _ = env.cli("install", "--ide", ide, "--project", "--no-start")
    assert code == 0
    assert env.files() == [rel]
    assert normalized(json.loads((env.root / rel).read_text())) == expected()
    assert f"project {env.project}" in out
    assert "--project" in out.splitlines()[-1]
    assert env.cli("uninstall", "--ide", ide, "--project", "--keep-worker")[0] == 0
    assert not (env.root / rel).exists()


def test_print_shows_a_diff_and_writes_nothing(env: Env) -> None:
    path = env.home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "opus"}')
    code, out, _ = env.cli("install", "--print")
    assert code == 0
    assert "nothing is written" in out
    assert f"--- {path}\n+++ {path}\n" in out
    assert '-{"model": "opus"}' in out
    assert f'+            "command": {json.dumps(cmd("claude-code", "SessionStart"))}' in out
    assert f'+            "url": "http://127.0.0.1:{PORT}/api/hooks/claude-code/Stop"' in out
    assert path.read_text() == '{"model": "opus"}'
    assert env.files() == ["home/.claude/settings.json"]
    assert not (env.data_dir / "install-version").exists()
    assert not (env.data_dir / "hook.token").exists()  # no token made for a preview

    code, out, _ = env.cli("install", "--ide", "cursor", "--print")
    assert "--- /dev/null\n+++ " in out
    assert not (env.home / ".cursor").exists()

    env.cli("install", "--no-start")
    code, out, _ = env.cli("uninstall", "--print")
    assert code == 0
    assert f"+++ {path}" in out
    assert '"model": "opus"' in path.read_text()
    assert "claude_mem/hooks/entry.py" in path.read_text()


@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_invalid_json_is_refused_and_left_alone(env: Env, action: str) -> None:
    path = env.home / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"theme": "dark",}  // mine')
    flag = "--no-start" if action == "install" else "--keep-worker"
    code, _, err = env.cli(action, "--ide", "gemini-cli", flag)
    assert code == 1
    assert str(path) in err
    assert "not valid JSON" in err
    assert path.read_text() == '{"theme": "dark",}  // mine'
    assert env.files() == ["home/.gemini/settings.json"]
    assert not (env.data_dir / "install-version").exists()


def test_nothing_is_written_when_any_file_is_broken(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp, "available", lambda: True)
    (env.home / ".claude.json").write_text("{")
    assert env.cli("install", "--no-start")[0] == 1
    assert env.files() == ["home/.claude.json"]


def test_codex_defaults_to_home_and_explains_trust(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEX_HOME")
    code, out, _ = env.cli("install", "--ide", "codex", "--no-start")
    assert code == 0
    assert env.files() == ["home/.codex/hooks.json"]
    assert "/hooks" in out
    assert "--dangerously-bypass-hook-trust" in out


def test_claude_config_dir_is_honoured(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(env.root / "claude-cfg"))
    assert env.cli("install", "--no-start")[0] == 0
    assert env.files() == ["claude-cfg/settings.json"]


def test_a_missing_home_is_refused(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "")
    code, _, err = env.cli("install", "--no-start")
    assert code == 1
    assert "HOME" in err
    assert env.files() == []


def test_mcp_entries_once_the_server_exists(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp, "available", lambda: True)
    server = {"command": PY, "args": ["-m", "claude_mem.cli", "mcp"]}
    claude_json = env.home / ".claude.json"
    mine: dict[str, Any] = {
        "numStartups": 7,
        "mcpServers": {"docs": {"type": "stdio", "command": "docs"}},
    }
    claude_json.write_text(json.dumps(mine))

    assert env.cli("install", "--no-start")[0] == 0
    doc = json.loads(claude_json.read_text())
    assert doc["mcpServers"] == {**mine["mcpServers"], "claude-mem-py": {"type": "stdio", **server}}
    assert doc["numStartups"] == 7

    assert env.cli("install", "--project", "--no-start")[0] == 0
    project_mcp = json.loads((env.project / ".mcp.json").read_text())
    assert project_mcp == {"mcpServers": {"claude-mem-py": {"type": "stdio", **server}}}

    for ide, rel in (("gemini-cli", ".gemini/settings.json"), ("cursor", ".cursor/mcp.json"),
                     ("windsurf", ".codeium/windsurf/mcp_config.json")):  # fmt: skip
        assert env.cli("install", "--ide", ide, "--no-start")[0] == 0
        assert json.loads((env.home / rel).read_text())["mcpServers"] == {"claude-mem-py": server}

    _, out, _ = env.cli("install", "--ide", "codex", "--no-start")
    assert "codex mcp add" not in out  # registered, not left to the user
    codex = tomllib.loads((env.codex_home / "config.toml").read_text())
    assert codex == {"mcp_servers": {"claude-mem-py": server}}

    # Uninstall removes our entry even if this version had none to offer.
    monkeypatch.setattr(mcp, "available", lambda: False)
    assert env.cli("uninstall", "--keep-worker")[0] == 0
    assert json.loads(claude_json.read_text()) == mine
    assert env.cli("uninstall", "--project", "--keep-worker")[0] == 0
    assert not (env.project / ".mcp.json").exists()
    assert env.cli("uninstall", "--ide", "gemini-cli", "--keep-worker")[0] == 0
    assert not (env.home / ".gemini" / "settings.json").exists()
    assert env.cli("uninstall", "--ide", "codex", "--keep-worker")[0] == 0
    assert not (env.codex_home / "config.toml").exists()


CODEX_CONFIG = Path(__file__).parent / "fixtures" / "install" / "codex-config.toml"


@pytest.mark.parametrize("project", [False, True])
def test_codex_mcp_server_is_merged_into_config_toml(
    env: Env, monkeypatch: pytest.MonkeyPatch, project: bool
) -> None:
    monkeypatch.setattr(mcp, "available", lambda: True)
    folder = env.project / ".codex" if project else env.codex_home
    config = folder / "config.toml"
    folder.mkdir(parents=True)
    original = CODEX_CONFIG.read_text()
    config.write_text(original)
    scope = ["--project"] if project else []

    code, out, err = env.cli("install", "--ide", "codex", *scope, "--no-start")
    assert (code, err) == (0, "")
    assert f"updated   {config} [MCP server]" in out
    text = config.read_text()
    assert text.startswith(original)  # every line of theirs, byte for byte, comments included
    doc = tomllib.loads(text)
    assert doc["mcp_servers"]["claude-mem-py"] == {
        "command": PY,
        "args": ["-m", "claude_mem.cli", "mcp"],
    }
    assert {k: v for k, v in doc["mcp_servers"].items() if k != "claude-mem-py"} == (
        tomllib.loads(original)["mcp_servers"]
    )
    assert env.cli("install", "--ide", "codex", *scope, "--no-start")[0] == 0
    assert config.read_text() == text  # a re-install changes nothing

    code, out, _ = env.cli("uninstall", "--ide", "codex", *scope, "--keep-worker")
    assert code == 0
    assert config.read_text() == original  # exactly our table went
    assert "codex mcp remove" not in out


def test_codex_config_we_cannot_merge_is_left_alone(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp, "available", lambda: True)
    env.codex_home.mkdir()
    config = env.codex_home / "config.toml"
    for text in ('model = "o4\n', '[mcp_servers]\nclaude-mem-py = { command = "old" }\n'):
        config.write_text(text)
        code, _, err = env.cli("install", "--ide", "codex", "--no-start")
        assert code == 1
        assert str(config) in err
        assert "left untouched" in err
        assert config.read_text() == text
        assert not (env.codex_home / "hooks.json").exists()  # nothing written at all


def test_plugin_dir(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = env.root / "plugin"
    code, out, _ = env.cli("install", "--plugin-dir", str(folder), "--no-start")
    assert code == 0
    assert env.files() == ["plugin/.claude-plugin/plugin.json", "plugin/hooks/hooks.json"]
    manifest = json.loads((folder / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "claude-mem-py"
    assert manifest["version"] == __version__
    hooks = json.loads((folder / "hooks" / "hooks.json").read_text())
    token = read_hook_token()
    assert token
    # hooks.json has no `env`: the token sits in the header, and the file is 0600
    assert hooks == {"description": "claude-mem-py hooks", "hooks": claude_hooks(token=token)}
    assert (folder / "hooks" / "hooks.json").stat().st_mode & 0o777 == 0o600
    assert f"undo: claude-mem uninstall --plugin-dir {folder}" in out

    monkeypatch.setattr(mcp, "available", lambda: True)
    assert env.cli("install", "--plugin-dir", str(folder), "--no-start")[0] == 0
    assert json.loads((folder / ".mcp.json").read_text())["mcpServers"]["claude-mem-py"] == {
        "type": "stdio",
        "command": PY,
        "args": ["-m", "claude_mem.cli", "mcp"],
    }
    assert env.cli("uninstall", "--plugin-dir", str(folder), "--keep-worker")[0] == 0
    assert env.files() == []

    code, _, err = env.cli("install", "--plugin-dir", str(folder), "--ide", "codex")
    assert code == 2
    assert "--plugin-dir" in err


def test_uninstall_stops_the_worker_unless_kept(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    from claude_mem.worker import lifecycle

    stopped: list[bool] = []
    monkeypatch.setattr(lifecycle, "read_pid_info", lambda: {"pid": 4242})
    monkeypatch.setattr(lifecycle, "stop", lambda: stopped.append(True) or True)  # type: ignore[func-returns-value]  # append's None, then True
    _, out, _ = env.cli("uninstall", "--keep-worker")
    assert stopped == []
    _, out, _ = env.cli("uninstall")
    assert stopped == [True]
    assert "worker: stopped (pid 4242)" in out
    assert f"rm -rf {env.data_dir}" in out


# --- Claude Code's http hooks ------------------------------------------------------------------


def settings_doc(env: Env) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((env.home / ".claude" / "settings.json").read_text())
    return doc


def test_http_hooks_carry_the_hook_token_through_env_in_a_0600_file(env: Env) -> None:
    assert env.cli("install", "--no-start")[0] == 0
    path = env.home / ".claude" / "settings.json"
    assert path.stat().st_mode & 0o777 == 0o600  # created by us, and it holds a secret
    token = (env.data_dir / "hook.token").read_text().strip()
    assert (env.data_dir / "hook.token").stat().st_mode & 0o777 == 0o600
    doc = settings_doc(env)
    assert doc["env"] == {"CLAUDE_MEM_HOOK_TOKEN": token}
    kinds = {event: groups[0]["hooks"][0]["type"] for event, groups in doc["hooks"].items()}
    assert kinds == {
        "Setup": "command", "SessionStart": "command", "UserPromptSubmit": "command",
        "PreToolUse": "http", "PostToolUse": "http", "PostToolUseFailure": "http",
        "Stop": "http", "SessionEnd": "http",
    }  # fmt: skip
    # The stale-hooks check (hooks/installed.py) counts the http entries as ours.
    from claude_mem.hooks import installed

    assert installed.events_in(str(path)) == set(installed.REGISTER["claude-code"])


def test_command_transport_everywhere_and_switching_back_and_forth(env: Env) -> None:
    path = env.home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"env": {"EDITOR": "vim"}}))
    path.chmod(0o644)
    assert env.cli("install", "--no-start")[0] == 0
    assert settings_doc(env)["env"] == {"EDITOR": "vim", "CLAUDE_MEM_HOOK_TOKEN": read_hook_token()}
    assert path.stat().st_mode & 0o777 == 0o644  # an existing file keeps its mode

    code, out, _ = env.cli("install", "--hook-transport", "command", "--no-start")
    assert code == 0
    assert f"updated   {path}" in out
    assert settings_doc(env) == {"env": {"EDITOR": "vim"}, "hooks": claude_hooks(http=False)}

    assert env.cli("install", "--no-start")[0] == 0
    assert normalized(settings_doc(env))["hooks"] == claude_hooks()
    assert env.cli("uninstall", "--keep-worker")[0] == 0
    assert settings_doc(env) == {"env": {"EDITOR": "vim"}}


def test_the_plugin_keeps_command_hooks_when_asked(env: Env) -> None:
    folder = env.root / "plugin"
    args = ("install", "--plugin-dir", str(folder), "--hook-transport", "command", "--no-start")
    assert env.cli(*args)[0] == 0
    hooks = json.loads((folder / "hooks" / "hooks.json").read_text())
    assert hooks["hooks"] == claude_hooks(http=False)


def test_uninstall_leaves_someone_elses_http_hook(env: Env) -> None:
    theirs = {"type": "http", "url": "http://127.0.0.1:9000/audit", "headers": {"x-k": "$K"},
              "allowedEnvVars": ["K"]}  # fmt: skip
    path = env.home / ".claude" / "settings.json"
    path.parent.mkdir()
    original = {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [theirs]}]}, "env": {"K": "1"}}
    path.write_text(json.dumps(original))
    assert env.cli("install", "--no-start")[0] == 0
    assert theirs in settings_doc(env)["hooks"]["PostToolUse"][0]["hooks"]
    assert env.cli("install", "--no-start")[1].count("unchanged") == 1  # idempotent
    assert env.cli("uninstall", "--keep-worker")[0] == 0
    assert settings_doc(env) == original


def doctor_lines(env: Env) -> list[str]:
    out = env.cli("doctor")[1]
    return [line for line in out.splitlines() if "http hooks" in line]


def test_doctor_names_a_port_or_data_dir_change_and_install_rewrites(
    env: Env, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert env.cli("install", "--no-start")[0] == 0
    [line] = doctor_lines(env)
    assert line.startswith("[ok  ]")
    assert f"port {PORT}" in line

    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "45999")
    [line] = doctor_lines(env)
    assert line.startswith("[FAIL]")
    assert f"post to port {PORT}, but this data dir's worker uses 45999" in line
    assert "`claude-mem install` rewrites them" in line
    assert env.cli("install", "--no-start")[0] == 0
    assert settings_doc(env)["hooks"]["Stop"][0]["hooks"][0]["url"].startswith(
        "http://127.0.0.1:45999/"
    )
    assert doctor_lines(env)[0].startswith("[ok  ]")

    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(tmp_path / "other-data"))
    [line] = doctor_lines(env)
    assert line.startswith("[FAIL]")
    assert "carry a hook token this data dir's worker does not accept" in line
    assert env.cli("install", "--no-start")[0] == 0
    assert settings_doc(env)["env"]["CLAUDE_MEM_HOOK_TOKEN"] == read_hook_token()
    assert doctor_lines(env)[0].startswith("[ok  ]")
