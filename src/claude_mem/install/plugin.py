"""A Claude Code plugin folder for `claude --plugin-dir DIR`: `claude-mem install --plugin-dir DIR`.

Writes `DIR/.claude-plugin/plugin.json`, `DIR/hooks/hooks.json` (the same hooks as the settings
install, absolute commands and http URLs; the hook token in the http hooks' header, so the
file is 0600) and, once the MCP server exists, `DIR/.mcp.json`. Generated on
demand rather than shipped: the commands must name this machine's interpreter and package.
Uninstall with the same `--plugin-dir` removes our entries and deletes files left empty.
"""

from __future__ import annotations

from pathlib import Path

from claude_mem import __version__
from claude_mem.install import claude_code
from claude_mem.install.base import Doc, HookCommand, Target
from claude_mem.install.http_hooks import HttpHooks

NAME = "claude-mem-py"
DESCRIPTION = "Persistent memory for Claude Code: capture, compress and re-inject past work."
LABEL = "Claude Code plugin"


def _manifest_install(doc: Doc) -> None:
    doc.update(name=NAME, version=__version__, description=DESCRIPTION)


def _manifest_uninstall(doc: Doc) -> None:
    if doc.get("name") == NAME:
        for key in ("name", "version", "description"):
            doc.pop(key, None)


def targets(
    folder: Path, command: HookCommand, with_mcp: bool, http: HttpHooks | None = None
) -> list[Target]:
    """With `http`, the http hooks carry the token in their header (hooks.json has no `env`)."""
    if http is not None:
        http = HttpHooks(http.host, http.port, http.token, in_env=False)
    out = [
        Target(
            folder / ".claude-plugin" / "plugin.json",
            _manifest_install,
            _manifest_uninstall,
            "plugin manifest",
        ),
        claude_code.hook_target(
            folder / "hooks" / "hooks.json", command, http, {"description": f"{NAME} hooks"}
        ),
    ]
    if with_mcp:
        out.append(claude_code.mcp_target(folder / ".mcp.json", command))
    return out
