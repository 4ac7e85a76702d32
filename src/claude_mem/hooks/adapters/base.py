"""Helpers every adapter shares: tolerant field readers and event-name lookup.

Hosts add, rename and drop fields between versions, so readers never raise: a field of the
wrong type is treated as missing.
"""

from __future__ import annotations

MAX_AGENT_ID = 128


def event_key(name: str) -> str:
    """`PostToolUse`, `post-tool-use` and `post_tool_use` all become `posttooluse`."""
    return "".join(c for c in name.lower() if c.isalnum())


def table(*rows: tuple[str, str, tuple[str, ...]]) -> dict[str, tuple[str, str]]:
    """Event lookup: each row is (host event name, kind, aliases); keys via event_key."""
    lookup: dict[str, tuple[str, str]] = {}
    for host_event, kind, aliases in rows:
        for name in (host_event, *aliases):
            lookup[event_key(name)] = (host_event, kind)
    return lookup


def string(value: object) -> str | None:
    """The value if it is a string, else None."""
    return value if isinstance(value, str) else None


def nonempty(value: object) -> str | None:
    """A string with something other than whitespace, else None."""
    return value if isinstance(value, str) and value.strip() else None


def first(*values: object) -> str | None:
    """The first non-empty string among `values`."""
    for value in values:
        if isinstance(value, str) and value.strip():
            return value
    return None


def agent_field(value: object) -> str | None:
    """Subagent ids/types are kept only when they look like ids (1-128 characters)."""
    if isinstance(value, str) and 0 < len(value.strip()) <= MAX_AGENT_ID:
        return value.strip()
    return None


def flag(value: object) -> bool:
    """True for JSON true and for the strings "true"/"1" (Codex has sent both)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return False


def mapping(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def context_output(event_name: str, context: str) -> dict[str, object]:
    """The `hookSpecificOutput` block Claude Code, Codex and Gemini CLI all read."""
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": context}}
