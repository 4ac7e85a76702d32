"""The JSON shapes hosts share: a transcript line as a record, content blocks as text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from claude_mem.transcripts import Role

# What a format finds in one record, before cleaning: (role, raw text, host call id).
Said = tuple[Role, str, str | None]

TEXT_PARTS = ("text", "output_text", "input_text")


def record(line: bytes) -> dict[str, Any] | None:
    """The JSON object on `line`; None for blank, malformed or non-object lines."""
    if not line.strip():
        return None
    try:
        value = json.loads(line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):  # hostile nesting raises the latter
        return None
    return value if isinstance(value, dict) else None


def text_of(content: object) -> str:
    """A message's text: a plain string, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        part["text"]
        for part in content
        if isinstance(part, dict)
        and part.get("type", "text") in TEXT_PARTS
        and isinstance(part.get("text"), str)
    )


def blocks(content: object) -> Iterator[dict[str, Any]]:
    """The dict blocks of a content list (nothing for a string or anything else)."""
    if isinstance(content, list):
        yield from (block for block in content if isinstance(block, dict))


def assistant_blocks(content: object) -> list[Said]:
    """An assistant message's `text` blocks and `tool_use` blocks (name, id), in order."""
    if isinstance(content, str):
        return [("assistant", content, None)]
    found: list[Said] = []
    for block in blocks(content):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            found.append(("assistant", block["text"], None))
        elif block.get("type") == "tool_use" and isinstance(block.get("name"), str):
            found.append(("tool_use", block["name"], host_id(block.get("id"))))
    return found


def tool_results(content: object) -> list[Said]:
    """The `tool_result` blocks of a user message: the result's text and the call's id."""
    return [
        ("tool_result", text_of(block.get("content")), host_id(block.get("tool_use_id")))
        for block in blocks(content)
        if block.get("type") == "tool_result"
    ]


def host_id(value: object) -> str | None:
    """A host's call id, or None when it is missing or not a string."""
    return value if isinstance(value, str) and value else None


def starts_with_tag(text: str, tags: tuple[str, ...]) -> bool:
    """True when `text` opens with one of `tags` (`<name>` or `<name ...>`): host plumbing
    such as a slash command's echo or injected environment context, not a person's words."""
    head = text.lstrip()[:64]
    return any(head.startswith((f"<{tag}>", f"<{tag} ")) for tag in tags)
