"""Tool events to observation drafts. A prompt turn gives one per unit of work (`units`)
and a decision when the user and the agent agreed a rule (`decisions`);
a batch without its turn (old callers, imports) one per event: each described by its kind,
noise dropped, consecutive edits merged, and the final limits applied."""

from __future__ import annotations

from collections.abc import Sequence

from claude_mem.pipeline.local.decisions import decision
from claude_mem.pipeline.local.describe import event_notes
from claude_mem.pipeline.local.merge import merge_groups, merged_note
from claude_mem.pipeline.local.note import Note
from claude_mem.pipeline.local.text import (
    FACT_CHARS,
    MAX_FACTS,
    SUBTITLE_CHARS,
    clip,
    dedup,
)
from claude_mem.pipeline.local.units import turn_drafts
from claude_mem.pipeline.providers.base import ObservationDraft, SessionContext, ToolEvent
from claude_mem.text import one_line


def _draft(group: list[Note]) -> ObservationDraft:
    note = group[0] if len(group) == 1 else merged_note(group)
    return ObservationDraft(
        type=note.type,
        title=one_line(note.title) or "Used a tool",
        subtitle=clip(note.subtitle, SUBTITLE_CHARS),
        narrative=one_line(note.narrative),
        facts=dedup(clip(fact, FACT_CHARS) for fact in note.facts)[:MAX_FACTS],
        concepts=dedup(note.concepts),
        source_event_ids=[item.event.tool_use_row_id for item in group],
    )


def compress_events(events: Sequence[ToolEvent], ctx: SessionContext) -> list[ObservationDraft]:
    """The observations for a batch of one session's tool events, in event order: one per
    unit of work when the batch is a prompt turn (`ctx.turn`), else one per event."""
    if ctx.turn is not None:
        units = turn_drafts(list(events), ctx, ctx.turn)
        worked = any(unit.type != "discovery" for unit in units)
        rule = decision(ctx.turn, worked=worked, discussion=ctx.prompts)
        return [*units, *([rule] if rule else [])]
    return [_draft(group) for group in merge_groups(event_notes(events, ctx))]
