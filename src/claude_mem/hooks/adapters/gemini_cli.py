"""Gemini CLI, also published as Antigravity CLI (verified against 0.61.0's real payloads).

Its own event names: BeforeAgent is the prompt, AfterTool the tool result (`tool_response` is
`{llmContent, returnDisplay}`), AfterAgent the end of a turn with the reply in
`prompt_response`. Model-level events fire per request or per streamed chunk and are ignored.
The prompt it reports already contains earlier hooks' context wrapped in `<hook_context>`:
that is ours (or another tool's) injection, not the user's words, so it is cut off here.
"""

from __future__ import annotations

import os

from claude_mem.hooks.adapters.base import (
    agent_field,
    context_output,
    first,
    flag,
    nonempty,
    string,
    table,
)
from claude_mem.hooks.event import HookEvent, HookResult

NAME = "gemini-cli"

EVENTS = table(
    ("SessionStart", "session_start", ("context",)),
    ("BeforeAgent", "prompt", ("session-init",)),
    ("BeforeTool", "pre_read", ("file-context",)),
    ("AfterTool", "tool", ("observation",)),
    ("AfterAgent", "stop", ("summarize",)),
    ("SessionEnd", "session_end", ()),
    ("BeforeModel", "noop", ()),
    ("AfterModel", "noop", ()),
    ("BeforeToolSelection", "noop", ()),
    ("PreCompress", "noop", ()),
    ("Notification", "noop", ()),
)
# Exit 2 is a "system block" in Gemini CLI; only session start and end are advisory.
LOUD = frozenset({"session_start", "session_end"})
CONTEXT_KINDS = frozenset({"session_start", "prompt"})

_OPEN, _CLOSE = "<hook_context>", "</hook_context>"


def without_hook_context(text: str) -> str:
    """The prompt without `<hook_context>` blocks (an unclosed one hides the rest)."""
    if _OPEN not in text:
        return text
    parts, pos = [], 0
    while (start := text.find(_OPEN, pos)) != -1:
        parts.append(text[pos:start])
        end = text.find(_CLOSE, start + len(_OPEN))
        if end == -1:
            pos = len(text)
            break
        pos = end + len(_CLOSE)
    parts.append(text[pos:])
    return "".join(parts).strip()


def normalize(payload: dict[str, object], host_event: str, kind: str) -> HookEvent:
    prompt = string(payload.get("prompt"))
    tool_name = nonempty(payload.get("tool_name"))
    stamp = nonempty(payload.get("timestamp"))
    return HookEvent(
        NAME,
        host_event,
        kind,
        session_id=first(payload.get("session_id"), os.environ.get("GEMINI_SESSION_ID")),
        cwd=first(
            payload.get("cwd"), os.environ.get("GEMINI_CWD"), os.environ.get("GEMINI_PROJECT_DIR")
        ),
        prompt=without_hook_context(prompt) if prompt is not None else None,
        tool_name=tool_name,
        tool_input=payload.get("tool_input"),
        tool_response=payload.get("tool_response"),
        # No tool-call id in Gemini payloads; its timestamp is unique per call and stable
        # if the same event is delivered twice.
        tool_use_id=f"gemini-{stamp}-{tool_name}" if stamp and tool_name else None,
        last_assistant_message=string(payload.get("prompt_response")),
        transcript_path=nonempty(payload.get("transcript_path")),
        stop_hook_active=flag(payload.get("stop_hook_active")),
        agent_id=agent_field(payload.get("agent_id")),
        agent_type=agent_field(payload.get("agent_type")),
        source=first(payload.get("source"), payload.get("trigger")),
        reason=first(payload.get("reason"), payload.get("trigger")),
    )


def output(event: HookEvent, result: HookResult) -> dict[str, object]:
    if result.context and event.kind in CONTEXT_KINDS:
        return context_output(event.host_event, result.context)
    return {}
