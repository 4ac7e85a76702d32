"""Claude Code's transcript JSONL (`transcript_path` in every hook payload).

`user` lines carry the prompt (a string or text blocks) or `tool_result` blocks; `assistant`
lines carry `text` and `tool_use` blocks. Every other line type (attachments, snapshots of the
request, queue operations, costs) is ignored, as are meta lines, sub-agent (sidechain) lines and
the echoes of slash commands that are stored as if the user had typed them.
"""

from __future__ import annotations

from typing import Any

from claude_mem.transcripts.shapes import (
    Said,
    assistant_blocks,
    blocks,
    starts_with_tag,
    text_of,
    tool_results,
)

# A user line that opens with one of these is the CLI talking to itself.
PSEUDO_PROMPTS = (
    "command-name",
    "command-message",
    "command-args",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
)


def turn_line(line: dict[str, Any]) -> tuple[str, object] | None:
    """("user" | "assistant", the message's content) for a line of the conversation; None for
    every other line, meta, sub-agent (sidechain) and compact-summary lines."""
    kind = line.get("type")
    message = line.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return None
    if line.get("isMeta") or line.get("isSidechain") or line.get("isCompactSummary"):
        return None
    return kind, message.get("content")


def is_tool_results(content: object) -> bool:
    """A user line that returns tool results (not a person's prompt)."""
    return not isinstance(content, str) and any(
        b.get("type") == "tool_result" for b in blocks(content)
    )


def prompt_text(content: object) -> str | None:
    """A person's prompt in a user line's content; None for the CLI talking to itself."""
    text = text_of(content)
    return None if starts_with_tag(text, PSEUDO_PROMPTS) else text


def said(line: dict[str, Any]) -> list[Said]:
    """What one Claude Code transcript line says (nothing for lines that are not a turn)."""
    found = turn_line(line)
    if found is None:
        return []
    kind, content = found
    if kind == "assistant":
        return assistant_blocks(content)
    if not is_tool_results(content):
        text = prompt_text(content)
        return [] if text is None else [("user", text, None)]
    return tool_results(content)
