"""The export format: JSON Lines, a versioned header line, then one record per line.

    {"format": "claude-mem-py/export", "version": 1, "exported_at": …, "projects": […],
     "counts": {"session": n, "prompt": n, "observation": n, "summary": n}}
    {"kind": "session", "id": 3, "platform": "claude-code", "host_session_id": "…", …}
    {"kind": "prompt", "id": 9, "session_id": 3, "prompt_number": 1, …}
    {"kind": "observation", …}   {"kind": "summary", …}

Sessions come before the records that refer to them by `session_id` (the id in the source
database; the importer maps it to the id in its own). Times are epoch milliseconds.
A reader accepts its own version and older ones, and refuses newer ones by name.
"""

from __future__ import annotations

from typing import Literal

import msgspec

FORMAT = "claude-mem-py/export"
VERSION = 1
KINDS = ("session", "prompt", "observation", "summary")
PLURAL = {"session": "sessions", "prompt": "prompts", "observation": "observations",
          "summary": "summaries"}  # fmt: skip
SessionStatus = Literal["active", "completed", "failed"]


class Header(msgspec.Struct, kw_only=True):
    format: str
    version: int
    exported_at: int = 0
    projects: list[str] = []
    counts: dict[str, int] = {}


class SessionRecord(msgspec.Struct, kw_only=True, tag_field="kind", tag="session"):
    id: int
    platform: str
    host_session_id: str
    project: str
    cwd: str | None = None
    status: SessionStatus = "completed"
    first_prompt: str | None = None
    started_at: int
    updated_at: int
    ended_at: int | None = None
    end_reason: str | None = None


class PromptRecord(msgspec.Struct, kw_only=True, tag_field="kind", tag="prompt"):
    id: int
    session_id: int
    prompt_number: int
    text: str
    is_private: bool = False
    created_at: int


class ObservationRecord(msgspec.Struct, kw_only=True, tag_field="kind", tag="observation"):
    id: int
    session_id: int
    project: str
    type: str
    title: str = ""
    subtitle: str = ""
    narrative: str = ""
    facts: list[str] = []
    concepts: list[str] = []
    files_read: list[str] = []
    files_modified: list[str] = []
    prompt_number: int | None = None
    discovery_tokens: int = 0
    agent_type: str | None = None
    agent_id: str | None = None
    generated_by: str | None = None
    created_at: int


class SummaryRecord(msgspec.Struct, kw_only=True, tag_field="kind", tag="summary"):
    id: int
    session_id: int
    project: str
    request: str = ""
    investigated: str = ""
    learned: str = ""
    completed: str = ""
    next_steps: str = ""
    notes: str = ""
    prompt_number: int | None = None
    discovery_tokens: int = 0
    generated_by: str | None = None
    created_at: int


Record = SessionRecord | PromptRecord | ObservationRecord | SummaryRecord
