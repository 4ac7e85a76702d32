"""Small string helpers for the local compressor, and the length limits it keeps to."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

SUBTITLE_CHARS = 120
FACT_CHARS = 200
MAX_FACTS = 8
UNIT_FACTS = 14  # a unit folds many events' evidence, and what its code is
EXCERPT_CHARS = 200
OUTPUT_FACT_BUDGET = 300  # raw output characters allowed across one observation's facts
SUMMARY_CHARS = 500
SCAN_CHARS = 120_000  # text scanned per output: head and tail of anything longer

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_WRAPPER_LINE = re.compile(
    r"^(?:</?untrusted_context>|Process Group PGID:.*|Chunk ID:.*|Wall time:.*|"
    r"Original token count:.*|Process exited with code.*|Exit Code:.*|Exit code:? ?-?\d+|"
    r"Signal: \(none\)|Background PIDs:.*|Error: \(none\)|Output: \(empty\)|"
    r"Final output:|Output:)\s*$",
    re.IGNORECASE,
)


def clip(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` chars; a cut ends with '…'."""
    head = text[: limit * 8 + 64]  # enough for any line that fits; huge texts stay cheap
    line = " ".join(head.split())
    if len(line) <= limit and len(head) == len(text):
        return line
    return line[: limit - 1].rstrip() + "…"


def backticked(text: str, limit: int = 60) -> str:
    """A command or code snippet in backticks, shortened."""
    shown = clip(text.replace("`", "'"), limit)
    return f"`{shown}`"


def bounded(text: str) -> str:
    """Head and tail of a huge text: results live at the end, context at the start."""
    if len(text) <= SCAN_CHARS:
        return text
    return text[: SCAN_CHARS // 3] + "\n" + text[-(SCAN_CHARS * 2 // 3) :]


def shortlist(items: Sequence[str], limit: int = 3) -> str:
    """The first `limit` items, comma-separated, then '+N more'."""
    shown = ", ".join(items[:limit])
    return shown + (f" +{len(items) - limit} more" if len(items) > limit else "")


def as_str(value: object) -> str:
    """A JSON value if it is a string, else '': host inputs may hold anything."""
    return value if isinstance(value, str) else ""


def as_int(value: object) -> int | None:
    """A JSON value if it is an integer (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def nonblank_lines(text: str) -> list[str]:
    """Non-empty, stripped lines of `text` (bounded)."""
    return [line.strip() for line in bounded(text).splitlines() if line.strip()]


def dedup(items: Iterable[str]) -> list[str]:
    """Non-empty items, first occurrence kept, in order."""
    return list(dict.fromkeys(item for item in items if item))


def in_quotes(text: str, limit: int = 40) -> str:
    """`text` shortened and in single quotes, for titles and narratives."""
    return f"'{clip(text, limit)}'"


def first_line(text: str) -> str:
    """The first non-blank line, shortened: usually the gist of a message."""
    for line in text.splitlines():
        if line.strip():
            return clip(line, 100)
    return ""


def strip_wrappers(text: str) -> str:
    """`text` without ANSI codes and the hosts' own wrapper lines around command output."""
    kept: list[str] = []
    for raw in _ANSI.sub("", bounded(text)).splitlines():
        line = raw.rstrip()
        if _WRAPPER_LINE.match(line.strip()):
            continue
        kept.append(line[8:] if line.startswith("Output: ") else line)
    return "\n".join(kept).strip("\n")


def excerpt(text: str) -> str:
    """A short quote of raw output for a narrative."""
    return clip(strip_wrappers(text), EXCERPT_CHARS)


def word_pattern(alternatives: str) -> re.Pattern[str]:
    """A case-blind regex for any of `alternatives` (a regex alternation) as whole words."""
    return re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)
