"""Cursor: `~/.cursor/hooks.json` (`<project>/.cursor/hooks.json` with --project),
`{"version": 1, "hooks": {"event": [{"command": ...}]}}`. The MCP server, once it exists, goes
in `mcp.json` beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_mem.install import mcp, merge
from claude_mem.install.base import Hook, HookCommand, Scope, Target

LABEL = "Cursor"
PLATFORM = "cursor"
HOOKS = tuple(
    Hook(event)  # Cursor's own timeout applies
    for event in (
        "beforeSubmitPrompt",
        "afterShellExecution",
        "afterMCPExecution",
        "afterFileEdit",
        "stop",
    )
)


def base_dir(scope: Scope) -> Path:
    return scope.hook_file(PLATFORM).parent


def entries(command: HookCommand) -> list[tuple[str, dict[str, Any]]]:
    return [(hook.event, {"command": command.line(PLATFORM, hook.event)}) for hook in HOOKS]


def targets(scope: Scope, command: HookCommand, with_mcp: bool) -> list[Target]:
    out = [
        Target(
            base_dir(scope) / "hooks.json",
            lambda doc: merge.add(doc, entries(command), flat=True),
            lambda doc: merge.remove(doc, flat=True),
            "hooks",
            {"version": 1},
        )
    ]
    if with_mcp:
        out.append(
            Target(
                base_dir(scope) / "mcp.json",
                lambda doc: merge.add_server(doc, mcp.NAME, mcp.server(command, typed=False)),
                lambda doc: merge.remove_server(doc, mcp.NAME),
                "MCP server",
            )
        )
    return out


def notes(scope: Scope, command: HookCommand, action: str, with_mcp: bool) -> list[str]:
    if action == "install":
        return ["Cursor hooks capture prompts, shell/MCP calls and edits; restart Cursor to load"]
    return []
