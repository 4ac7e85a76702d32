"""Codex CLI: hooks in `$CODEX_HOME/hooks.json` (default `~/.codex`; `<project>/.codex/hooks.json`
with --project), Claude Code's JSON shape, timeouts in seconds.

Codex caps SessionEnd at 3 s and warns on every start when asked for more, so it gets 3. Codex
runs a user hook only once the user has trusted it (a hash per hook in `config.toml`); untrusted
hooks are skipped silently by `codex exec`. We do not forge that hash (its recipe changes between
Codex versions): the installer tells the user how to trust the hooks instead. The MCP server
lives in Codex's TOML config, so for it we print the `codex mcp add` command.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from claude_mem.install import mcp, merge
from claude_mem.install.base import Hook, HookCommand, Scope, Target

LABEL = "Codex"
PLATFORM = "codex"
# Matchers are regexes; none means every source/tool. PreToolUse: shell reads and MCP file reads.
HOOKS = (
    Hook("SessionStart", 60),
    Hook("UserPromptSubmit", 30),
    Hook("PreToolUse", 30, r"^Bash$|^mcp__.+__(read|view|cat)(_file|_files)?$"),
    Hook("PostToolUse", 30),
    Hook("Stop", 30),
    Hook("SessionEnd", 3),
)


def codex_home(scope: Scope) -> Path:
    return scope.agent_dir(PLATFORM)


def hooks_path(scope: Scope) -> Path:
    return scope.hook_file(PLATFORM)


def entries(command: HookCommand) -> list[tuple[str, dict[str, Any]]]:
    return merge.grouped(PLATFORM, HOOKS, command)


def targets(scope: Scope, command: HookCommand, with_mcp: bool) -> list[Target]:
    return [
        Target(
            hooks_path(scope),
            lambda doc: merge.add(doc, entries(command), flat=False),
            lambda doc: merge.remove(doc, flat=False),
            "hooks",
        )
    ]


def notes(scope: Scope, command: HookCommand, action: str, with_mcp: bool) -> list[str]:
    if action == "uninstall":
        if not mcp.available():
            return []
        return [f"if you added the MCP server: codex mcp remove {mcp.NAME}"]
    out = [
        "Codex runs a hook only after you trust it; until then `codex exec` skips it silently. "
        "Start `codex` once, type /hooks, and trust each claude-mem hook (select it, press t). "
        "A re-install that changes the commands (another Python or package path) needs the "
        "trust again. Scripted runs can pass `codex exec --dangerously-bypass-hook-trust`."
    ]
    if with_mcp:
        add = shlex.join(["codex", "mcp", "add", mcp.NAME, "--", *mcp.argv(command)])
        out.append(f"MCP search server: {add}")
    return out
