"""Consecutive edits to one file, of one type, merged into one note."""

from __future__ import annotations

import re

from claude_mem.pipeline.local.note import Note
from claude_mem.pipeline.local.text import dedup


def merge_groups(notes: list[Note]) -> list[list[Note]]:
    """Consecutive notes with the same merge key (edits to one file, one type) merge."""
    groups: list[list[Note]] = []
    for note in notes:
        if groups and note.merge_key is not None and groups[-1][-1].merge_key == note.merge_key:
            groups[-1].append(note)
        else:
            groups.append([note])
    return groups


def merged_note(group: list[Note]) -> Note:
    """One note for several edits to the same file."""
    first = group[0]
    target = first.merge_key[1] if first.merge_key else "a file"
    changes = dedup(change for note in group for change in note.changes)
    context = first.narrative.partition(" Context: ")[2]
    plus, minus = _line_counts([fact for note in group for fact in note.facts])
    return Note(
        type=first.type,
        title=f"Edited {target} ({len(group)} edits): {'; '.join(changes)}",
        subtitle=first.subtitle,
        narrative=f"Made {len(group)} edits to {target}: {'; '.join(changes)}."
        + (f" Context: {context}" if context else ""),
        facts=[*_without_line_counts(group), f"Lines: +{plus} -{minus} in {len(group)} edits"],
        concepts=first.concepts,
        event=first.event,
        kind="edit",
    )


def _without_line_counts(group: list[Note]) -> list[str]:
    return [fact for note in group for fact in note.facts if not fact.startswith("Lines: ")]


def _line_counts(facts: list[str]) -> tuple[int, int]:
    """Total (+added, -removed) of the 'Lines: +A -R' facts."""
    plus = minus = 0
    for fact in facts:
        match = re.fullmatch(r"Lines: \+(\d+) -(\d+)", fact)
        if match:
            plus, minus = plus + int(match.group(1)), minus + int(match.group(2))
    return plus, minus
