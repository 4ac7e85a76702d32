"""Cursor: camelCase events, a conversation id instead of a session id, shell and MCP results in
their own fields. Cursor cannot inject context through a hook (the installer writes a rules file
instead), so every answer is just "continue" (and "allow" where Cursor asks for a permission).
"""

from __future__ import annotations

import os

from claude_mem.hooks import jsonio
from claude_mem.hooks.adapters.base import (
    agent_field,
    first,
    mapping,
    nonempty,
    string,
    table,
)
from claude_mem.hooks.event import HookEvent, HookResult

NAME = "cursor"

EVENTS = table(
    ("sessionStart", "session_start", ("context",)),
    ("beforeSubmitPrompt", "prompt", ("session-init",)),
    ("beforeReadFile", "pre_read", ("file-context",)),
    ("afterShellExecution", "tool", ("observation",)),
    ("afterMCPExecution", "tool", ()),
    ("afterFileEdit", "tool", ("file-edit",)),
    ("stop", "stop", ("summarize",)),
    ("sessionEnd", "session_end", ()),
    ("beforeShellExecution", "noop", ()),
    ("beforeMCPExecution", "noop", ()),
    ("afterAgentResponse", "noop", ()),
    ("afterAgentThought", "noop", ()),
)
LOUD = frozenset({"tool"})
PERMISSION_EVENTS = frozenset({"beforeReadFile", "beforeShellExecution", "beforeMCPExecution"})
_SAFE_ID = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def _maybe_json(value: object) -> object:
    """Cursor sends MCP arguments and results as JSON text; decode when it is JSON."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return jsonio.loads(value)
        except ValueError:
            return value
    return value


def _tool(payload: dict[str, object], host_event: str) -> tuple[str | None, object, object]:
    if host_event == "afterShellExecution" or ("command" in payload and "tool_name" not in payload):
        return "Bash", {"command": payload.get("command")}, {"output": payload.get("output")}
    if host_event == "afterFileEdit":
        edit = {"file_path": payload.get("file_path"), "edits": payload.get("edits")}
        return "Edit", edit, {"success": True}
    return (
        nonempty(payload.get("tool_name")),
        _maybe_json(payload.get("tool_input")),
        _maybe_json(payload.get("result_json")),
    )


def _transcript(payload: dict[str, object], session_id: str | None, cwd: str | None) -> str | None:
    """Cursor's own path, or where Cursor keeps agent transcripts for this workspace."""
    given = nonempty(payload.get("transcript_path"))
    if given or not session_id or not cwd or not set(session_id) <= _SAFE_ID:
        return given
    slug = cwd.lstrip("/").replace("/", "-").replace(".", "-")
    path = os.path.join(
        os.path.expanduser("~"), ".cursor", "projects", slug, "agent-transcripts",
        session_id, f"{session_id}.jsonl",
    )  # fmt: skip
    return path if os.path.isfile(path) else None


def normalize(payload: dict[str, object], host_event: str, kind: str) -> HookEvent:
    roots = payload.get("workspace_roots")
    root = roots[0] if isinstance(roots, list) and roots else None
    session_id = first(
        payload.get("conversation_id"), payload.get("generation_id"), payload.get("id")
    )
    cwd = first(root, payload.get("cwd"))
    tool_name, tool_input, tool_response = (
        _tool(payload, host_event) if kind == "tool" else (None, None, None)
    )
    prompt = next(
        (v for k in ("prompt", "query", "input", "message") if (v := string(payload.get(k)))),
        None,
    )
    return HookEvent(
        NAME,
        host_event,
        kind,
        session_id=session_id,
        cwd=cwd,
        prompt=prompt,
        tool_name=tool_name,
        tool_input=tool_input,
        tool_response=tool_response,
        tool_use_id=nonempty(payload.get("tool_use_id")),
        last_assistant_message=string(payload.get("last_assistant_message")),
        transcript_path=_transcript(payload, session_id, cwd) if kind == "stop" else None,
        stop_hook_active=False,
        agent_id=agent_field(payload.get("agent_id")),
        agent_type=agent_field(mapping(payload.get("agent")).get("type")),
        source=string(payload.get("source")),
        reason=first(payload.get("reason"), payload.get("status")),
    )


def output(event: HookEvent, result: HookResult) -> dict[str, object]:
    if event.host_event in PERMISSION_EVENTS:
        return {"continue": True, "permission": "allow"}
    return {"continue": True}
