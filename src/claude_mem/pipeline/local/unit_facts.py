"""A unit's facts: the evidence of its tool events, most telling first — files changed and
read, symbols, test results and failing assertions, errors, commits, searches, commands —
gathered from the events' own notes (the describers), never from the agent's words."""

from __future__ import annotations

from claude_mem.pipeline.local.note import Note
from claude_mem.pipeline.local.text import FACT_CHARS, UNIT_FACTS, clip, dedup, shortlist

_CHANGE_LINE = ("Changed `", "New code: ")
CODE_FACTS = 4  # what the changed code is: its symbols with signature and doc, an excerpt
READ_CODE_FACTS = 2  # the same of code read
_SYMBOLS = ("Symbols: ", "Defines: ")
# Kinds whose evidence the facts above already carry; any other note adds its title.
_COVERED = frozenset({"read", "search", "list", "web", "test", "commit", "edit", "write", "patch"})


def _with(notes: list[Note], prefixes: tuple[str, ...]) -> list[str]:
    return [fact for note in notes for fact in note.facts if fact.startswith(prefixes)]


def symbol_names(notes: list[Note]) -> list[str]:
    """Names from the notes' 'Symbols:'/'Defines:' facts, in order."""
    return dedup(
        name.strip()
        for fact in _with(notes, _SYMBOLS)
        for name in fact.split(": ", 1)[1].split(",")
        if not name.strip().startswith("+")
    )


def _tests(notes: list[Note]) -> list[str]:
    """'Tests: 3 passed, 1 failed → 4 passed', the first command, failing tests and why."""
    runs = [note for note in notes if note.kind == "test"]
    if not runs:
        return []
    results = [fact[8:] for fact in _with(runs, ("Result: ",))]
    facts = [f"Tests: {' → '.join(results)}"] if results else []
    facts.extend(_with(runs[:1], ("Command: ",)))
    failing = [note for note in runs if note.failed]
    return [*facts, *_with(failing, ("Failed: ",))[:3]]


def unit_facts(notes: list[Note], read: list[str], modified: list[str]) -> list[str]:
    """The unit's facts, within the fact limits (`read`, `modified`: its files)."""
    changes = [note for note in notes if note.type != "discovery" and note.kind != "commit"]
    looks = [note for note in notes if note.type == "discovery"]
    changed_names = symbol_names(changes)
    read_names = [name for name in symbol_names(looks) if name not in changed_names]
    facts = [
        *([f"Modified: {shortlist(modified, 8)}"] if modified else []),
        *([f"Read: {shortlist(read, 8)}"] if read else []),
        *([f"Symbols changed: {shortlist(changed_names, 8)}"] if changed_names else []),
        *[fact for note in changes for fact in note.code][:CODE_FACTS],
        *_tests(notes),
        *_with([note for note in notes if note.failed], ("Error: ",))[:3],
        *(note.completed for note in notes if note.completed),
        *_with(changes, _CHANGE_LINE)[:2],
        *([f"Symbols read: {shortlist(read_names, 8)}"] if read_names else []),
        *[fact for note in looks for fact in note.code][:READ_CODE_FACTS],
        *(f"Looked into: {target}" for note in notes for target in note.investigated),
        *(_other(note) for note in notes if note.kind not in _COVERED),
    ]
    return dedup(clip(fact, FACT_CHARS) for fact in facts)[:UNIT_FACTS]


def _other(note: Note) -> str:
    """A plain command by its command line; a failure, git look or other tool by its title."""
    commands = _with([note], ("Command: ",)) if note.kind == "shell" else []
    return commands[0] if commands else note.title
