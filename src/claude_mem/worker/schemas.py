"""Shapes of the records the API returns (one Struct per table row kind)."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

import msgspec

Limit = Annotated[int, msgspec.Meta(ge=1, le=100)]
Offset = Annotated[int, msgspec.Meta(ge=0, le=10_000_000)]
T = TypeVar("T")


class Observation(msgspec.Struct, kw_only=True):
    id: int
    session_id: int
    project: str
    type: str
    title: str
    subtitle: str
    narrative: str
    facts: list[str]
    concepts: list[str]
    files_read: list[str]
    files_modified: list[str]
    prompt_number: int | None
    discovery_tokens: int
    content_hash: str
    agent_type: str | None
    agent_id: str | None
    generated_by: str | None
    created_at: int


class Summary(msgspec.Struct, kw_only=True):
    id: int
    session_id: int
    project: str
    request: str
    investigated: str
    learned: str
    completed: str
    next_steps: str
    notes: str
    prompt_number: int | None
    discovery_tokens: int
    generated_by: str | None
    created_at: int


class Prompt(msgspec.Struct, kw_only=True):
    id: int
    session_id: int
    prompt_number: int
    text: str
    is_private: int
    created_at: int
    project: str | None = None
    platform: str | None = None


class Session(msgspec.Struct, kw_only=True):
    id: int
    platform: str
    host_session_id: str
    project: str
    cwd: str | None
    status: str
    first_prompt: str | None
    prompt_count: int
    started_at: int
    updated_at: int
    ended_at: int | None
    end_reason: str | None


def records(kind: type[T], rows: list[dict[str, Any]]) -> list[T]:
    """Rows as API records; columns the record doesn't declare (e.g. scores) are dropped."""
    return [msgspec.convert(row, kind, from_attributes=False) for row in rows]
