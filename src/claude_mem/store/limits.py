"""Oversize fields are cut, with a marker saying so, rather than refused: a giant tool output
must never cost the event itself. Cut only after privacy cleaning, so a cut can't split a
private region and leave its tail behind."""

from __future__ import annotations

import json
from typing import Any

FIELD_CHARS = 64 * 1024  # one string inside a tool input or response
# A record's title or narrative: stored whole up to this (an explicit memory's text fits),
# shortened at a word only where it is shown or injected.
RECORD_TEXT_CHARS = 20_000
VALUE_CHARS = 256 * 1024  # a whole tool input or response, serialised
HEAD_SHARE = 0.7


def truncate_text(text: str, limit: int = FIELD_CHARS) -> str:
    """`text` if it fits, else its head and tail around an explicit marker (≤ limit + marker)."""
    if len(text) <= limit:
        return text
    head = int(limit * HEAD_SHARE)
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n…[truncated {cut:,} of {len(text):,} chars]…\n{text[-tail:]}"


def truncate_value(
    value: object, field_limit: int = FIELD_CHARS, total: int = VALUE_CHARS
) -> object:
    """A JSON-like value with long strings cut; if it is still too big, its cut JSON text."""
    trimmed = _trim(value, field_limit)
    try:
        encoded = json.dumps(trimmed, ensure_ascii=False)
    except RecursionError:
        return "[elided: nesting too deep]"
    if len(encoded) <= total:
        return trimmed
    return truncate_text(encoded, total)


def _trim(value: object, limit: int) -> object:
    # (container copy, key, original child)
    stack: list[tuple[dict[Any, object] | list[object], Any, object]] = []
    root: list[object] = [value]
    stack.append((root, 0, value))
    while stack:
        parent, key, item = stack.pop()
        if isinstance(item, str):
            replacement: object = truncate_text(item, limit)
        elif isinstance(item, dict):
            replacement = dict(item)
            stack.extend((replacement, k, v) for k, v in item.items())
        elif isinstance(item, list):
            replacement = list(item)
            stack.extend((replacement, i, v) for i, v in enumerate(item))
        else:
            replacement = item
        parent[key] = replacement
    return root[0]
