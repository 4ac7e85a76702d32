"""Hosts' transcripts, read incrementally: what the agent said between its tool calls.

The host already wrote, with a model, why it did things; its transcript (Claude Code's JSONL
at `transcript_path`, Codex's rollout, Gemini CLI's chat file, Cursor's agent transcript) is
the offline summarizer's best source. Entries come out privacy-cleaned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Chunk", "Entry", "Role", "read_since"]

Role = Literal["user", "assistant", "tool_use", "tool_result"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One thing in a transcript. `user` is a person's prompt (never a tool result);
    `assistant` the agent's text; `tool_use`/`tool_result` carry the host's call id."""

    role: Role
    text: str  # privacy-cleaned
    tool_use_id: str | None = None
    end: int = 0  # byte offset just past the line this entry came from


@dataclass(frozen=True, slots=True)
class Chunk:
    """What one bounded read found, and where the next read starts."""

    entries: list[Entry]
    offset: int


# After the records above: the readers build them.
from claude_mem.transcripts.read import read_since  # noqa: E402
