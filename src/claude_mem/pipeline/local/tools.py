"""Subagent tasks, and any other tool (MCP included) by its name and key inputs."""

from __future__ import annotations

from claude_mem.pipeline.local.classify import tool_changes
from claude_mem.pipeline.local.note import Note, Scope, discovery
from claude_mem.pipeline.local.responses import response_text
from claude_mem.pipeline.local.text import (
    EXCERPT_CHARS,
    FACT_CHARS,
    as_str,
    clip,
    excerpt,
    in_quotes,
)
from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.inputs import input_dict

_KEY_ORDER = ("query", "url", "file_path", "path", "pattern", "command", "name", "title", "id")


def tool_label(name: object) -> str:
    """A tool's name for titles: `mcp__github__create_issue` reads `github/create_issue`."""
    label = clip(as_str(name), 48)
    if label.lower().startswith("mcp__"):
        parts = [part for part in label.split("__")[1:] if part]
        return "/".join(parts) or "an MCP tool"
    return label or "a tool"


def task_note(event: ToolEvent, scope: Scope) -> Note:
    """Task: a subagent was asked to do something; what it reported back."""
    data = input_dict(event)
    agent = as_str(data.get("subagent_type")) or "general-purpose"
    description = as_str(data.get("description")) or clip(as_str(data.get("prompt")), 60)
    report = response_text(event.tool_response)
    narrative = f"Asked a {clip(agent, 40)} subagent to {clip(description or 'help', 120)}."
    if report:
        narrative += f" It reported: {in_quotes(excerpt(report), EXCERPT_CHARS)}."
    prompt = as_str(data.get("prompt"))
    return discovery(
        event,
        "task",
        f"Delegated to {clip(agent, 40)} agent: {description or 'a subtask'}",
        subtitle=f"subagent {clip(agent, 60)}",
        narrative=narrative,
        facts=[f"Task: {clip(prompt, 180)}"] if prompt else [],
    )


def tool_note(event: ToolEvent, scope: Scope) -> Note:
    """Any other tool (incl. MCP): 'Used <tool>' with its key input fields."""
    label = tool_label(event.tool_name)
    pairs = _key_fields(event.tool_input)
    title = f"Used {label}"
    if pairs:
        title += ": " + ", ".join(f"{key}={in_quotes(value, 40)}" for key, value in pairs[:3])
    changes = tool_changes(label)
    reply = response_text(event.tool_response)
    narrative = f"Called {label}."
    if reply:
        narrative += f" It returned: {in_quotes(excerpt(reply), EXCERPT_CHARS)}."
    return Note(
        type="change" if changes else "discovery",
        title=title,
        subtitle=f"tool {label}",
        narrative=narrative,
        facts=[clip(f"{key}: {value}", FACT_CHARS) for key, value in pairs[:5]],
        concepts=["what-changed" if changes else "how-it-works"],
        event=event,
        kind="tool",
    )


def _key_fields(value: object) -> list[tuple[str, str]]:
    """The scalar fields of a tool input worth naming, preferred keys first."""
    if isinstance(value, str):
        return [("input", value)] if value.strip() else []
    if not isinstance(value, dict):
        return []
    items = [
        (str(key), str(item))
        for key, item in list(value.items())[:100]
        if isinstance(item, (str, int, float)) and not isinstance(item, bool) and str(item)
    ]
    rank = {key: index for index, key in enumerate(_KEY_ORDER)}
    return sorted(items, key=lambda pair: rank.get(pair[0], len(rank)))
