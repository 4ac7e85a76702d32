"""A prompt turn's observations: one per unit of work (`segment`), titled and explained in
the agent's own words, with the evidence of its tool events as facts (`unit_facts`)."""

from __future__ import annotations

from claude_mem.pipeline.local.classify import change_concepts, supporting_file, text_type
from claude_mem.pipeline.local.describe import described
from claude_mem.pipeline.local.segment import WRAP_UP, Unit, segment
from claude_mem.pipeline.local.text import (
    SUBTITLE_CHARS,
    clip,
    dedup,
    shortlist,
)
from claude_mem.pipeline.local.unit_facts import symbol_names, unit_facts
from claude_mem.pipeline.local.words import (
    all_sentences,
    best_sentence,
    intent,
    says_little,
    sentences,
    weight,
)
from claude_mem.pipeline.providers.base import ObservationDraft, SessionContext, ToolEvent, Turn
from claude_mem.pipeline.tools.evidence import evidence
from claude_mem.text import counted, one_line
from claude_mem.vocabulary import ObservationType

_CHANGE_RANK: tuple[ObservationType, ...] = ("bugfix", "refactor", "feature", "change")


def turn_drafts(events: list[ToolEvent], ctx: SessionContext, turn: Turn) -> list[ObservationDraft]:
    """The turn's units as drafts, in order; each lists every event it folds."""
    units = segment(events, described(events, ctx), turn)
    return [_draft(unit, turn, n == 0, n == len(units) - 1) for n, unit in enumerate(units)]


def _draft(unit: Unit, turn: Turn, first: bool, last: bool) -> ObservationDraft:
    own = all_sentences(unit.words)
    closing = all_sentences([turn.reply]) if last else []
    read, modified = evidence(unit.events)  # once: each event's input is decoded for it
    kind = _unit_type(unit, " ".join([turn.prompt, *unit.words]), modified)
    title = _title(unit, own, closing, turn.prompt if first else "", (read, modified))
    return ObservationDraft(
        type=kind,
        title=one_line(title) or "Worked on the request",
        subtitle=clip(_subtitle(unit, read, modified), SUBTITLE_CHARS),
        narrative=one_line(_narrative(unit, own, closing)),
        facts=unit_facts(unit.notes, read, modified),
        concepts=_concepts(unit, kind),
        source_event_ids=[event.tool_use_row_id for event in unit.events],
        continues=first and _wraps_up(unit),
    )


def _wraps_up(unit: Unit) -> bool:
    """A turn that opens by only checking or recording work (commit it, run its tests):
    it finishes the session's previous unit rather than being one."""
    kinds = {note.kind for note in unit.notes}
    return bool(kinds) and kinds <= WRAP_UP


def _title(
    unit: Unit, own: list[str], closing: list[str], prompt: str, files: tuple[list[str], list[str]]
) -> str:
    """The unit's finding or change in the agent's words; else its reply; words that say
    little ("Done.", "I listed the files.") give way to the request (first unit) with what
    the unit worked on, then its stated intent, and last what its events show."""
    for choice in (best_sentence(own), best_sentence(closing)):
        if choice and not says_little(choice):
            return choice
    if prompt.strip():
        return _request_title(prompt, unit, *files)
    read = files[0]
    return next(filter(None, map(intent, own)), "") or _evidence_title(unit, read)


def _request_title(prompt: str, unit: Unit, read: list[str], modified: list[str]) -> str:
    """The request's first sentence and what the unit worked on: the symbols it changed,
    else the files it changed, else those it read or looked into."""
    lead = next(iter(sentences(prompt)), prompt.strip()).rstrip(" .!?:;")
    changes = [note for note in unit.notes if note.type != "discovery"]
    looked = [t for note in unit.notes for t in note.investigated]
    names = symbol_names(changes) or modified or read or looked
    if not names:
        return lead
    return f"{lead}: {shortlist(names, 3)}"


def _evidence_title(unit: Unit, read: list[str]) -> str:
    """What the events show, when no words say it: the change, a failure, or what was read."""
    changed = next((note for note in unit.notes if note.type != "discovery"), None)
    failed = next((note for note in unit.notes if note.failed), None)
    picked = changed or failed
    if picked is not None:
        return picked.title
    looked = dedup([*read, *(t for note in unit.notes for t in note.investigated)])
    return f"Investigated {shortlist(looked)}" if looked else unit.notes[0].title


def _narrative(unit: Unit, own: list[str], closing: list[str]) -> str:
    """The agent's explanation, narration left out, in the order written (the reply last);
    else what the events' notes say."""
    said = [s for s in dict.fromkeys([*own, *closing]) if weight(s) > 0]
    if said:
        return " ".join(said)
    return " ".join(dedup(note.narrative for note in unit.notes))


def _unit_type(unit: Unit, words: str, modified: list[str]) -> ObservationType:
    """The strongest change type of its edits (a plain change typed by the words, unless it
    only touched docs and tests: words there speak of the work they document), else a
    discovery."""
    kinds = {note.type for note in unit.notes if note.type != "discovery"}
    if not kinds:
        return "discovery"
    best = next(kind for kind in _CHANGE_RANK if kind in kinds)
    if best != "change" or (modified and all(map(supporting_file, modified))):
        return best
    return text_type(words) or best


def _concepts(unit: Unit, kind: ObservationType) -> list[str]:
    own = [concept for note in unit.notes for concept in note.concepts]
    extra = change_concepts(kind) if kind != "discovery" else []
    return dedup([*extra, *own]) or ["how-it-works"]


def _subtitle(unit: Unit, read: list[str], modified: list[str]) -> str:
    calls = counted(len(unit.events), "tool call")
    if modified:
        return f"Changed {shortlist(modified)} ({calls})"
    if read:
        return f"Looked at {shortlist(read)} ({calls})"
    return f"{unit.notes[0].subtitle or unit.notes[0].title} ({calls})"
