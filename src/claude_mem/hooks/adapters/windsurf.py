"""Windsurf (Cascade hooks): one payload shape for every action, with the details under
`tool_info`. A hook cannot inject context here (the installer writes a rules file), so the
answer is always "continue".
"""

from __future__ import annotations

from claude_mem.hooks.adapters.base import first, mapping, nonempty, string, table
from claude_mem.hooks.event import HookEvent, HookResult

NAME = "windsurf"

EVENTS = table(
    ("pre_user_prompt", "prompt", ("session-init",)),
    ("pre_read_code", "pre_read", ("file-context",)),
    ("post_read_code", "tool", ()),
    ("post_write_code", "tool", ("file-edit",)),
    ("post_run_command", "tool", ("observation",)),
    ("post_mcp_tool_use", "tool", ()),
    ("post_cascade_response", "stop", ("summarize",)),
    ("pre_write_code", "noop", ()),
    ("pre_run_command", "noop", ()),
    ("pre_mcp_tool_use", "noop", ()),
)
LOUD = frozenset({"tool"})


def _tool(info: dict[str, object], host_event: str) -> tuple[str | None, object, object]:
    if host_event == "post_write_code":
        return "Write", {"file_path": info.get("file_path"), "edits": info.get("edits")}, None
    if host_event == "post_read_code":
        return "Read", {"file_path": info.get("file_path")}, None
    if host_event == "post_run_command":
        command = {"command": info.get("command_line"), "cwd": info.get("cwd")}
        return "Bash", command, info.get("output")
    return (
        first(info.get("mcp_tool_name")) or "mcp_tool",
        info.get("mcp_tool_arguments"),
        info.get("mcp_result"),
    )


def normalize(payload: dict[str, object], host_event: str, kind: str) -> HookEvent:
    info = mapping(payload.get("tool_info"))
    tool_name, tool_input, tool_response = (
        _tool(info, host_event) if kind == "tool" else (None, None, None)
    )
    return HookEvent(
        NAME,
        host_event,
        kind,
        session_id=first(payload.get("trajectory_id"), payload.get("execution_id")),
        cwd=first(info.get("cwd"), payload.get("cwd")),
        prompt=string(info.get("user_prompt")),
        tool_name=tool_name,
        tool_input=tool_input,
        tool_response=tool_response,
        last_assistant_message=string(info.get("response")) if kind == "stop" else None,
        transcript_path=nonempty(payload.get("transcript_path")),
    )


def output(event: HookEvent, result: HookResult) -> dict[str, object]:
    return {"continue": True}
