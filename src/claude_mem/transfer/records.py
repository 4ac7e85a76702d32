"""The export format: JSON Lines, a versioned header line, then one record per line.

    {"format": "claude-mem-py/export", "version": 1, "exported_at": …, "projects": […],
     "counts": {"session": n, "prompt": n, "observation": n, "summary": n}}
    {"kind": "session", "id": 3, "platform": "claude-code", "host_session_id": "…", …}
    {"kind": "prompt", "id": 9, "session_id": 3, "prompt_number": 1, …}
    {"kind": "observation", …}   {"kind": "summary", …}

Sessions come before the records that refer to them by `session_id` (the id in the source
database; the importer maps it to the id in its own). Times are epoch milliseconds.
A reader accepts its own version and older ones, and refuses newer ones by name; fields it
doesn't know are ignored, fields an older export lacks take their defaults. An observation's
`source` (hooks, transcript, import, git) is imported as exported, so a copy says how the work
was first captured; an export without it imports as `import`. An observation's
`superseded_by` is the source id of the observation that replaced it; the importer maps it
to its own id, and drops a link to an observation the input does not hold (an export
without the field imports every observation as current). Its `valid_from` (when it was
agreed; an older export's rows: their `created_at`) is imported as exported, and its
`valid_to` is set again with the link, from the successor's `valid_from`.
"""

from __future__ import annotations

import msgspec

from claude_mem import records
from claude_mem.vocabulary import ObservationSource

FORMAT = "claude-mem-py/export"
VERSION = 1
KINDS = ("session", "prompt", "observation", "summary")
SessionStatus = records.SessionStatus


class Header(msgspec.Struct, kw_only=True):
    format: str
    version: int
    exported_at: int = 0
    projects: list[str] = []
    counts: dict[str, int] = {}


# Each record is its kind's declaration (`claude_mem.records`) tagged with its kind. What an
# import must carry is redeclared as required: the source `id` (records refer to sessions by
# it) and the times. Columns the store derives (`content_hash`, `prompt_count`) are written
# for reference and recomputed on import.


class SessionRecord(records.Session, kw_only=True, tag_field="kind", tag="session"):
    id: int
    status: SessionStatus = "completed"
    started_at: int
    updated_at: int


class PromptRecord(records.Prompt, kw_only=True, tag_field="kind", tag="prompt"):
    id: int
    prompt_number: int
    text: records.Searchable
    is_private: bool = False
    created_at: int


class ObservationRecord(records.Observation, kw_only=True, tag_field="kind", tag="observation"):
    id: int
    source: ObservationSource = "import"  # kept as exported; an older export's rows: import
    created_at: int


class SummaryRecord(records.Summary, kw_only=True, tag_field="kind", tag="summary"):
    id: int
    created_at: int


Record = SessionRecord | PromptRecord | ObservationRecord | SummaryRecord
