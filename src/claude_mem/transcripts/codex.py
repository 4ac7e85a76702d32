"""Codex's rollout JSONL (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`).

The conversation is in `response_item` lines: `message` (user `input_text`, assistant
`output_text`), `function_call` / `custom_tool_call` with a `call_id` (the hooks' `tool_use_id`)
and their `*_output`. `event_msg` lines repeat the same words for the UI and are ignored, as are
`session_meta`, `turn_context`, reasoning and the context Codex injects as user messages.
"""

from __future__ import annotations

from typing import Any

from claude_mem.transcripts.shapes import Said, host_id, starts_with_tag, text_of

# User messages that open with these are context Codex adds, not the person's words.
INJECTED = ("environment_context", "user_instructions", "turn_aborted", "user_shell_command")
AGENTS_MD = "# AGENTS.md instructions"
CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")


def said(line: dict[str, Any]) -> list[Said]:
    """What one rollout line says (nothing for lines that are not a turn)."""
    item = line.get("payload")
    if line.get("type") != "response_item" or not isinstance(item, dict):
        return []
    kind = item.get("type")
    if kind == "message":
        return _message(item)
    if kind in CALLS:
        name = item.get("name") or ("shell" if kind == "local_shell_call" else None)
        call = host_id(item.get("call_id"))
        return [("tool_use", name, call)] if isinstance(name, str) and call else []
    if kind in OUTPUTS:
        call = host_id(item.get("call_id"))
        return [("tool_result", _output(item.get("output")), call)] if call else []
    return []


def _message(item: dict[str, Any]) -> list[Said]:
    text = text_of(item.get("content"))
    role = item.get("role")
    if role == "assistant":
        return [("assistant", text, None)]
    if role != "user" or starts_with_tag(text, INJECTED) or text.startswith(AGENTS_MD):
        return []
    return [("user", text, None)]


def _output(output: object) -> str:
    """A call's output: a string, `{"content": ...}` or a list of content parts."""
    if isinstance(output, dict):
        output = output.get("content", output.get("output"))
    return text_of(output)
