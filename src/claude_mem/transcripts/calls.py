"""Claude Code's transcript as the hooks would have reported it: prompts, tool calls with
their input, tool results with the tool's response.

When the worker is down, Claude Code drops its http hooks (PostToolUse and the rest); the
transcript still holds every call. `read_steps` gives them to the worker's recovery
(worker/recovery.py), one bounded read at a time, from a byte offset. A call's response is the
line's `toolUseResult` (the very object PostToolUse carries) when the line answers one call,
else the result block's text. Prompts come as the prompt hook sends them: privacy-cleaned, a
private one as an empty private block (the store cleans inputs and responses, as it does for
hooks); agent-to-agent plumbing and the CLI's own lines are no prompts, as for the hook.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from claude_mem.control import asks_no_memory
from claude_mem.hooks.handlers import sent_prompt
from claude_mem.transcripts import claude_code
from claude_mem.transcripts.reader import MAX_READ, read_lines
from claude_mem.transcripts.shapes import blocks, host_id, record, text_of

StepKind = Literal["prompt", "call", "result"]


@dataclass(frozen=True, slots=True)
class Step:
    """One thing the hooks would have said; `start` is the offset of its line."""

    kind: StepKind
    start: int
    text: str = ""  # a prompt, cleaned (PRIVATE_PROMPT when private as a whole)
    nomem: bool = False  # a prompt that asks for no memory (`#nomem`)
    tool_use_id: str | None = None
    name: str = ""
    value: Any = None  # a call's input; a result's response
    cwd: str | None = None


@dataclass(frozen=True, slots=True)
class Steps:
    steps: list[Step]
    start: int  # where the read started: 0 when the file is now shorter than the offset asked
    offset: int  # where the next read starts
    full: bool  # the read stopped at its size bound, not at the end of the file


def read_steps(path: str, offset: int, *, redact: bool = True, max_bytes: int = MAX_READ) -> Steps:
    """The steps written to a Claude Code transcript after `offset`, in order."""
    read = read_lines(path, offset, max_bytes)
    found: list[Step] = []
    start = read.start
    for line, end in read.lines:
        one = record(line)
        if one is not None:
            found.extend(_steps(one, start, redact))
        start = end
    return Steps(found, read.start, read.offset, read.full)


def _steps(line: dict[str, Any], start: int, redact: bool) -> list[Step]:
    turn = claude_code.turn_line(line)
    if turn is None:
        return []
    kind, content = turn
    cwd = line.get("cwd") if isinstance(line.get("cwd"), str) else None
    if kind == "assistant":
        return [
            Step(
                "call",
                start,
                tool_use_id=call,
                name=block["name"],
                value=block.get("input"),
                cwd=cwd,
            )
            for block in blocks(content)
            if block.get("type") == "tool_use"
            and isinstance(block.get("name"), str)
            and (call := host_id(block.get("id")))
        ]
    if not claude_code.is_tool_results(content):
        text = claude_code.prompt_text(content)
        cleaned = None if text is None else sent_prompt(text, redact=redact)
        if text is None or cleaned is None:
            return []  # the CLI or another agent talking: no prompt hook numbers these
        return [Step("prompt", start, text=cleaned, nomem=asks_no_memory(text), cwd=cwd)]
    results = [b for b in blocks(content) if b.get("type") == "tool_result"]
    whole = line.get("toolUseResult")
    one = whole is not None and len(results) == 1
    return [
        Step(
            "result",
            start,
            tool_use_id=call,
            cwd=cwd,
            value=whole if one else text_of(block.get("content")),
        )
        for block in results
        if (call := host_id(block.get("tool_use_id")))
    ]
