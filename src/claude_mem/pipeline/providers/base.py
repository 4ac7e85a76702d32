"""The one contract every compressor implements, built-in or third-party.

A provider turns a batch of a session's tool events into observation drafts, and a summary
request into a summary draft. It never touches the store: the consumer cleans, computes
each observation's file lists from its source events (a draft carries none), stores, and
accounts for the tokens reported here.

Beyond the two required methods a provider may declare what it is and what else it can do;
`registry.traits` and `registry.corpus_answerer` read these, and one that is left out takes
the safe default, so a minimal plugin is budgeted and slotted like any model:

- `offline: bool` (default False): True when the provider works on this machine without a
  model (rules, no service): it spends no tokens, so token budgets never stop it, and it
  takes none of the worker's LLM call slots.
- `caches_prompts: bool` (default False): True when the provider can keep a long prompt that
  repeats between calls in a prompt cache it controls (Anthropic's `cache_control`), so a
  corpus sent with every question is paid for in full once.
- `answer(question, corpus) -> CorpusAnswer` (see `CorpusAnswerer`): answers a question from
  a knowledge corpus. Without it, asking a corpus with this provider is a clear error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import msgspec

from claude_mem import records
from claude_mem.settings import setting_key

if TYPE_CHECKING:
    from claude_mem.setting_keys import SettingKey
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
    tool_use_id: str | None = None  # the host's id for the call (matches its transcript)


@dataclass(frozen=True, slots=True)
class AgentWords:
    """Text the agent wrote in a turn (privacy-cleaned), and where: before the tool call
    whose host id is `before`, or after the last one when `before` is None."""

    text: str
    before: str | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One prompt turn, the unit compression works on: the user's words, the agent's words
    between its tool calls (from the host's transcript), its closing reply (the Stop's
    `last_assistant_message`, or the transcript's last text), and the turn's tool events."""

    prompt_number: int | None
    prompt: str = ""  # the user's prompt ('' when unknown or private)
    words: tuple[AgentWords, ...] = ()  # in the order written
    reply: str = ""
    closed: bool = True  # False when the turn is compressed before it ended (idle fallback)


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What a provider may know about the session beyond the batch."""

    session_id: int
    project: str
    platform: str
    cwd: str | None = None
    prompts: tuple[str, ...] = ()  # the session's user prompts so far, oldest first
    turn: Turn | None = None  # the turn the batch's events belong to, when compressing a turn


class ObservationDraft(records.ObservationDraft, kw_only=True):
    """An observation as a provider drafts it (`records.ObservationDraft`: the record's own
    fields, so a field added there is one a provider can write), with the tool events it came
    from; the consumer adds the rest, file lists included."""

    source_event_ids: list[int] = msgspec.field(
        default_factory=list
    )  # tool_use_row_ids it came from
    # The unit only finishes the session's previous one (a commit, its tests run again): the
    # consumer folds it into that unit instead of storing another.
    continues: bool = False


SummaryDraft = records.SummaryDraft


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
    """A compressor. `name` is what CLAUDE_MEM_PROVIDER and the fallback chain refer to.

    The optional attributes and `answer` are described in the module docstring."""

    name: str

    async def compress(self, events: list[ToolEvent], ctx: SessionContext) -> Result: ...

    async def summarize(self, request: SummaryInput, ctx: SessionContext) -> Result: ...


@dataclass(frozen=True, slots=True)
class Traits:
    """What a provider declares about itself (module docstring); the defaults are the safe
    reading of a provider that says nothing: a model that costs tokens, with no prompt cache."""

    offline: bool = False
    caches_prompts: bool = False


@dataclass(frozen=True, slots=True)
class CorpusQuestion:
    """A question to a knowledge corpus, with everything a model needs to answer it."""

    corpus: str  # the corpus's name
    question: str
    system_prompt: str  # the corpus's own: every observation is untrusted data
    knowledge: str  # the rendered corpus, whole; `corpus.render.fit` cuts it to `max_tokens`
    max_tokens: int  # CLAUDE_MEM_CORPUS_MAX_TOKENS: the most knowledge to send a model
    session_id: str | None = None  # a session this provider saved with the corpus earlier


@dataclass(slots=True)
class CorpusAnswer:
    """A provider's answer; the corpus query adds the corpus, question and provider name."""

    text: str
    citations: list[dict[str, Any]] = field(default_factory=list)  # see `corpus.render.citation`
    session_id: str | None = None  # the saved session that answered, if any
    primed: bool = False  # this call sent the corpus to a new session
    session_expired: bool = False  # the saved session was gone, so a new one was primed
    left_out: int = 0  # observations cut to fit `max_tokens`


class CorpusContext(Protocol):
    """What the corpus offers a provider answering from it, besides the question's text."""

    def best_matches(self, question: str, top: int) -> list[Mapping[str, Any]]:
        """The corpus's observations (store rows) that best match `question`, best first."""
        ...

    def save_session(self, session_id: str) -> None:
        """Keep `session_id` with the corpus as this provider's; the next question gets it."""
        ...


@runtime_checkable
class CorpusAnswerer(Protocol):
    """A provider that can answer corpus questions (the optional `answer` method)."""

    name: str

    async def answer(self, question: CorpusQuestion, corpus: CorpusContext) -> CorpusAnswer: ...


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


def model_key(provider: str) -> SettingKey:
    """A provider's own model setting: `claude-agent-sdk` → CLAUDE_MEM_CLAUDE_AGENT_SDK_MODEL."""
    short = {"openai-compatible": "openai"}.get(provider, provider)
    return setting_key(f"CLAUDE_MEM_{short.upper().replace('-', '_')}_MODEL")


def configured_model(settings: Settings, provider: str) -> str:
    """The provider's own model setting, else CLAUDE_MEM_MODEL when it is the primary
    provider, else "" (its default): a fallback never receives another provider's model."""
    own = settings.get_str(model_key(provider))
    if own or settings.get_str("CLAUDE_MEM_PROVIDER") != provider:
        return own
    return settings.get_str("CLAUDE_MEM_MODEL")
