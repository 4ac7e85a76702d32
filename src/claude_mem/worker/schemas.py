"""The API's paging parameters and its records: each kind's own declaration
(`claude_mem.records`), a prompt with its session's project and platform joined in."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

import msgspec

from claude_mem.records import Prompt as PromptRow

Limit = Annotated[int, msgspec.Meta(ge=1, le=100)]
Offset = Annotated[int, msgspec.Meta(ge=0, le=10_000_000)]
T = TypeVar("T")


class Prompt(PromptRow, kw_only=True):
    """A prompt as the API returns it: the row and its session's project and platform."""

    project: str | None = None
    platform: str | None = None


def records(kind: type[T], rows: list[dict[str, Any]]) -> list[T]:
    """Rows as API records; columns the record doesn't declare (e.g. scores) are dropped."""
    return [msgspec.convert(row, kind, from_attributes=False) for row in rows]
