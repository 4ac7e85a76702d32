"""Claude Code: hooks in `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when set;
`<project>/.claude/settings.json` with --project), timeouts in seconds.

By default the per-tool-call hooks (and Stop, SessionEnd) are http hooks posting to the worker
(`install.http_hooks`), with the hook token in the file's `env`; the hooks that start or
restart the worker stay commands. `--hook-transport command` keeps commands everywhere. None
is `"async"`: they take milliseconds, and Claude Code drops async hooks still running when
`claude -p` exits. The MCP server (once it exists) goes under
`mcpServers` in `~/.claude.json` (user scope), or in `<project>/.mcp.json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_mem.install import http_hooks, mcp, merge
from claude_mem.install.base import Doc, Hook, HookCommand, Scope, Target
from claude_mem.install.http_hooks import HttpHooks

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


def entries(command: HookCommand, http: HttpHooks | None) -> list[tuple[str, dict[str, Any]]]:
    """(event, matcher group) for every hook, as settings.json and plugin hooks.json hold them;
    with `http`, the http hooks' events post to the worker instead of running a command."""
    out = merge.grouped(PLATFORM, HOOKS, command)
    if http is None:
        return out
    timeouts = {hook.event: hook.timeout for hook in HOOKS}
    for event, group in out:
        if event in http_hooks.EVENTS:
            group["hooks"] = [http.handler(event, timeouts[event])]
    return out


def settings_path(scope: Scope) -> Path:
    return scope.hook_file(PLATFORM)


def mcp_path(scope: Scope) -> Path:
    if scope.project is not None:
        return scope.project / ".mcp.json"
    custom = scope.env.get("CLAUDE_CONFIG_DIR", "").strip()
    return (scope.expand(custom) if custom else scope.home) / ".claude.json"


def hook_target(
    path: Path, command: HookCommand, http: HttpHooks | None, scaffold: Doc | None = None
) -> Target:
    """Our hooks in `path`; with http hooks whose token goes in `env`, that variable too."""
    in_env = http is None or http.in_env  # a plugin's hooks.json has no `env` to clean

    def install(doc: Doc) -> None:
        merge.add(doc, entries(command, http), flat=False)
        if in_env:
            http_hooks.set_env(doc, http)

    def uninstall(doc: Doc) -> None:
        merge.remove(doc, flat=False)
        if in_env:
            http_hooks.set_env(doc, None)

    return Target(path, install, uninstall, "hooks", scaffold or {}, private=http is not None)


def mcp_target(path: Path, command: HookCommand) -> Target:
    return Target(
        path,
        lambda doc: merge.add_server(doc, mcp.NAME, mcp.server(command)),
        lambda doc: merge.remove_server(doc, mcp.NAME),
        "MCP server",
    )


def targets(
    scope: Scope, command: HookCommand, with_mcp: bool, http: HttpHooks | None = None
) -> list[Target]:
    out = [hook_target(settings_path(scope), command, http)]
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
