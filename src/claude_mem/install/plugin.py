"""A Claude Code plugin folder for `claude --plugin-dir DIR`: `claude-mem install --plugin-dir DIR`.

Writes `DIR/.claude-plugin/plugin.json`, `DIR/hooks/hooks.json` (the same hooks as the settings
install, absolute commands) and, once the MCP server exists, `DIR/.mcp.json`. Generated on
demand rather than shipped: the commands must name this machine's interpreter and package.
Uninstall with the same `--plugin-dir` removes our entries and deletes files left empty.
"""

from __future__ import annotations

from pathlib import Path

from claude_mem import __version__
from claude_mem.install import claude_code
from claude_mem.install.base import Doc, HookCommand, Target

NAME = "claude-mem-py"
DESCRIPTION = "Persistent memory for Claude Code: capture, compress and re-inject past work."
LABEL = "Claude Code plugin"


def _manifest_install(doc: Doc) -> None:
    doc.update(name=NAME, version=__version__, description=DESCRIPTION)


def _manifest_uninstall(doc: Doc) -> None:
    if doc.get("name") == NAME:
        for key in ("name", "version", "description"):
            doc.pop(key, None)


def targets(folder: Path, command: HookCommand, with_mcp: bool) -> list[Target]:
    out = [
        Target(
            folder / ".claude-plugin" / "plugin.json",
            _manifest_install,
            _manifest_uninstall,
            "plugin manifest",
        ),
        claude_code.hook_target(
            folder / "hooks" / "hooks.json", command, {"description": f"{NAME} hooks"}
        ),
    ]
    if with_mcp:
        out.append(claude_code.mcp_target(folder / ".mcp.json", command))
    return out
