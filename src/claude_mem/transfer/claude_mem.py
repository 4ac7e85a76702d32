"""`claude-mem import --from-claude-mem [PATH]`: memory from the original claude-mem's database.

The source (default `~/.claude-mem/claude-mem.db`, schema of claude-mem 13.x) is opened
read-only through a `mode=ro` URI, so it is never modified. Its rows become export records
and go through the same `apply` step as a JSONL import: natural keys (importing twice adds
nothing), privacy cleaning again on the way in, ids mapped.

Field mapping:
- `sdk_sessions` → sessions: `platform_source` → platform (claude → claude-code, gemini →
  gemini-cli), `content_session_id` → host session id, `user_prompt` → first prompt,
  `started_at_epoch`/`completed_at_epoch` → start/end. Manual-memory sessions
  (`manual-content-<project>`) join our own manual session of that project.
- `user_prompts` → prompts (session by `session_db_id`, else by `content_session_id`).
- `observations` → observations (session by `memory_session_id`); legacy `text` fills an
  empty narrative; `generated_by_model` → generated_by; source `import`; JSON list columns
  parsed leniently.
- `session_summaries` → summaries; legacy `files_read`/`files_edited` are kept as lines
  of `notes` (our summaries have no file columns).
- projects are kept, or renamed by `--map-project OLD=NEW`.
Not carried over: cloud-sync columns, `custom_title`, `relevance_count`, `metadata`.

New rows have no vectors yet: the worker's embedder finds rows without one (it polls the
store every couple of seconds), so they are embedded in the background as soon as a worker
runs.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from claude_mem.store.db import Database
from claude_mem.transfer.apply import ImportStats, apply
from claude_mem.transfer.records import (
    ObservationRecord,
    PromptRecord,
    Record,
    SessionRecord,
    SessionStatus,
    SummaryRecord,
)

DEFAULT_PATH = "~/.claude-mem/claude-mem.db"
PLATFORMS = {"claude": "claude-code", "gemini": "gemini-cli"}
MANUAL_PREFIX = "manual-content-"
REQUIRED_TABLES = ("sdk_sessions", "observations", "session_summaries", "user_prompts")


class SourceError(ValueError):
    """The source is missing or is not a claude-mem database; the message says which."""


def open_readonly(path: Path) -> sqlite3.Connection:
    """The source database, read-only, checked to be a claude-mem database."""
    if not path.is_file():
        raise SourceError(f"{path}: no such file (the original claude-mem keeps {DEFAULT_PATH})")
    uri = f"{path.absolute().as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        conn.row_factory = sqlite3.Row
        found = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        raise SourceError(f"{path}: not a readable SQLite database ({exc})") from None
    missing = [table for table in REQUIRED_TABLES if table not in found]
    if missing:
        conn.close()
        raise SourceError(f"{path}: not a claude-mem database (no {', '.join(missing)} table)")
    return conn


def _list(raw: object) -> list[str]:
    """A JSON list column as strings; anything else as one item or none."""
    if raw is None or raw == "":
        return []
    try:
        value = json.loads(str(raw))
    except ValueError:
        return [str(raw)]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [str(value)] if str(value).strip() else []


def _ms(row: sqlite3.Row, column: str) -> int | None:
    value = row[column]
    return int(value) if isinstance(value, int | float) else None


class _Reader:
    def __init__(self, conn: sqlite3.Connection, projects: Mapping[str, str]) -> None:
        self.conn, self.projects = conn, projects
        columns = {r[1] for r in conn.execute("PRAGMA table_info(sdk_sessions)")}
        self.has_platform = "platform_source" in columns

    def project(self, name: object) -> str:
        text = str(name or "")
        return self.projects.get(text, text)

    def counts(self) -> int:
        return sum(
            int(self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in REQUIRED_TABLES
        )

    def sessions(self) -> Iterator[Record]:
        for row in self.conn.execute("SELECT * FROM sdk_sessions ORDER BY id"):
            host = str(row["content_session_id"])
            project = self.project(row["project"])
            platform = str(row["platform_source"] or "claude") if self.has_platform else "claude"
            platform = PLATFORMS.get(platform, platform)
            if host.startswith(MANUAL_PREFIX):
                platform, host = "manual", f"manual:{project}"
            started = _ms(row, "started_at_epoch") or 0
            ended = _ms(row, "completed_at_epoch")
            status: SessionStatus = (
                row["status"] if row["status"] in ("active", "completed", "failed") else "completed"
            )
            yield SessionRecord(
                id=row["id"], platform=platform, host_session_id=host, project=project,
                status=status, first_prompt=row["user_prompt"], started_at=started,
                updated_at=ended or started, ended_at=ended,
            )  # fmt: skip

    def prompts(self) -> Iterator[Record]:
        rows = self.conn.execute(
            """SELECT p.*, COALESCE(p.session_db_id, s.id) AS sid FROM user_prompts p
               LEFT JOIN sdk_sessions s ON s.content_session_id = p.content_session_id
                    AND p.session_db_id IS NULL
               ORDER BY p.id"""
        )
        for row in rows:
            if row["sid"] is None:
                continue
            yield PromptRecord(
                id=row["id"], session_id=row["sid"], prompt_number=row["prompt_number"],
                text=row["prompt_text"] or "", created_at=_ms(row, "created_at_epoch") or 0,
            )  # fmt: skip

    def _by_memory_session(self, table: str) -> Iterator[sqlite3.Row]:
        yield from self.conn.execute(
            f"""SELECT t.*, s.id AS sid FROM {table} t
                JOIN sdk_sessions s ON s.memory_session_id = t.memory_session_id ORDER BY t.id"""
        )

    def observations(self) -> Iterator[Record]:
        for row in self._by_memory_session("observations"):
            yield ObservationRecord(
                id=row["id"], session_id=row["sid"], project=self.project(row["project"]),
                type=row["type"] or "discovery", title=row["title"] or "",
                subtitle=row["subtitle"] or "", narrative=row["narrative"] or row["text"] or "",
                facts=_list(row["facts"]), concepts=_list(row["concepts"]),
                files_read=_list(row["files_read"]), files_modified=_list(row["files_modified"]),
                prompt_number=row["prompt_number"], discovery_tokens=row["discovery_tokens"] or 0,
                agent_type=row["agent_type"], agent_id=row["agent_id"],
                generated_by=row["generated_by_model"], source="import",
                created_at=_ms(row, "created_at_epoch") or 0,
            )  # fmt: skip

    def summaries(self) -> Iterator[Record]:
        for row in self._by_memory_session("session_summaries"):
            notes = [row["notes"] or ""]
            for label, column in (("Files read", "files_read"), ("Files edited", "files_edited")):
                files = _list(row[column])
                if files:
                    notes.append(f"{label}: {', '.join(files)}")
            yield SummaryRecord(
                id=row["id"], session_id=row["sid"], project=self.project(row["project"]),
                request=row["request"] or "", investigated=row["investigated"] or "",
                learned=row["learned"] or "", completed=row["completed"] or "",
                next_steps=row["next_steps"] or "", notes="\n".join(n for n in notes if n),
                prompt_number=row["prompt_number"], discovery_tokens=row["discovery_tokens"] or 0,
                created_at=_ms(row, "created_at_epoch") or 0,
            )  # fmt: skip


def import_database(
    db: Database,
    source: Path,
    *,
    projects: Mapping[str, str] | None = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
) -> ImportStats:
    """Import everything in the claude-mem database at `source` (see the module docstring)."""
    conn = open_readonly(source.expanduser())
    try:
        reader = _Reader(conn, projects or {})
        if on_total is not None:
            on_total(reader.counts())

        def records() -> Iterator[Any]:
            yield from reader.sessions()
            yield from reader.prompts()
            yield from reader.observations()
            yield from reader.summaries()

        return apply(db, records(), progress=progress)
    finally:
        conn.close()


def parse_project_map(pairs: list[str]) -> dict[str, str]:
    """`OLD=NEW` pairs as a dict; ValueError naming a malformed one."""
    found: dict[str, str] = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise ValueError(f"--map-project {pair!r}: use OLD=NEW")
        found[old.strip()] = new.strip()
    return found
