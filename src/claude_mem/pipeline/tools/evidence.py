"""Which files a tool event read or modified, decided from the recorded input alone.

A compressor's (or a model's) own account of what it touched is never trusted: file evidence
comes only from the tool input the host sent (file path fields, patch text, plainly reading
shell commands), under the path rule of `paths`. The consumer computes each observation's
file lists here, once, from its source events.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.inputs import command_text, input_dict, workdir
from claude_mem.pipeline.tools.kinds import ToolKind, tool_kind
from claude_mem.pipeline.tools.patches import patch_files
from claude_mem.pipeline.tools.paths import is_literal, normalize_path, path_value
from claude_mem.pipeline.tools.shell import shell_reads

MAX_PATHS = 500  # per event
_MODIFIED_KEYS = ("file_path", "filePath", "notebook_path", "notebookPath", "path")
_READ_KEYS = ("file_path", "filePath", "absolute_path", "notebook_path", "notebookPath", "path")
# Typed sets, so the type checker knows every kind named here.
_PATH_WRITERS: frozenset[ToolKind] = frozenset({"edit", "write", "notebook"})
_PATCHERS: frozenset[ToolKind] = frozenset({"patch", "shell"})
_READERS: frozenset[ToolKind] = frozenset({"read", "read_many"})


def _first_path(data: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        path = path_value(data.get(key))
        if path:
            return path
    return None


def _dedup(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def files_modified(event: ToolEvent) -> list[str]:
    """Files the event's input says it wrote: edit/write tool paths and patch targets."""
    kind = tool_kind(event.tool_name)
    found: list[str] = []
    if kind in _PATH_WRITERS:
        path = _first_path(input_dict(event), _MODIFIED_KEYS)
        if path:
            found.append(normalize_path(path, event.cwd))
    elif kind in _PATCHERS:
        for item in patch_files(event):
            found.append(item.path)
            if item.move_to:
                found.append(item.move_to)
    return _dedup(found)


def files_read(event: ToolEvent) -> list[str]:
    """Files the event's input says it read: read tools, and plainly reading shell commands."""
    kind = tool_kind(event.tool_name)
    data = input_dict(event)
    found: list[str] = []
    if kind in _READERS:
        path = _first_path(data, _READ_KEYS)
        if path:
            found.append(path)
        paths = data.get("paths")
        if isinstance(paths, list):
            found.extend(p for p in map(path_value, paths[:MAX_PATHS]) if p and is_literal(p))
    elif kind == "shell":
        command = command_text(event)
        if "*** Begin Patch" not in command:
            found.extend(shell_reads(command, workdir(event) or "."))
    return _dedup(normalize_path(path, event.cwd) for path in found)


def evidence(events: Iterable[ToolEvent]) -> tuple[list[str], list[str]]:
    """(files read, files modified) across `events`, each deduplicated in first-seen order."""
    read: list[str] = []
    modified: list[str] = []
    for event in events:
        read.extend(files_read(event))
        modified.extend(files_modified(event))
    return _dedup(read), _dedup(modified)
