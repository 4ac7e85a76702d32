"""The one contract every compressor implements, built-in or third-party.

A provider turns a batch of a session's tool events into observation drafts, and a summary
request into a summary draft. It never touches the store: the consumer cleans, computes
each observation's file lists from its source events (a draft carries none), stores, and
accounts for the tokens reported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from claude_mem.settings import Settings


@dataclass(frozen=True, slots=True)
class ToolEvent:
    """One recorded tool use, as stored in `tool_uses` (already privacy-cleaned)."""

    tool_use_row_id: int
    tool_name: str
    tool_input: Any
    tool_response: Any
    cwd: str | None = None
    prompt_number: int | None = None
    agent_type: str | None = None
    agent_id: str | None = None
    created_at: int = 0


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What a provider may know about the session beyond the batch."""

    session_id: int
    project: str
    platform: str
    cwd: str | None = None
    prompts: tuple[str, ...] = ()  # the session's user prompts so far, oldest first


@dataclass(slots=True)
class ObservationDraft:
    type: str
    title: str
    subtitle: str = ""
    narrative: str = ""
    facts: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    source_event_ids: list[int] = field(default_factory=list)  # tool_use_row_ids it came from


@dataclass(slots=True)
class SummaryDraft:
    request: str = ""
    investigated: str = ""
    learned: str = ""
    completed: str = ""
    next_steps: str = ""
    notes: str = ""


@dataclass(frozen=True, slots=True)
class SummaryInput:
    """A summary request: the session's last assistant message plus what the session did."""

    last_assistant_message: str
    events: tuple[ToolEvent, ...] = ()  # the session's recorded tool events, oldest first
    observations: tuple[ObservationDraft, ...] = ()  # what was already stored for it
    # The stored observations' file lists, in their order (evidence the events may not cover:
    # older events, imported observations).
    files_read: tuple[str, ...] = ()
    files_modified: tuple[str, ...] = ()


@dataclass(slots=True)
class Result:
    observations: list[ObservationDraft] = field(default_factory=list)
    summary: SummaryDraft | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    model: str | None = None


@runtime_checkable
class Provider(Protocol):
    """A compressor. `name` is what CLAUDE_MEM_PROVIDER and the fallback chain refer to."""

    name: str

    async def compress(self, events: list[ToolEvent], ctx: SessionContext) -> Result: ...

    async def summarize(self, request: SummaryInput, ctx: SessionContext) -> Result: ...


ERROR_KINDS = ("transient", "rate_limit", "quota", "auth", "setup_required", "unrecoverable")


class ProviderError(Exception):
    """A classified provider failure; the consumer decides retry, pause or fallback by `kind`.

    transient / rate_limit: worth retrying later (rate_limit may carry retry_after seconds);
    quota / auth / setup_required: the provider is paused until the user acts (queue kept);
    unrecoverable: this batch can't be processed by this provider (the next one gets it).
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown provider error kind {kind!r}")
        super().__init__(message)
        self.kind, self.message = kind, message
        self.retry_after, self.status = retry_after, status


def model_key(provider: str) -> str:
    """A provider's own model setting: `claude-agent-sdk` → CLAUDE_MEM_CLAUDE_AGENT_SDK_MODEL."""
    short = {"openai-compatible": "openai"}.get(provider, provider)
    return f"CLAUDE_MEM_{short.upper().replace('-', '_')}_MODEL"


def configured_model(settings: Settings, provider: str) -> str:
    """The provider's own model setting, else CLAUDE_MEM_MODEL when it is the primary
    provider, else "" (its default): a fallback never receives another provider's model."""
    own = settings.get_str(model_key(provider))
    if own or settings.get_str("CLAUDE_MEM_PROVIDER") != provider:
        return own
    return settings.get_str("CLAUDE_MEM_MODEL")
