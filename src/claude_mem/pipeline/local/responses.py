"""What a tool reported, read from whichever shape its host gave the response in."""

from __future__ import annotations

import re

from claude_mem.pipeline.local.text import SCAN_CHARS, as_str, bounded, first_line


def text_value(value: object) -> str:
    """Readable text of a JSON value: strings, or the text parts of a list of parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [item.get("text") if isinstance(item, dict) else item for item in value[:50]]
        return "\n".join(part for part in parts if isinstance(part, str))
    return ""


def response_text(response: object) -> str:
    """The main text of a tool response, whatever its host shape."""
    if isinstance(response, dict):
        for key in ("stdout", "output", "llmContent", "result", "content", "text", "message"):
            text = text_value(response.get(key))
            if text:
                return bounded(text)
        return ""
    return bounded(text_value(response))


def tool_error(response: object) -> str:
    """The error a non-shell tool reported, or ''."""
    if isinstance(response, str):
        head = response.lstrip()[:300]
        if re.match(r"(?i)(?:error\b|<tool_use_error>|failed to|file does not exist)", head):
            return first_line(re.sub(r"</?tool_use_error>", "", head))
        return ""
    if not isinstance(response, dict):
        return ""
    error = response.get("error")
    if isinstance(error, dict):
        error = error.get("message")
    if isinstance(error, str) and error.strip():
        return first_line(error)
    llm = as_str(response.get("llmContent")).lstrip()
    if llm.lower().startswith("error"):
        return first_line(llm)
    if response.get("is_error") is True or response.get("isError") is True:
        return first_line(response_text(response)) or "the tool reported an error"
    return ""


def json_text(value: object, depth: int = 0) -> str:
    """All strings inside a JSON value, joined (bounded in depth and size)."""
    if isinstance(value, str):
        return value[:20_000]
    if depth > 6:
        return ""
    if isinstance(value, dict):
        items = list(value.values())[:200]
    elif isinstance(value, list):
        items = value[:200]
    else:
        return ""
    return "\n".join(json_text(item, depth + 1) for item in items)[:SCAN_CHARS]
