"""The last thing the assistant said, from a host's JSONL transcript, read from the end.

Only used when the Stop payload has no `last_assistant_message` (older Claude Code, Cursor).
Transcripts grow to hundreds of MB, so at most MAX_BYTES from the end are read. Understands the
shapes hosts write: Claude Code (`{"type": "assistant", "message": {"content": [...]}}`),
Codex rollouts (`{"payload": {"role": "assistant", "content": [...]}}`) and plain
`{"role": "assistant", "content": ...}` lines.
"""

from __future__ import annotations

import os

from claude_mem.hooks import jsonio
from claude_mem.locations import open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_BYTES = 8 << 20
BLOCK = 256 << 10
TEXT_PARTS = ("text", "output_text")


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        part["text"]
        for part in content
        if isinstance(part, dict)
        and part.get("type", "text") in TEXT_PARTS
        and isinstance(part.get("text"), str)
    ]
    return "\n".join(parts)


def _assistant_text(record: object) -> str:
    if not isinstance(record, dict):
        return ""
    for holder in (record, record.get("message"), record.get("payload")):
        if isinstance(holder, dict) and holder.get("role") == "assistant":
            return _text(holder.get("content")).strip()
    if record.get("type") == "assistant":
        message = record.get("message")
        return _text(message.get("content") if isinstance(message, dict) else message).strip()
    return ""


def _lines_from_end(path: str, limit: int) -> Iterator[bytes]:
    """Complete lines of the file's last `limit` bytes, last line first; nothing when `path`
    is not a regular file (a FIFO there must not hang the Stop hook)."""
    fd = open_regular(path)
    if fd is None:
        return
    with os.fdopen(fd, "rb") as handle:
        end = handle.seek(0, os.SEEK_END)
        start = end
        rest = b""
        while start > 0 and end - start < limit:
            step = min(BLOCK, start, limit - (end - start))
            start -= step
            handle.seek(start)
            chunk = handle.read(step) + rest
            lines = chunk.split(b"\n")
            rest = lines[0]  # may be cut: completed by the next block
            yield from reversed(lines[1:])
        if start == 0:
            yield rest


def last_assistant_text(path: str, limit: int = MAX_BYTES) -> str | None:
    """The newest non-empty assistant text in the transcript, or None."""
    try:
        for line in _lines_from_end(path, limit):
            if b"assistant" not in line:
                continue
            try:
                text = _assistant_text(jsonio.loads(line))
            except ValueError:
                continue
            if text:
                return text
    except OSError:
        return None
    return None
