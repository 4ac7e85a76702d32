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


def _canonical(name: str) -> str:
    """Lower case, letters and digits only: `read_file`, `ReadFile`, `read-file` are one."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def tool_kind(name: object) -> ToolKind:
    """What a tool does; names are matched loosely across hosts."""
    if not isinstance(name, str):
        return "other"
    raw = name.strip()
    if raw.lower().startswith("mcp__"):
        kind = _KINDS.get(_canonical(raw.split("__")[-1]))
        return kind if kind is not None and kind in _MCP_FILE_KINDS else "mcp"
    return _KINDS.get(_canonical(raw), "other")
