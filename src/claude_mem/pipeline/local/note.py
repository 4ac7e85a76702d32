"""A note: one event's draft before merging and final limits; a discovery, the commonest
kind; and what a describer may know beyond its event."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import msgspec

from claude_mem.pipeline.local.text import FACT_CHARS, OUTPUT_FACT_BUDGET, as_int, clip
from claude_mem.pipeline.providers.base import ObservationDraft, SessionContext, ToolEvent


class Note(ObservationDraft, kw_only=True):
    """One event's draft in the making (before merging and the final limits), with
    what merging and summaries need to know about it."""

    event: ToolEvent
    kind: str
    failed: bool = False
    merge_key: tuple[str, str] | None = None  # (type, file) for edits that may merge
    changes: list[str] = msgspec.field(default_factory=list)
    investigated: list[str] = msgspec.field(default_factory=list)  # searched/listed/fetched targets
    completed: str = ""  # a commit, for summaries
    code: list[str] = msgspec.field(default_factory=list)  # what the code it touched is


def discovery(
    event: ToolEvent,
    kind: str,
    title: str,
    *,
    narrative: str,
    facts: list[str],
    subtitle: str = "",
    concepts: list[str] | None = None,
    investigated: list[str] | None = None,
    failed: bool = False,
) -> Note:
    """Something learned rather than changed: how something works, or, when a tool or command
    failed, a gotcha."""
    return Note(
        type="discovery",
        title=title,
        subtitle=subtitle,
        narrative=narrative,
        facts=facts,
        concepts=concepts or (["gotcha"] if failed else ["how-it-works"]),
        event=event,
        kind=kind,
        failed=failed,
        investigated=investigated or [],
    )


@dataclass(slots=True)
class Scope:
    """What describing one event may know beyond it: the session and earlier failures."""

    ctx: SessionContext
    seen_failure: bool = False

    def prompt(self, event: ToolEvent) -> str:
        """The user prompt the event belongs to (the turn's, when compressing a turn; else
        the latest one)."""
        if self.ctx.turn is not None and self.ctx.turn.prompt.strip():
            return self.ctx.turn.prompt
        prompts = [p if isinstance(p, str) else "" for p in self.ctx.prompts]
        number = as_int(event.prompt_number)
        if number is not None and 1 <= number <= len(prompts):
            return prompts[number - 1]
        return prompts[-1] if prompts else ""


def output_facts(lines: Iterable[str], prefix: str = "") -> list[str]:
    """Facts quoting raw output lines, within the per-observation budget."""
    facts: list[str] = []
    used = 0
    for line in lines:
        text = clip(line, FACT_CHARS - len(prefix) - 1)
        if used + len(text) > OUTPUT_FACT_BUDGET:
            break
        used += len(text)
        facts.append(prefix + text)
    return facts
