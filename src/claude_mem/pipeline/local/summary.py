"""A session summary by rule: from the session's events, its stored observations and the
assistant's last message. With the turn the Stop closed (`ctx.turn`) it leads with
knowledge: "Learned" holds the causes, rules and gotchas the agent stated (test counts only
as a trailing note), "Completed" what changed and the agent's words for why."""

from __future__ import annotations

from claude_mem.pipeline.local.describe import event_notes
from claude_mem.pipeline.local.note import Note
from claude_mem.pipeline.local.text import SUMMARY_CHARS, as_str, dedup, shortlist, word_pattern
from claude_mem.pipeline.local.words import (
    CAUSE_WORDS,
    FINDING,
    all_sentences,
    best_sentence,
    changes,
    distinct_sentences,
    knowledge,
    sentences,
    weight,
)
from claude_mem.pipeline.providers.base import SessionContext, SummaryDraft, SummaryInput, Turn
from claude_mem.pipeline.tools.evidence import evidence
from claude_mem.text import shorten

# Work left open: announced ("Next: …", "TODO"), or what someone should still do. A bare
# "should" explains ("1.725 should round up"), it does not plan.
_NEXT_WORDS = word_pattern(
    r"next|todo|to-do|remaining|remains|follow[- ]up|still need|not yet|later|left to do|"
    r"(?:we|you|i|someone) should|should (?:also|still|next|later|now)"
)


def _cap(text: str) -> str:
    return shorten(text, SUMMARY_CHARS)


def _request(ctx: SessionContext) -> str:
    prompts = [p for p in ctx.prompts if isinstance(p, str) and p.strip()]
    return _cap(prompts[0]) if prompts else ""


def _investigated(notes: list[Note], read: list[str]) -> str:
    searched = dedup(item for note in notes if note.kind == "search" for item in note.investigated)
    listed = dedup(item for note in notes if note.kind == "list" for item in note.investigated)
    fetched = dedup(item for note in notes if note.kind == "web" for item in note.investigated)
    parts = [
        f"{label} {shortlist(items, limit)}"
        for label, items, limit in (
            ("Read", read, 8),
            ("Searched", searched, 4),
            ("Listed", listed, 4),
            ("Looked up", fetched, 3),
        )
        if items
    ]
    return _cap("; ".join(parts) + ("." if parts else ""))


def _learned(notes: list[Note], request: SummaryInput, sentences: list[str]) -> str:
    items: list[str] = []
    tests = [note for note in notes if note.kind == "test"]
    if tests:
        last = tests[-1]
        earlier = next((note for note in tests[:-1] if note.failed), None)
        if earlier is not None and not last.failed:
            items.append(f"{last.title} (earlier: {earlier.title.split(': ', 1)[-1]})")
        else:
            items.append(last.title)
        failing = next((note for note in tests if note.failed), None)
        if failing is not None:
            items.extend(fact for fact in failing.facts if fact.startswith("Failed:"))
    items.extend(note.title for note in notes if note.kind != "test" and note.failed)
    items.extend(s for s in sentences if CAUSE_WORDS.search(s))
    if not items:
        found = [o.title for o in request.observations if o.type == "discovery"]
        items.extend(found or [n.title for n in notes if n.type == "discovery"])
    return _cap("; ".join(dedup(items)[:6]))


def _completed(notes: list[Note], modified: list[str], sentences: list[str]) -> str:
    parts: list[str] = []
    if modified:
        parts.append(f"Modified {shortlist(modified, 8)}.")
    parts.extend(f"{note.completed}." for note in notes if note.completed)
    opening = [s for s in sentences if not _NEXT_WORDS.search(s) and not CAUSE_WORDS.search(s)]
    parts.extend(opening[:2])
    return _cap(" ".join(parts))


def _notes_field(notes: list[Note]) -> str:
    tests = [note for note in notes if note.kind == "test"]
    if tests and tests[-1].failed:
        return _cap(f"The last test run still failed: {tests[-1].title}")
    return ""


def summarize_session(request: SummaryInput, ctx: SessionContext) -> SummaryDraft:
    """A session summary from its events, stored observations and last assistant message
    (and, with `ctx.turn`, the agent's words in the turn)."""
    notes = event_notes(list(request.events), ctx)
    read, modified = evidence(request.events)
    read = dedup([*read, *request.files_read])
    modified = dedup([*modified, *request.files_modified])
    if ctx.turn is not None:
        return _turn_summary(request, ctx, ctx.turn, notes=notes, modified=modified, read=read)
    said = sentences(as_str(request.last_assistant_message))
    return SummaryDraft(
        request=_request(ctx),
        investigated=_investigated(notes, read),
        learned=_learned(notes, request, said),
        completed=_completed(notes, modified, said),
        next_steps=_next_steps(said),
        notes=_notes_field(notes),
    )


def _turn_summary(
    request: SummaryInput,
    ctx: SessionContext,
    turn: Turn,
    *,
    notes: list[Note],
    modified: list[str],
    read: list[str],
) -> SummaryDraft:
    """Knowledge first: causes and rules the agent stated (this turn's words, then the stored
    units'), the change in its words, and test counts only as a trailing note."""
    texts = [*(item.text for item in turn.words), turn.reply]
    said = all_sentences([*texts, as_str(request.last_assistant_message)])
    stored = all_sentences(draft.narrative for draft in request.observations)
    known = distinct_sentences([*knowledge(said), *knowledge(stored)])
    learned = sorted((s for s in known if not _is_next(s)), key=weight, reverse=True)
    if not learned:  # no cause or rule stated: what was found, in the agent's words
        found = [s for s in said if weight(s) == FINDING and not _is_next(s)]
        learned = found[:2] or [o.title for o in request.observations if o.type == "discovery"]
    stated = changes(said) or ([best_sentence(said)] if modified else [])
    completed = [f"Modified {shortlist(modified, 8)}." if modified else ""]
    completed.extend(f"{note.completed}." for note in notes if note.completed)
    return SummaryDraft(
        request=_cap(turn.prompt) or _request(ctx),
        investigated=_investigated(notes, read),
        learned=_cap(" ".join(dedup(learned)[:6])),
        completed=_cap(" ".join(dedup([*completed, *stated[:2]]))),
        next_steps=_next_steps(said),
        notes=_cap(" ".join(dedup([_notes_field(notes), _test_counts(notes)]))),
    )


def _is_next(sentence: str) -> bool:
    """Work left open; a cause is learned even when it says what to do next."""
    return bool(_NEXT_WORDS.search(sentence)) and not CAUSE_WORDS.search(sentence)


def _next_steps(said: list[str]) -> str:
    return _cap(" ".join(filter(_is_next, said)))


def _test_counts(notes: list[Note]) -> str:
    """'Tests: 3 passed, 1 failed → 4 passed': the runs' results in order."""
    results = [note.title.rsplit(": ", 1)[-1] for note in notes if note.kind == "test"]
    return f"Tests: {' → '.join(results)}." if results else ""
