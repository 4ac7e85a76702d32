"""Each kind of record declared once: observation, summary, prompt, session, tool use.

A Struct's fields are its table's columns (a test compares them after migrating), and the
markers on a field say how the store treats it: `CLEANED` text goes through `privacy` before
it is written, `INDEXED` text is in the kind's FTS5 table, `CUT` values are cut to the store's
size limits after cleaning. Everything else derives from these classes: the store's insert and
cleaning (`store.write`), the API's response records (`worker.schemas`, and so the OpenAPI
document), the export format (`transfer.records`), and the compressor's drafts, which are the
part of an observation or summary a provider writes.

Adding a field is one line here plus a migration that adds the column; adding a kind is one
Struct with a `table` and a migration that creates the table.
"""

from __future__ import annotations

import enum
import functools
import typing
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

import msgspec

from claude_mem.vocabulary import ObservationSource


class Flag(enum.Enum):
    CLEANED = "cleaned"  # privacy-cleaned (tags stripped, secrets redacted) before it is stored
    INDEXED = "indexed"  # a column of the kind's full-text table
    CUT = "cut"  # cut to the store's size limits, after cleaning


CLEANED, INDEXED, CUT = Flag.CLEANED, Flag.INDEXED, Flag.CUT

Text = Annotated[str, CLEANED]
OptionalText = Annotated[str | None, CLEANED]
Searchable = Annotated[str, CLEANED, INDEXED]
WholeText = Annotated[str, CLEANED, INDEXED, CUT]  # kept whole within a generous bound
SearchableList = Annotated[list[str], CLEANED, INDEXED]
SessionStatus = Literal["active", "completed", "failed"]


class Record(msgspec.Struct, kw_only=True):
    """A row of `table`. A kind's `id` is 0 until the store assigns one, and a time of 0
    means the moment the store writes the record."""

    table: ClassVar[str]


class ObservationDraft(msgspec.Struct, kw_only=True):
    """The part of an observation a compressor writes (file lists come from the tool events)."""

    type: Text
    title: WholeText = ""
    subtitle: Searchable = ""
    narrative: WholeText = ""
    facts: SearchableList = []
    concepts: SearchableList = []


class Observation(ObservationDraft, Record, kw_only=True):
    """A compressed, typed memory."""

    table: ClassVar[str] = "observations"
    id: int = 0
    session_id: int
    project: Text
    files_read: SearchableList = []
    files_modified: SearchableList = []
    prompt_number: int | None = None
    discovery_tokens: int = 0
    content_hash: str = ""  # derived by the store: one memory per session and content
    agent_type: OptionalText = None
    agent_id: OptionalText = None
    generated_by: str | None = None
    source: ObservationSource = "hooks"
    created_at: int = 0
    superseded_by: int | None = None  # the newer observation that replaced this one
    # When it held: from its time (`created_at`, when it was agreed) until the time of the one
    # that superseded it (None while current), set with `superseded_by` (store/schema.py).
    valid_from: int = 0
    valid_to: int | None = None
    author: str | None = None  # a teammate's row: the member who wrote it (team/sync.py)
    origin_id: str | None = None  # a teammate's row: its id on the team server


class SummaryDraft(msgspec.Struct, kw_only=True):
    """The part of a session summary a compressor writes."""

    request: Searchable = ""
    investigated: Searchable = ""
    learned: Searchable = ""
    completed: Searchable = ""
    next_steps: Searchable = ""
    notes: Searchable = ""


class Summary(SummaryDraft, Record, kw_only=True):
    """What a session asked for, learned, finished and left to do."""

    table: ClassVar[str] = "session_summaries"
    id: int = 0
    session_id: int
    project: Text
    prompt_number: int | None = None
    discovery_tokens: int = 0
    generated_by: str | None = None
    created_at: int = 0
    author: str | None = None  # a teammate's row: the member who wrote it (team/sync.py)
    origin_id: str | None = None  # a teammate's row: its id on the team server


class Prompt(Record, kw_only=True):
    """A numbered user prompt; an entirely private one keeps its number with no text."""

    table: ClassVar[str] = "user_prompts"
    id: int = 0
    session_id: int
    prompt_number: int = 0
    text: Searchable = ""
    is_private: int = 0
    created_at: int = 0


class Session(Record, kw_only=True):
    """An agent session, unique per platform and host session id."""

    table: ClassVar[str] = "sessions"
    id: int = 0
    platform: str  # identifiers as the agent sent them, never cleaned
    host_session_id: str
    project: Text
    cwd: OptionalText = None
    status: SessionStatus = "active"
    first_prompt: OptionalText = None
    prompt_count: int = 0
    started_at: int = 0
    updated_at: int = 0
    ended_at: int | None = None
    end_reason: OptionalText = None
    transcript_path: str | None = None  # the host's transcript, as the hooks reported it
    transcript_offset: int = 0  # bytes of it already turned into units
    transcript_turn: int = 0  # the prompt turn whose words that offset ends
    closed_turn: int = 0  # the newest prompt number whose turn ended (the agent's Stop)
    recovered_offset: int = 0  # bytes of the transcript checked for events the hooks missed
    recovered_turn: int = 0  # the prompt turn in effect at that offset


class ToolUse(Record, kw_only=True):
    """A raw tool event, unique per (session, tool_use_id), kept to replay a compression."""

    table: ClassVar[str] = "tool_uses"
    id: int = 0
    session_id: int
    tool_use_id: str
    tool_name: Text
    tool_input: Annotated[Any, CLEANED, CUT] = None
    tool_response: Annotated[Any, CLEANED, CUT] = None
    cwd: OptionalText = None
    prompt_number: int | None = None
    agent_type: OptionalText = None
    agent_id: OptionalText = None
    observation_id: int | None = None
    created_at: int = 0


KINDS: tuple[type[Record], ...] = (Observation, Summary, Prompt, Session, ToolUse)

Shape = Literal["text", "optional_text", "list", "json", "plain"]


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    shape: Shape  # how the store writes it: text, text or NULL, JSON array, JSON value, as is
    flags: frozenset[Flag]


def _shape(hint: Any) -> Shape:
    if hint is str:
        return "text"
    if hint == str | None:
        return "optional_text"
    if typing.get_origin(hint) is list:
        return "list"
    if hint is Any:
        return "json"
    return "plain"


@functools.cache
def columns(kind: type[Record]) -> tuple[Column, ...]:
    """The kind's columns with their markers, in field order (read once per kind)."""
    hints = typing.get_type_hints(kind, include_extras=True)
    found = []
    for name in kind.__struct_fields__:
        hint, flags = hints[name], frozenset[Flag]()
        if typing.get_origin(hint) is Annotated:
            hint, *extras = typing.get_args(hint)
            flags = frozenset(e for e in extras if isinstance(e, Flag))
        found.append(Column(name, _shape(hint), flags))
    return tuple(found)


def indexed(kind: type[Record]) -> tuple[str, ...]:
    """The kind's full-text columns."""
    return tuple(c.name for c in columns(kind) if INDEXED in c.flags)
