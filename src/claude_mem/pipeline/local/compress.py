"""Tool events to observation drafts: each event described by its kind, noise dropped,
consecutive edits merged, and the final limits applied."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from claude_mem.pipeline.local.edits import edit_note, notebook_note, patch_note, write_note
from claude_mem.pipeline.local.lookups import glob_note, grep_note, ls_note, read_note
from claude_mem.pipeline.local.merge import merge_groups, merged_note
from claude_mem.pipeline.local.note import Note, Scope
from claude_mem.pipeline.local.shell_notes import shell_note
from claude_mem.pipeline.local.text import (
    FACT_CHARS,
    MAX_FACTS,
    NARRATIVE_CHARS,
    SUBTITLE_CHARS,
    TITLE_CHARS,
    clip,
    dedup,
)
from claude_mem.pipeline.local.tools import task_note, tool_note
from claude_mem.pipeline.local.web import fetch_note, websearch_note
from claude_mem.pipeline.providers.base import ObservationDraft, SessionContext, ToolEvent
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


def event_notes(events: Sequence[ToolEvent], ctx: SessionContext) -> list[Note]:
    """Each event's note, in order; noise gives none."""
    scope = Scope(ctx)
    notes: list[Note] = []
    for event in events:
        note = DESCRIBERS[tool_kind(event.tool_name)](event, scope)
        if note is None:
            continue
        # Only a failing program hints that later edits fix something; a failed tool call
        # (an Edit whose text wasn't found) does not.
        scope.seen_failure |= note.failed and note.kind in ("failure", "test")
        notes.append(note)
    return notes


def _draft(group: list[Note]) -> ObservationDraft:
    note = group[0] if len(group) == 1 else merged_note(group)
    return ObservationDraft(
        type=note.type,
        title=clip(note.title, TITLE_CHARS) or "Used a tool",
        subtitle=clip(note.subtitle, SUBTITLE_CHARS),
        narrative=clip(note.narrative, NARRATIVE_CHARS),
        facts=dedup(clip(fact, FACT_CHARS) for fact in note.facts)[:MAX_FACTS],
        concepts=dedup(note.concepts),
        source_event_ids=[item.event.tool_use_row_id for item in group],
    )


def compress_events(events: Sequence[ToolEvent], ctx: SessionContext) -> list[ObservationDraft]:
    """The observations for a batch of one session's tool events, in event order."""
    return [_draft(group) for group in merge_groups(event_notes(events, ctx))]
