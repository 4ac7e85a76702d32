"""The MCP search server entry, registered only once this installation has one.

`available()` is the single switch: until `claude_mem.mcp` exists, install never points an IDE
at a command that isn't there; when it lands, every IDE module picks the entry up unchanged.
The name `claude-mem-py` keeps clear of the original claude-mem's entries.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from claude_mem.install.base import HookCommand

NAME = "claude-mem-py"
MODULE = "claude_mem.mcp"


def available() -> bool:
    try:
        return importlib.util.find_spec(MODULE) is not None
    except (ImportError, ValueError):
        return False


def argv(command: HookCommand) -> list[str]:
    """`<interpreter> -m claude_mem.cli mcp`: the same Python as the hooks, no PATH lookup."""
    return [command.python, "-m", "claude_mem.cli", "mcp"]


def server(command: HookCommand, *, typed: bool = True) -> dict[str, Any]:
    """A stdio server entry (`typed`: with `"type": "stdio"`, as Claude Code writes it)."""
    python, *args = argv(command)
    entry: dict[str, Any] = {"type": "stdio"} if typed else {}
    return {**entry, "command": python, "args": args}
