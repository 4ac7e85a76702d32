"""A prompt turn's tool events cut into units of work, by its changes.

A turn is one unit unless the agent moves on to a different piece of work after changing
something: its words announce a new step ("Next, the parser…"), or, once a change was
verified (a passing test run or a commit), it turns to files the unit has not touched.
Reads, searches and runs never open a unit by themselves, and a test run, commit or git
look always stays with the change it checks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from claude_mem.pipeline.local.note import Note
from claude_mem.pipeline.providers.base import AgentWords, ToolEvent, Turn
from claude_mem.pipeline.tools.evidence import files_modified, files_read

_NEW_STEP = re.compile(
    r"^\W*(?:next|moving on|on to|second(?:ly)?|third(?:ly)?|also|another|the other|"
    r"now (?:for|on to|to|the (?:second|next|other|remaining))|"
    r"with (?:that|this|the \w+) (?:done|fixed|in place|working)|"
    r"(?:that|this) (?:fixes|fixed|takes care of|handles|covers) )\b",
    re.IGNORECASE,
)
WRAP_UP = frozenset({"test", "commit", "git"})  # kinds that check or record a change


@dataclass(slots=True)
class Unit:
    """One unit of work: its events (noise included, so every event is linked), their
    notes, and the agent's words written before and among its calls."""

    events: list[ToolEvent] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    files: set[str] = field(default_factory=set)
    changed: bool = False
    verified: bool = False  # a passing test run or a commit since the last change

    def add(self, event: ToolEvent, note: Note | None, files: set[str]) -> None:
        self.events.append(event)
        self.files |= files
        if note is None:
            return
        self.notes.append(note)
        if note.kind == "commit" or (note.kind == "test" and not note.failed and self.changed):
            self.changed = self.verified = True
        elif note.type != "discovery":
            self.changed, self.verified = True, False

    def moves_on(self, note: Note | None, files: set[str], words: list[str]) -> bool:
        """Does this event start a different piece of work than this unit's?"""
        if note is None or not self.changed or note.kind in WRAP_UP:
            return False
        if any(_NEW_STEP.match(text) for text in words):
            return True
        return self.verified and bool(files) and not files & self.files


def words_by_event(turn: Turn, events: list[ToolEvent]) -> tuple[list[list[str]], list[str]]:
    """(the words written before each event, the words after the last one). Words naming a
    call this batch does not hold go before the first event."""
    index = {event.tool_use_id: n for n, event in enumerate(events) if event.tool_use_id}
    before: list[list[str]] = [[] for _ in events]
    after: list[str] = []
    for item in turn.words:
        _place(item, index, before, after)
    return before, after


def _place(
    item: AgentWords, index: dict[str, int], before: list[list[str]], after: list[str]
) -> None:
    if not item.text.strip():
        return
    if item.before is None:
        after.append(item.text)
    elif before:
        before[index.get(item.before, 0)].append(item.text)


def segment(events: list[ToolEvent], notes: list[Note | None], turn: Turn) -> list[Unit]:
    """The turn's units in order; every event is in exactly one. No unit when nothing but
    noise happened."""
    before, after = words_by_event(turn, events)
    units = [Unit()]
    for event, note, words in zip(events, notes, before, strict=True):
        files = set(files_read(event)) | set(files_modified(event))
        if units[-1].moves_on(note, files, words):
            units.append(Unit())
        units[-1].words.extend(words)
        units[-1].add(event, note, files)
    units[-1].words.extend(after)
    return [unit for unit in units if unit.events] if any(u.notes for u in units) else []
