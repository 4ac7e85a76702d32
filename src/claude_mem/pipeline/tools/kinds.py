"""Tool kinds: what a tool does, whatever the host calls it.

One vocabulary (`ToolKind`) and one table from tool names to it. File evidence and the offline
compressor's describers both dispatch on these kinds, so a new kind is one entry here, and
the type checker follows it everywhere it is compared.
"""

from __future__ import annotations

import re
from typing import Literal

ToolKind = Literal[
    "edit",
    "write",
    "notebook",
    "patch",
    "read",
    "read_many",
    "grep",
    "glob",
    "ls",
    "fetch",
    "websearch",
    "task",
    "noise",
    "shell",
    "mcp",  # an MCP tool that is not a file tool
    "other",  # a name we don't know
]

# Tool names, canonicalised (lower case, letters and digits only), to what they do.
_KINDS: dict[str, ToolKind] = {
    "edit": "edit",
    "multiedit": "edit",
    "replace": "edit",
    "editfile": "edit",
    "strreplace": "edit",
    "write": "write",
    "writefile": "write",
    "createfile": "write",
    "notebookedit": "notebook",
    "applypatch": "patch",
    "read": "read",
    "readfile": "read",
    "notebookread": "read",
    "readmanyfiles": "read_many",
    "readmultiplefiles": "read_many",
    "grep": "grep",
    "searchfilecontent": "grep",
    "grepsearch": "grep",
    "glob": "glob",
    "searchfiles": "glob",
    "ls": "ls",
    "listdirectory": "ls",
    "listdir": "ls",
    "directorytree": "ls",
    "webfetch": "fetch",
    "websearch": "websearch",
    "googlewebsearch": "websearch",
    "task": "task",
    "agent": "task",
    "todowrite": "noise",
    "todoread": "noise",
    "writetodos": "noise",
    "updateplan": "noise",
    "killshell": "noise",
    "killbash": "noise",
    "bash": "shell",
    "shell": "shell",
    "execcommand": "shell",
    "runshellcommand": "shell",
    "localshell": "shell",
}
# An MCP tool counts as a file tool only for these kinds (e.g. mcp__filesystem__read_file).
_MCP_FILE_KINDS: frozenset[ToolKind] = frozenset(
    {"edit", "write", "read", "read_many", "ls", "glob", "grep"}
)


# Our own memory's MCP server, however the host qualifies it: `mcp__claude-mem-py__search`,
# a plugin's `mcp__plugin_claude-mem-py_claude-mem-py__search`, the original claude-mem's
# `mcp__claude-mem__search`. Asking memory is not work: such a call is noise, never a unit.
_MEMORY_SERVER = re.compile(r"claude[-_]?mem", re.IGNORECASE)


def memory_tool(name: object) -> bool:
    """Whether `name` is a tool of a claude-mem MCP server (ours or the original's)."""
    if not isinstance(name, str) or not name.strip().lower().startswith("mcp__"):
        return False
    server = name.strip()[len("mcp__") :].rpartition("__")[0]
    return bool(_MEMORY_SERVER.search(server))


def _canonical(name: str) -> str:
    """Lower case, letters and digits only: `read_file`, `ReadFile`, `read-file` are one."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def tool_kind(name: object) -> ToolKind:
    """What a tool does; names are matched loosely across hosts."""
    if not isinstance(name, str):
        return "other"
    raw = name.strip()
    if memory_tool(raw):
        return "noise"
    if raw.lower().startswith("mcp__"):
        kind = _KINDS.get(_canonical(raw.split("__")[-1]))
        return kind if kind is not None and kind in _MCP_FILE_KINDS else "mcp"
    return _KINDS.get(_canonical(raw), "other")
