"""Raw: our own neutral shape, for scripts and integrations without a dedicated adapter.

The event argument names the kind directly (`session-start`, `prompt`, `tool`, `stop`,
`session-end`, `pre-read`, `setup`); fields may be snake_case or camelCase; an optional
`platform` field names the source (default "raw"). The answer is the result as it is.
"""

from __future__ import annotations

from claude_mem.hooks.adapters.base import (
    agent_field,
    first,
    flag,
    nonempty,
    string,
    table,
)
from claude_mem.hooks.event import HookEvent, HookResult

NAME = "raw"

EVENTS = table(
    ("session-start", "session_start", ("context", "SessionStart")),
    ("prompt", "prompt", ("session-init", "UserPromptSubmit", "user-prompt")),
    ("pre-read", "pre_read", ("file-context", "PreToolUse")),
    ("tool", "tool", ("observation", "PostToolUse", "tool-use")),
    ("stop", "stop", ("summarize", "Stop")),
    ("session-end", "session_end", ("SessionEnd",)),
    ("setup", "setup", ()),
)
LOUD = frozenset({"session_start", "prompt", "pre_read", "tool", "stop", "session_end", "setup"})
_PLATFORM_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")


def _get(payload: dict[str, object], snake: str, camel: str) -> object:
    value = payload.get(snake)
    return payload.get(camel) if value is None else value


def _platform(value: object) -> str:
    name = value.strip().lower().replace(" ", "-") if isinstance(value, str) else ""
    return name if 0 < len(name) <= 64 and set(name) <= _PLATFORM_CHARS else NAME


def normalize(payload: dict[str, object], host_event: str, kind: str) -> HookEvent:
    return HookEvent(
        _platform(payload.get("platform")),
        host_event,
        kind,
        session_id=first(payload.get("session_id"), payload.get("sessionId")),
        cwd=nonempty(payload.get("cwd")),
        prompt=string(payload.get("prompt")),
        tool_name=first(payload.get("tool_name"), payload.get("toolName")),
        tool_input=_get(payload, "tool_input", "toolInput"),
        tool_response=_get(payload, "tool_response", "toolResponse"),
        tool_use_id=first(payload.get("tool_use_id"), payload.get("toolUseId")),
        last_assistant_message=string(
            _get(payload, "last_assistant_message", "lastAssistantMessage")
        ),
        transcript_path=first(payload.get("transcript_path"), payload.get("transcriptPath")),
        stop_hook_active=flag(_get(payload, "stop_hook_active", "stopHookActive")),
        agent_id=agent_field(_get(payload, "agent_id", "agentId")),
        agent_type=agent_field(_get(payload, "agent_type", "agentType")),
        source=string(payload.get("source")),
        reason=string(payload.get("reason")),
    )


def output(event: HookEvent, result: HookResult) -> dict[str, object]:
    out: dict[str, object] = {}
    if result.context:
        out["additionalContext"] = result.context
    if result.system_message:
        out["systemMessage"] = result.system_message
    return out
