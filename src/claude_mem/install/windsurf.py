"""Windsurf (Cascade hooks): `~/.codeium/windsurf/hooks.json` (`<project>/.windsurf/hooks.json`
with --project), `{"hooks": {"event": [{"command": ..., "show_output": false}]}}`.

The inventory of the original names no file ("Windsurf hooks file"); these are the user and
workspace locations Windsurf's Cascade Hooks documentation gives. The MCP server, once it
exists, goes in the user's `~/.codeium/windsurf/mcp_config.json` (not with --project).
"""

from __future__ import annotations

from typing import Any

from claude_mem.install import mcp, merge
from claude_mem.install.base import Hook, HookCommand, Scope, Target

LABEL = "Windsurf"
PLATFORM = "windsurf"
HOOKS = tuple(
    Hook(event)  # Windsurf has no per-hook timeout
    for event in (
        "pre_user_prompt",
        "post_run_command",
        "post_mcp_tool_use",
        "post_write_code",
        "post_cascade_response",
    )
)


def entries(command: HookCommand) -> list[tuple[str, dict[str, Any]]]:
    return [
        (hook.event, {"command": command.line(PLATFORM, hook.event), "show_output": False})
        for hook in HOOKS
    ]


def targets(scope: Scope, command: HookCommand, with_mcp: bool) -> list[Target]:
    user = scope.agent_dir(PLATFORM)
    out = [
        Target(
            scope.hook_file(PLATFORM),
            lambda doc: merge.add(doc, entries(command), flat=True),
            lambda doc: merge.remove(doc, flat=True),
            "hooks",
        )
    ]
    if with_mcp and scope.project is None:
        out.append(
            Target(
                user / "mcp_config.json",
                lambda doc: merge.add_server(doc, mcp.NAME, mcp.server(command, typed=False)),
                lambda doc: merge.remove_server(doc, mcp.NAME),
                "MCP server",
            )
        )
    return out


def notes(scope: Scope, command: HookCommand, action: str, with_mcp: bool) -> list[str]:
    return []
