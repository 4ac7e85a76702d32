"""Each tool event described by its kind (its `DESCRIBERS` entry): the notes that
observations, units and summaries are built from."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from claude_mem.pipeline.local.edits import edit_note, notebook_note, patch_note, write_note
from claude_mem.pipeline.local.lookups import glob_note, grep_note, ls_note, read_note
from claude_mem.pipeline.local.note import Note, Scope
from claude_mem.pipeline.local.shell_notes import shell_note
from claude_mem.pipeline.local.tools import task_note, tool_note
from claude_mem.pipeline.local.web import fetch_note, websearch_note
from claude_mem.pipeline.providers.base import SessionContext, ToolEvent
from claude_mem.pipeline.tools.kinds import ToolKind, tool_kind

_Describer = Callable[[ToolEvent, Scope], Note | None]


def _nothing(event: ToolEvent, scope: Scope) -> None:
    """Todo lists, plans and killed shells: nothing worth remembering."""
    return None


# Every tool kind and its describer: a new kind is one entry here (a test checks the table).
DESCRIBERS: dict[ToolKind, _Describer] = {
    "edit": edit_note,
    "write": write_note,
    "notebook": notebook_note,
    "patch": patch_note,
    "read": read_note,
    "read_many": read_note,
    "grep": grep_note,
    "glob": glob_note,
    "ls": ls_note,
    "fetch": fetch_note,
    "websearch": websearch_note,
    "task": task_note,
    "noise": _nothing,
    "shell": shell_note,
    "mcp": tool_note,
    "other": tool_note,
}


def described(events: Sequence[ToolEvent], ctx: SessionContext) -> list[Note | None]:
    """Each event's note, in event order; None for noise (todo lists, plans, a bare `cd`)."""
    scope = Scope(ctx)
    notes: list[Note | None] = []
    for event in events:
        note = DESCRIBERS[tool_kind(event.tool_name)](event, scope)
        # Only a failing program hints that later edits fix something; a failed tool call
        # (an Edit whose text wasn't found) does not.
        if note is not None:
            scope.seen_failure |= note.failed and note.kind in ("failure", "test")
        notes.append(note)
    return notes


def event_notes(events: Sequence[ToolEvent], ctx: SessionContext) -> list[Note]:
    """Each event's note, in order; noise gives none."""
    return [note for note in described(events, ctx) if note is not None]
