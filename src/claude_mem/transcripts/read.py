"""`read_since`: a host's transcript from a byte offset to cleaned entries, one bounded read.

The caller stores the returned offset with what it built from the entries, so a transcript is
never read whole twice and an entry is never returned twice. Every text passes through the
privacy module exactly as prompts do; a text private as a whole yields no entry, except a
person's prompt, which yields an empty one: it still marks where a turn begins, so the words of
a private turn are never taken for the turn before it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from claude_mem.privacy import clean_text, is_protocol_payload
from claude_mem.transcripts import Chunk, Entry, claude_code, codex, cursor, gemini
from claude_mem.transcripts.reader import MAX_READ, Lines, read_lines
from claude_mem.transcripts.shapes import Said, record

MAX_TEXT = 8000  # characters of one entry, after cleaning
ELLIPSIS = "…"

Parse = Callable[[dict[str, Any]], list[Said]]
LINE_FORMATS: dict[str, Parse] = {
    "claude-code": claude_code.said,
    "codex": codex.said,
    "cursor": cursor.said,
}
GENERIC: tuple[Parse, ...] = (claude_code.said, codex.said, cursor.said, gemini.said)


def read_since(
    path: str, offset: int, *, platform: str, redact: bool = True, max_bytes: int = MAX_READ
) -> Chunk:
    """The entries written to `path` after `offset`, and the offset to read from next time.

    `platform` is the hook's host name (`claude-code`, `codex`, `gemini-cli`, `cursor`); any
    other reads every shape those hosts write. A missing file, a directory, a FIFO or any read
    error gives no entries and the same offset.
    """
    read = read_lines(path, offset, max_bytes)
    if platform == "gemini-cli":
        found, offset = gemini.messages(read)
    else:
        found, offset = _jsonl(read, LINE_FORMATS.get(platform, _generic)), read.offset
    entries = [entry for said, end in found if (entry := _entry(said, end, redact)) is not None]
    return Chunk(entries, offset)


def _jsonl(read: Lines, parse: Parse) -> list[tuple[Said, int]]:
    return [
        (said, end)
        for line, end in read.lines
        if (one := record(line)) is not None
        for said in parse(one)
    ]


def _generic(line: dict[str, Any]) -> list[Said]:
    """The first host shape that finds anything in `line`."""
    for parse in GENERIC:
        if found := [said for said in parse(line) if said[1].strip()]:
            return found
    return []


def _entry(said: Said, end: int, redact: bool) -> Entry | None:
    role, text, call_id = said
    if role == "user" and is_protocol_payload(text):
        # Agent-to-agent plumbing, as the prompt hook skips it; what follows is not the
        # previous turn's, so the boundary stays.
        return Entry(role, "", None, end)
    cleaned = clean_text(text, redact=redact)
    if not cleaned:
        return Entry(role, "", None, end) if role == "user" else None
    if len(cleaned) > MAX_TEXT:
        cleaned = cleaned[: MAX_TEXT - 1].rstrip() + ELLIPSIS
    if call_id is not None and clean_text(call_id, redact=redact) != call_id:
        call_id = None  # an id is never a place for text; one that cleaning changes is dropped
    return Entry(role, cleaned, call_id, end)
