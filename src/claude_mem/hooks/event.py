"""The one internal event every platform adapter produces, and what a handler answers.

Plain classes with __slots__, not dataclasses: `import dataclasses` alone is a large share of
a hook's time (bench/hook_bench.py measures hooks).
"""

from __future__ import annotations

# What a handler does with the event. `noop` is a host event we know and deliberately ignore.
KINDS = ("session_start", "prompt", "pre_read", "tool", "stop", "session_end", "setup", "noop")

FIELDS = (
    "session_id",
    "cwd",
    "prompt",
    "tool_name",
    "tool_input",
    "tool_response",
    "tool_use_id",
    "last_assistant_message",
    "transcript_path",
    "stop_hook_active",
    "agent_id",
    "agent_type",
    "source",
    "reason",
)


class HookEvent:
    """A host event after normalisation: missing fields are None, unknown ones are dropped."""

    __slots__ = ("host_event", "kind", "platform", *FIELDS)

    platform: str  # canonical platform name, also the worker's `platform` field
    host_event: str  # the host's own event name, e.g. "PostToolUse" (hosts echo it back)
    kind: str  # one of KINDS
    session_id: str | None
    cwd: str | None
    prompt: str | None
    tool_name: str | None
    tool_input: object
    tool_response: object
    tool_use_id: str | None
    last_assistant_message: str | None
    transcript_path: str | None
    stop_hook_active: bool
    agent_id: str | None
    agent_type: str | None
    source: str | None
    reason: str | None

    def __init__(self, platform: str, host_event: str, kind: str, **fields: object) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown event kind {kind!r}")
        self.platform, self.host_event, self.kind = platform, host_event, kind
        for name in FIELDS:
            setattr(self, name, fields.pop(name, None))
        if fields:
            raise TypeError(f"unknown event fields: {', '.join(sorted(fields))}")
        self.stop_hook_active = bool(self.stop_hook_active)

    def as_dict(self) -> dict[str, object]:
        """Every field by name (tests and debugging)."""
        names = ("platform", "host_event", "kind", *FIELDS)
        return {name: getattr(self, name) for name in names}

    def __repr__(self) -> str:
        return f"HookEvent({self.platform}, {self.host_event}, {self.kind}, {self.session_id!r})"


class HookResult:
    """A handler's answer; the adapter turns it into the host's JSON.

    context: text for the model (additionalContext); system_message: a line for the user;
    stderr: one line for stderr; exit_code: 0, or 2 when capture must be reported as broken.
    """

    __slots__ = ("context", "exit_code", "stderr", "system_message")

    def __init__(
        self,
        context: str | None = None,
        system_message: str | None = None,
        *,
        stderr: str | None = None,
        exit_code: int = 0,
    ) -> None:
        self.context, self.system_message = context, system_message
        self.stderr, self.exit_code = stderr, exit_code
