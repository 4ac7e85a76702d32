"""Cursor's agent transcript JSONL (`transcript_path` in Cursor's hook payloads).

Each line is `{"role": "user" | "assistant", "message": {"content": [blocks]}}`; the user's
words are wrapped in `<user_query>`. Cursor writes no tool calls there today; `tool_use` /
`tool_result` blocks are read the Claude Code way should it start to.
"""

from __future__ import annotations

from typing import Any

from claude_mem.transcripts.shapes import Said, assistant_blocks, text_of, tool_results

QUERY_OPEN, QUERY_CLOSE = "<user_query>", "</user_query>"


def said(line: dict[str, Any]) -> list[Said]:
    """What one Cursor transcript line says (nothing for other shapes)."""
    role = line.get("role")
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else line.get("content")
    if role == "user":
        return [("user", _query(text_of(content)), None), *tool_results(content)]
    if role != "assistant":
        return []
    return assistant_blocks(content)


def _query(text: str) -> str:
    """The words inside `<user_query>…</user_query>` (the whole text when unwrapped)."""
    body = text.strip()
    if body.startswith(QUERY_OPEN) and body.endswith(QUERY_CLOSE):
        return body[len(QUERY_OPEN) : -len(QUERY_CLOSE)].strip()
    return text
