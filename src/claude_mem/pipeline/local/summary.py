"""A session summary by rule: from the session's events, its stored observations and the
assistant's last message."""

from __future__ import annotations

import re

from claude_mem.pipeline.local.describe import event_notes
from claude_mem.pipeline.local.note import Note
from claude_mem.pipeline.local.text import (
    SUMMARY_CHARS,
    as_str,
    clip,
    dedup,
    shortlist,
    word_pattern,
)
from claude_mem.pipeline.providers.base import SessionContext, SummaryDraft, SummaryInput
from claude_mem.pipeline.tools.evidence import evidence

_NEXT_WORDS = word_pattern(
    r"next|todo|to-do|remaining|remains|should|follow[- ]up|still need|not yet|later"
)
_CAUSE_WORDS = word_pattern(
    r"because|root cause|caused by|turns out|turned out|the issue|the problem|"
    r"the bug|due to|found that"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`'\"(\[])")


def _cap(text: str) -> str:
    return clip(text, SUMMARY_CHARS)


def _sentences(message: str) -> list[str]:
    """The message's sentences, code blocks and list markers removed."""
    prose = re.sub(r"```.*?(?:```|$)", " ", message[:20_000], flags=re.DOTALL)
    found: list[str] = []
    for raw in prose.splitlines():
        line = re.sub(r"^\s*(?:[-*+•]|\d+[.)]|#+)\s*", "", raw).strip()
        found.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return found


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
    items.extend(s for s in sentences if _CAUSE_WORDS.search(s))
    if not items:
        found = [o.title for o in request.observations if o.type == "discovery"]
        items.extend(found or [n.title for n in notes if n.type == "discovery"])
    return _cap("; ".join(dedup(items)[:6]))


def _completed(notes: list[Note], modified: list[str], sentences: list[str]) -> str:
    parts: list[str] = []
    if modified:
        parts.append(f"Modified {shortlist(modified, 8)}.")
    parts.extend(f"{note.completed}." for note in notes if note.completed)
    opening = [s for s in sentences if not _NEXT_WORDS.search(s) and not _CAUSE_WORDS.search(s)]
    parts.extend(opening[:2])
    return _cap(" ".join(parts))


def _notes_field(notes: list[Note]) -> str:
    tests = [note for note in notes if note.kind == "test"]
    if tests and tests[-1].failed:
        return _cap(f"The last test run still failed: {tests[-1].title}")
    return ""


def summarize_session(request: SummaryInput, ctx: SessionContext) -> SummaryDraft:
    """A session summary from its events, stored observations and last assistant message."""
    notes = event_notes(list(request.events), ctx)
    read, modified = evidence(request.events)
    read = dedup([*read, *request.files_read])
    modified = dedup([*modified, *request.files_modified])
    sentences = _sentences(as_str(request.last_assistant_message))
    return SummaryDraft(
        request=_request(ctx),
        investigated=_investigated(notes, read),
        learned=_learned(notes, request, sentences),
        completed=_completed(notes, modified, sentences),
        next_steps=_cap(" ".join(s for s in sentences if _NEXT_WORDS.search(s))),
        notes=_notes_field(notes),
    )
