"""Claude Code: hooks in `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when set;
`<project>/.claude/settings.json` with --project), timeouts in seconds.

All hooks are synchronous (no `"async"`): they take milliseconds, and Claude Code drops async
hooks still running when `claude -p` exits. The MCP server (once it exists) goes under
`mcpServers` in `~/.claude.json` (user scope), or in `<project>/.mcp.json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_mem.install import mcp, merge
from claude_mem.install.base import Doc, Hook, HookCommand, Scope, Target

LABEL = "Claude Code"
PLATFORM = "claude-code"
HOOKS = (
    Hook("Setup", 30),
    Hook("SessionStart", 60, "startup|resume|clear|compact"),
    Hook("UserPromptSubmit", 30),
    Hook("PreToolUse", 30, "Read"),
    Hook("PostToolUse", 30, "*"),
    Hook("PostToolUseFailure", 30, "*"),
    Hook("Stop", 30),
    Hook("SessionEnd", 30),
)


def entries(command: HookCommand) -> list[tuple[str, dict[str, Any]]]:
    """(event, matcher group) for every hook, as settings.json and plugin hooks.json hold them."""
    return merge.grouped(PLATFORM, HOOKS, command)


def settings_path(scope: Scope) -> Path:
    return scope.hook_file(PLATFORM)


def mcp_path(scope: Scope) -> Path:
    if scope.project is not None:
        return scope.project / ".mcp.json"
    custom = scope.env.get("CLAUDE_CONFIG_DIR", "").strip()
    return (scope.expand(custom) if custom else scope.home) / ".claude.json"


def hook_target(path: Path, command: HookCommand, scaffold: Doc | None = None) -> Target:
    return Target(
        path,
        lambda doc: merge.add(doc, entries(command), flat=False),
        lambda doc: merge.remove(doc, flat=False),
        "hooks",
        scaffold or {},
    )


def mcp_target(path: Path, command: HookCommand) -> Target:
    return Target(
        path,
        lambda doc: merge.add_server(doc, mcp.NAME, mcp.server(command)),
        lambda doc: merge.remove_server(doc, mcp.NAME),
        "MCP server",
    )


def targets(scope: Scope, command: HookCommand, with_mcp: bool) -> list[Target]:
    out = [hook_target(settings_path(scope), command)]
    if with_mcp:
        out.append(mcp_target(mcp_path(scope), command))
    return out


def notes(scope: Scope, command: HookCommand, action: str, with_mcp: bool) -> list[str]:
    if action == "install" and scope.project is not None:
        return [
            "the hooks hold absolute paths on this machine; teammates run "
            "`claude-mem install --project` themselves rather than sharing this file"
        ]
    return []
