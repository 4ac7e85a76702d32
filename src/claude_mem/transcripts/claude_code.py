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


def said(line: dict[str, Any]) -> list[Said]:
    """What one Claude Code transcript line says (nothing for lines that are not a turn)."""
    kind = line.get("type")
    message = line.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return []
    if line.get("isMeta") or line.get("isSidechain") or line.get("isCompactSummary"):
        return []
    content = message.get("content")
    if kind == "assistant":
        return assistant_blocks(content)
    if isinstance(content, str) or not any(b.get("type") == "tool_result" for b in blocks(content)):
        text = text_of(content)
        return [] if starts_with_tag(text, PSEUDO_PROMPTS) else [("user", text, None)]
    return tool_results(content)
