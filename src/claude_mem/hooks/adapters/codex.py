"""Codex CLI (verified against 0.171.0's real payloads).

Claude-compatible names and fields, with differences that matter: `tool_response` is a plain
string, every turn has a `turn_id`, Stop carries `stop_hook_active` (re-entry after a hook made
the agent continue), and context goes back as `hookSpecificOutput.additionalContext` (Codex
turns each into a developer message; a systemMessage would only cost its output budget).
"""

from __future__ import annotations

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

NAME = "codex"

EVENTS = table(
    ("SessionStart", "session_start", ("context",)),
    ("UserPromptSubmit", "prompt", ("session-init",)),
    ("PreToolUse", "pre_read", ("file-context",)),
    ("PostToolUse", "tool", ("observation",)),
    ("Stop", "stop", ("summarize",)),
    ("SubagentStop", "stop", ()),
    ("SessionEnd", "session_end", ()),
    ("PreModelRequest", "noop", ()),
    ("PermissionRequest", "noop", ()),
    ("PreCompact", "noop", ()),
    ("PostCompact", "noop", ()),
    ("SubagentStart", "noop", ()),
    ("Interrupt", "noop", ()),
)
LOUD = frozenset({"tool", "session_start", "session_end"})
# Codex reads hookSpecificOutput on these; on Stop or unknown events it must not be sent.
CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"})


def normalize(payload: dict[str, object], host_event: str, kind: str) -> HookEvent:
    agent_id = agent_field(payload.get("agent_id"))
    if host_event == "SubagentStop" and agent_id is None:
        agent_id = "subagent"
    return HookEvent(
        NAME,
        host_event,
        kind,
        session_id=first(payload.get("session_id")),
        cwd=nonempty(payload.get("cwd")),
        prompt=string(payload.get("prompt")),
        tool_name=nonempty(payload.get("tool_name")),
        tool_input=payload.get("tool_input"),
        tool_response=payload.get("tool_response"),
        tool_use_id=nonempty(payload.get("tool_use_id")),
        last_assistant_message=string(payload.get("last_assistant_message")),
        transcript_path=nonempty(payload.get("transcript_path")),
        stop_hook_active=flag(payload.get("stop_hook_active")),
        agent_id=agent_id,
        agent_type=agent_field(payload.get("agent_type")),
        source=string(payload.get("source")),
        reason=string(payload.get("reason")),
    )


def output(event: HookEvent, result: HookResult) -> dict[str, object]:
    if event.host_event not in CONTEXT_EVENTS:
        return {}
    if event.kind == "session_start":  # Codex expects the block at session start, even empty
        return context_output(event.host_event, result.context or "")
    return context_output(event.host_event, result.context) if result.context else {}
