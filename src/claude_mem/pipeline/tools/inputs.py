"""A tool event's input, whatever shape the host sent it in: a dict, JSON text, a command
line, or a `[shell, -c, script]` list."""

from __future__ import annotations

import json
import posixpath
import shlex
from typing import Any

from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.paths import path_value
from claude_mem.pipeline.tools.programs import has_role

_WORKDIR_KEYS = ("workdir", "cwd", "dir_path", "directory")


def input_dict(event: ToolEvent) -> dict[str, Any]:
    """The tool input as a dict: JSON text is decoded, any other shape gives {}."""
    value = event.tool_input
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to matter
            return {}
    return value if isinstance(value, dict) else {}


def command_text(event: ToolEvent) -> str:
    """A shell event's command line; a `[shell, -c, script]` list gives the script."""
    value: object = event.tool_input
    if isinstance(value, str) and not value.lstrip().startswith("{"):
        return value
    data = input_dict(event)
    value = data.get("command", data.get("cmd"))
    if isinstance(value, list) and value and all(isinstance(part, str) for part in value):
        argv = [str(part) for part in value]
        shell_form = len(argv) == 3 and has_role(posixpath.basename(argv[0]), "shell")
        if shell_form and argv[1].startswith("-") and argv[1].endswith("c"):
            return argv[2]
        return shlex.join(argv)
    return value if isinstance(value, str) else ""


def workdir(event: ToolEvent) -> str | None:
    """The directory a shell event ran in, if its input names one."""
    data = input_dict(event)
    for key in _WORKDIR_KEYS:
        path = path_value(data.get(key))
        if path:
            return path
    return None
