"""Gemini CLI: `"hooks"` in `~/.gemini/settings.json` (`<project>/.gemini/settings.json` with
--project), Claude Code's nesting, timeouts in MILLISECONDS, each hook named `claude-mem` (so
`hooksConfig.disabled: ["claude-mem"]` switches them all off). The MCP server, once it exists,
goes under `mcpServers` in the same file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_mem.install import mcp, merge
from claude_mem.install.base import Doc, Hook, HookCommand, Scope, Target

LABEL = "Gemini CLI"
PLATFORM = "gemini-cli"
HOOKS = (
    Hook("SessionStart", 60_000),
    Hook("BeforeAgent", 30_000),
    Hook("AfterTool", 30_000),
    Hook("AfterAgent", 30_000),
    Hook("SessionEnd", 30_000),
)
DESCRIPTIONS = {
    "SessionStart": "claude-mem: start the worker, inject past context",
    "BeforeAgent": "claude-mem: record the prompt",
    "AfterTool": "claude-mem: queue the tool call for memory",
    "AfterAgent": "claude-mem: request a turn summary",
    "SessionEnd": "claude-mem: close the session",
}


def settings_path(scope: Scope) -> Path:
    return scope.hook_file(PLATFORM)


def entries(command: HookCommand) -> list[tuple[str, dict[str, Any]]]:
    return [
        (
            hook.event,
            {
                "hooks": [
                    {
                        "name": "claude-mem",
                        "type": "command",
                        "command": command.line(PLATFORM, hook.event),
                        "timeout": hook.timeout,
                        "description": DESCRIPTIONS[hook.event],
                    }
                ]
            },
        )
        for hook in HOOKS
    ]


def targets(scope: Scope, command: HookCommand, with_mcp: bool) -> list[Target]:
    def install(doc: Doc) -> None:
        merge.add(doc, entries(command), flat=False)
        if with_mcp:
            merge.add_server(doc, mcp.NAME, mcp.server(command, typed=False))

    def uninstall(doc: Doc) -> None:
        merge.remove(doc, flat=False)
        merge.remove_server(doc, mcp.NAME)

    what = "hooks, MCP server" if with_mcp else "hooks"
    return [Target(settings_path(scope), install, uninstall, what)]


def notes(scope: Scope, command: HookCommand, action: str, with_mcp: bool) -> list[str]:
    return []
