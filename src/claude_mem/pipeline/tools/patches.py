"""Patches: the files in an `*** Begin Patch` envelope or a unified diff, with the lines each
adds and removes, and the patch text(s) a tool event applies."""

from __future__ import annotations

import re
from dataclasses import dataclass

from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.inputs import command_text, input_dict
from claude_mem.pipeline.tools.kinds import tool_kind
from claude_mem.pipeline.tools.paths import normalize_path, path_value
from claude_mem.pipeline.tools.shell import program, shell_commands

MAX_PATCH_LINES = 200_000
MAX_KEPT_PATCH_LINES = 2_000  # per file, kept for symbol lookups; counts stay exact
_PATCH_KEYS = ("command", "input", "patch", "diff", "content")
_PATCH_HINT = re.compile(
    r"^(?:\*\*\* (?:Begin Patch|(?:Update|Add|Delete) File: )|\+\+\+ )", re.MULTILINE
)
_ENVELOPE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+)$")


@dataclass(frozen=True, slots=True)
class PatchFile:
    """One file in a patch: what happened to it, and the lines added and removed."""

    action: str  # "update" | "add" | "delete"
    path: str
    move_to: str | None = None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    added_count: int = 0
    removed_count: int = 0


def parse_patch(text: str) -> list[PatchFile]:
    """Files in an `*** Begin Patch` envelope or a unified diff, in order."""
    if not isinstance(text, str):
        return []
    lines = text.split("\n", MAX_PATCH_LINES)[:MAX_PATCH_LINES]
    if any(line.startswith("*** ") and " File: " in line for line in lines):
        return _parse_envelope(lines)
    return _parse_unified(lines)


class _FileBuilder:
    """Accumulates one file's patch lines."""

    def __init__(self, action: str, path: str) -> None:
        self.action, self.path = action, path
        self.move_to: str | None = None
        self.added: list[str] = []
        self.removed: list[str] = []
        self.added_count = self.removed_count = 0

    def line(self, line: str) -> None:
        if line.startswith("+"):
            self.added_count += 1
            if len(self.added) < MAX_KEPT_PATCH_LINES:
                self.added.append(line[1:])
        elif line.startswith("-"):
            self.removed_count += 1
            if len(self.removed) < MAX_KEPT_PATCH_LINES:
                self.removed.append(line[1:])

    def build(self) -> PatchFile:
        return PatchFile(
            self.action,
            self.path,
            self.move_to,
            tuple(self.added),
            tuple(self.removed),
            self.added_count,
            self.removed_count,
        )


def _parse_envelope(lines: list[str]) -> list[PatchFile]:
    files: list[_FileBuilder] = []
    for raw in lines:
        line = raw.rstrip("\r")
        match = _ENVELOPE.match(line)
        if match:
            path = path_value(match.group(2))
            if path:
                files.append(_FileBuilder(match.group(1).lower(), path))
            continue
        if not files:
            continue
        if line.startswith("*** Move to: "):
            files[-1].move_to = path_value(line[len("*** Move to: ") :])
        elif not line.startswith("*** "):
            files[-1].line(line)
    return [builder.build() for builder in files]


def _diff_path(header: str) -> str | None:
    """The path in a `--- a/x` or `+++ b/x` header line (None for /dev/null)."""
    path = header[4:].split("\t", maxsplit=1)[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path_value(path)


def _parse_unified(lines: list[str]) -> list[PatchFile]:
    files: list[_FileBuilder] = []
    index = 0
    while index < len(lines):
        line = lines[index].rstrip("\r")
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line.startswith("--- ") and following.startswith("+++ "):
            old, new = _diff_path(line), _diff_path(following.rstrip("\r"))
            if new or old:
                action = "add" if old is None else "delete" if new is None else "update"
                files.append(_FileBuilder(action, new or old or ""))
            index += 2
            continue
        if files and not line.startswith("\\"):
            files[-1].line(line)
        index += 1
    return [builder.build() for builder in files]


def _looks_like_patch(text: str) -> bool:
    return bool(_PATCH_HINT.search(text))


def _patch_texts(event: ToolEvent) -> list[str]:
    """The patch text(s) an event applies: apply_patch input, or a patch fed to a shell."""
    kind = tool_kind(event.tool_name)
    if kind == "shell":
        command = command_text(event)
        if "*** Begin Patch" in command:
            return [command]
        programs = {program(argv) for argv in shell_commands(command)}
        applies = "patch" in programs or "apply" in command.split()
        return [command] if applies and "\n+++ " in command else []
    if kind != "patch":
        return []
    value = event.tool_input
    if isinstance(value, str) and not value.lstrip().startswith("{"):
        return [value] if _looks_like_patch(value) else []
    data = input_dict(event)
    texts: list[str] = []
    for key in _PATCH_KEYS:
        item = data.get(key)
        parts = item if isinstance(item, list) else [item]
        texts.extend(p for p in parts if isinstance(p, str) and _looks_like_patch(p))
    return texts


def patch_files(event: ToolEvent) -> list[PatchFile]:
    """Every file in the patches an event applies, paths under the path rule."""
    found: list[PatchFile] = []
    for text in _patch_texts(event):
        for item in parse_patch(text):
            move = normalize_path(item.move_to, event.cwd) if item.move_to else None
            found.append(
                PatchFile(
                    item.action,
                    normalize_path(item.path, event.cwd),
                    move,
                    item.added,
                    item.removed,
                    item.added_count,
                    item.removed_count,
                )
            )
    return found
