"""Codex CLI: hooks in `$CODEX_HOME/hooks.json` (default `~/.codex`; `<project>/.codex/hooks.json`
with --project), Claude Code's JSON shape, timeouts in seconds; the MCP server as
`[mcp_servers.claude-mem-py]` in `config.toml` beside it, merged as text (`toml_table`), so the
rest of the user's TOML stays byte for byte.

Codex caps SessionEnd at 3 s and warns on every start when asked for more, so it gets 3. Codex
runs a user hook only once the user has trusted it (a hash per hook in `config.toml`); untrusted
hooks are skipped silently by `codex exec`. We do not forge that hash (its recipe changes between
Codex versions): the installer tells the user how to trust the hooks instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_mem.install import mcp, merge, toml_table
from claude_mem.install.base import Hook, HookCommand, Scope, Target, TextTarget

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
MCP_TABLE = ("mcp_servers", mcp.NAME)


def codex_home(scope: Scope) -> Path:
    return scope.agent_dir(PLATFORM)


def hooks_path(scope: Scope) -> Path:
    return scope.hook_file(PLATFORM)


def config_path(scope: Scope) -> Path:
    return hooks_path(scope).with_name("config.toml")


def entries(command: HookCommand) -> list[tuple[str, dict[str, Any]]]:
    return merge.grouped(PLATFORM, HOOKS, command)


def mcp_target(path: Path, command: HookCommand) -> TextTarget:
    """`[mcp_servers.claude-mem-py]` with `command` and `args`, as `codex mcp add` writes it."""

    def edit(before: str | None, action: str) -> str | None:
        table = mcp.server(command, typed=False) if action == "install" else None
        if table is None and (before is None or mcp.NAME not in before):
            return before  # nothing of ours: not even a broken file is our business
        return toml_table.edit(before, MCP_TABLE, table)

    return TextTarget(path, edit, "MCP server")


def targets(scope: Scope, command: HookCommand, with_mcp: bool) -> list[Target | TextTarget]:
    out: list[Target | TextTarget] = [
        Target(
            hooks_path(scope),
            lambda doc: merge.add(doc, entries(command), flat=False),
            lambda doc: merge.remove(doc, flat=False),
            "hooks",
        )
    ]
    if with_mcp:
        out.append(mcp_target(config_path(scope), command))
    return out


def notes(scope: Scope, command: HookCommand, action: str, with_mcp: bool) -> list[str]:
    if action == "uninstall":
        return []
    return [
        "Codex runs a hook only after you trust it; until then `codex exec` skips it silently. "
        "Start `codex` once, type /hooks, and trust each claude-mem hook (select it, press t). "
        "A re-install that changes the commands (another Python or package path) needs the "
        "trust again. Scripted runs can pass `codex exec --dangerously-bypass-hook-trust`."
    ]
