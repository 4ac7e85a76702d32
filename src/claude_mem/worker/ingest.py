"""What happens to each hook event on arrival: skip rules, then a durable write, then a
broadcast. Every accepted event is committed before the HTTP answer goes out."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import msgspec

from claude_mem import log, paths
from claude_mem.control import capture_blocked
from claude_mem.privacy import is_protocol_payload, strip_tags
from claude_mem.project import ProjectIdentity, resolve_project
from claude_mem.records import ToolUse as StoredToolUse
from claude_mem.settings import Settings
from claude_mem.store import Database
from claude_mem.store import queue as queue_store
from claude_mem.store.db import NON_BLOCKING, WouldBlock
from claude_mem.store.sessions import (
    add_prompt,
    close_turn,
    complete_session,
    ensure_session,
    ensure_session_turn,
    find_session,
    prompt_is_private,
)
from claude_mem.store.summaries import summarized
from claude_mem.store.tool_uses import record_tool_use
from claude_mem.worker.stream import Broadcaster

DUPLICATE_PROMPT_WINDOW_MS = 10_000
PROJECT_CACHE_S = 5.0
PROJECT_CACHE_SIZE = 256
MEDIA_PROMPT = "[media prompt]"


class SessionInit(msgspec.Struct, kw_only=True):
    host_session_id: str
    platform: str = "claude-code"
    cwd: str | None = None
    transcript_path: str | None = None
    prompt: str | None = None


class ToolEvent(msgspec.Struct, kw_only=True):
    host_session_id: str
    tool_name: str
    platform: str = "claude-code"
    cwd: str | None = None
    tool_input: Any = None
    tool_response: Any = None
    tool_use_id: str | None = None
    agent_id: str | None = None
    agent_type: str | None = None
    transcript_path: str | None = None


class SummaryRequest(msgspec.Struct, kw_only=True):
    host_session_id: str
    platform: str = "claude-code"
    cwd: str | None = None
    transcript_path: str | None = None
    last_assistant_message: str | None = None
    agent_id: str | None = None


class SessionEnd(msgspec.Struct, kw_only=True):
    host_session_id: str
    platform: str = "claude-code"
    reason: str | None = None


class IngestResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """status: recorded | queued | duplicate | skipped | completed."""

    status: str
    reason: str | None = None
    session_id: int | None = None
    prompt_number: int | None = None
    project: str | None = None
    queue_id: int | None = None
    tool_use_row_id: int | None = None


class Ingest:
    """The ingest rules, shared by the HTTP routes (and, later, any other intake)."""

    def __init__(
        self,
        db: Database,
        settings: Callable[[], Settings],
        stream: Broadcaster,
        on_queue_change: Callable[[], None] = lambda: None,
        *,
        on_session_started: Callable[[ProjectIdentity], None] = lambda project: None,
    ) -> None:
        self.db, self.settings_of, self.stream = db, settings, stream
        self.on_queue_change = on_queue_change
        self.on_session_started = on_session_started
        self._projects: dict[tuple[str | None, str], tuple[float, ProjectIdentity]] = {}
        self._data_dir = str(paths.data_dir())
        # Called with (platform, host session id) before any event of that session is taken:
        # the worker's recovery (worker/recovery.py) brings the session up to date first.
        self.gate: Callable[[str, str], None] = lambda platform, host_session_id: None

    @property
    def settings(self) -> Settings:
        return self.settings_of()

    def _project(self, cwd: str | None, settings: Settings) -> ProjectIdentity:
        """Resolve, remembering each cwd briefly: events arrive in bursts from one folder, and a
        new ignore file or exclusion still takes effect within seconds."""
        excluded = settings.get_str("CLAUDE_MEM_EXCLUDED_PROJECTS")
        key = (cwd, excluded)
        now = time.monotonic()
        cached = self._projects.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        if NON_BLOCKING.get():  # resolving may run git: not on the event loop
            raise WouldBlock("project not resolved yet")
        identity = resolve_project(cwd, excluded=excluded)
        if cwd and _inside(cwd, self._data_dir):
            # Our own observer's sessions (and anything else in the data dir) are never memory.
            identity = replace(identity, excluded=True, excluded_reason="claude-mem data dir")
        if len(self._projects) >= PROJECT_CACHE_SIZE:
            self._projects.clear()
        self._projects[key] = (now + PROJECT_CACHE_S, identity)
        return identity

    def _admit(
        self, event: SessionInit | ToolEvent | SummaryRequest
    ) -> ProjectIdentity | IngestResult:
        """The event's project, or the skip answer when memory must not take the event: an
        internal protocol prompt, a subagent's summary, an excluded project, recall-only mode
        or a pause, a tool the user skips. (A private turn is judged in the write itself.)"""
        _check_ids(event.host_session_id, event.platform)
        if isinstance(event, SessionInit) and is_protocol_payload(_prompt_text(event)):
            return IngestResult(status="skipped", reason="internal_protocol")
        if isinstance(event, SummaryRequest) and event.agent_id:
            return IngestResult(status="skipped", reason="subagent")
        if isinstance(event, ToolEvent) and not event.tool_name.strip():
            raise ValueError("tool_name must not be empty")
        settings = self.settings  # one look at settings.json per event
        project = self._project(event.cwd, settings)
        mode = settings.get_str("CLAUDE_MEM_MODE")
        reason = (
            "project_excluded" if project.excluded
            else capture_blocked(mode, event.host_session_id)
        )  # fmt: skip
        if (
            reason is None
            and isinstance(event, ToolEvent)
            and event.tool_name in settings.get_list("CLAUDE_MEM_SKIP_TOOLS")
        ):
            reason = "tool_excluded"
        if reason is not None:
            return IngestResult(status="skipped", reason=reason, project=project.name)
        return project

    @property
    def _redact(self) -> bool:
        return self.db.redact_secrets

    def session_init(self, event: SessionInit, *, at: int | None = None) -> IngestResult:
        """`at`: when the hook fired, for an event delivered late (the spool)."""
        self.gate(event.platform, event.host_session_id)
        project = self._admit(event)
        if isinstance(project, IngestResult):
            return project
        now = at or _now()
        with self.db.write() as conn:
            existing = find_session(conn, event.platform, event.host_session_id)
            sid = ensure_session(
                conn,
                platform=event.platform,
                host_session_id=event.host_session_id,
                project=project.name,
                cwd=event.cwd,
                transcript_path=event.transcript_path,
                redact=self._redact,
                now=now,
            )
            result = add_prompt(conn, sid, _prompt_text(event), redact=self._redact, now=now,
                                duplicate_within_ms=DUPLICATE_PROMPT_WINDOW_MS)  # fmt: skip
        unstored = IngestResult(
            status="skipped", session_id=sid, prompt_number=result.prompt_number,
            project=project.name,
        )  # fmt: skip
        if result.duplicate:
            window = DUPLICATE_PROMPT_WINDOW_MS // 1000
            return msgspec.structs.replace(
                unstored, status="duplicate", reason=f"same prompt within {window} s"
            )
        if existing is None:
            self.stream.publish("session_started", session_id=sid, project=project.name)
            self.on_session_started(project)
        if result.private:
            return msgspec.structs.replace(unstored, reason="private")
        self.stream.publish(
            "new_prompt",
            prompt={
                "id": result.prompt_id,
                "session_id": sid,
                "project": project.name,
                "platform": event.platform,
                "prompt_number": result.prompt_number,
                "text": result.text,
                "created_at": now,
            },
        )
        return IngestResult(
            status="recorded",
            session_id=sid,
            prompt_number=result.prompt_number,
            project=project.name,
        )

    def observation(
        self, event: ToolEvent, *, turn: int | None = None, replay: bool = False
    ) -> IngestResult:
        """`turn`: the prompt turn the event belongs to, when it is not the current one (an
        event recovered from the transcript). `replay`: a late copy of an event that may have
        arrived (the spool): one already stored is not queued again."""
        self.gate(event.platform, event.host_session_id)
        project = self._admit(event)
        if isinstance(project, IngestResult):
            return project
        tool_use_id = event.tool_use_id or _synthetic_id(event)
        with self.db.write() as conn:
            sid, prompt_number, private = _current_turn(
                conn, event, project.name, self._redact, turn
            )
            if private:
                return IngestResult(status="skipped", reason="private", session_id=sid)
            row_id, created = record_tool_use(
                conn,
                StoredToolUse(
                    session_id=sid,
                    tool_use_id=tool_use_id,
                    tool_name=event.tool_name,
                    tool_input=event.tool_input,
                    tool_response=event.tool_response,
                    cwd=event.cwd,
                    prompt_number=prompt_number or None,
                    agent_type=event.agent_type,
                    agent_id=event.agent_id,
                ),
                redact=self._redact,
            )
            if replay and not created:
                return IngestResult(status="duplicate", session_id=sid, project=project.name,
                                    tool_use_row_id=row_id)  # fmt: skip
            queue_id, _ = queue_store.enqueue(
                conn,
                sid,
                "observation",
                {"tool_use_row_id": row_id, "prompt_number": prompt_number},
                dedup_key=tool_use_id,
                redact=self._redact,
            )
        if created:
            self.stream.publish("observation_queued", session_id=sid, queue_id=queue_id)
            self.on_queue_change()
        return IngestResult(
            status="queued" if created else "duplicate",
            session_id=sid,
            project=project.name,
            queue_id=queue_id,
            tool_use_row_id=row_id,
        )

    def summarize(self, event: SummaryRequest) -> IngestResult:
        self.gate(event.platform, event.host_session_id)
        project = self._admit(event)
        if isinstance(project, IngestResult):
            return project
        message = event.last_assistant_message or ""
        with self.db.write() as conn:
            sid, prompt_number, private = _current_turn(conn, event, project.name, self._redact)
            close_turn(conn, sid, prompt_number)  # the turn's events compress as a whole now
            if private:
                return IngestResult(status="skipped", reason="private", session_id=sid)
            if not strip_tags(message):  # nothing, or nothing but private parts
                return IngestResult(status="skipped", reason="empty", session_id=sid)
            if summarized(conn, sid, prompt_number):
                return IngestResult(status="duplicate", session_id=sid, project=project.name)
            queue_id, created = queue_store.enqueue(
                conn,
                sid,
                "summary",
                {"last_assistant_message": message, "prompt_number": prompt_number},
                dedup_key=f"prompt-{prompt_number}",
                redact=self._redact,
            )
        if created:
            self.on_queue_change()
        return IngestResult(
            status="queued" if created else "duplicate",
            session_id=sid,
            project=project.name,
            queue_id=queue_id,
        )

    def end(self, event: SessionEnd) -> IngestResult | None:
        """Mark the session completed; None when the session was never seen."""
        self.gate(event.platform, event.host_session_id)
        with self.db.write() as conn:
            sid = find_session(conn, event.platform, event.host_session_id)
            if sid is None:
                return None
            complete_session(conn, sid, reason=event.reason or "")
        self.stream.publish("session_completed", session_id=sid)
        log.info("worker", "session completed", session_id=sid, reason=event.reason or "")
        return IngestResult(status="completed", session_id=sid)


def _current_turn(
    conn: sqlite3.Connection,
    event: ToolEvent | SummaryRequest,
    project: str,
    redact: bool,
    turn: int | None = None,
) -> tuple[int, int, bool]:
    """(session id, prompt number, whether that prompt was private) for an event: the current
    prompt's, or `turn`'s when given.

    The session is created if this is its first event (memory installed mid-session).
    """
    sid, number, private = ensure_session_turn(
        conn,
        platform=event.platform,
        host_session_id=event.host_session_id,
        project=project,
        cwd=event.cwd,
        transcript_path=event.transcript_path,
        redact=redact,
    )
    if turn is None or turn == number:
        return sid, number, private
    return sid, turn, bool(turn) and prompt_is_private(conn, sid, turn)


def _prompt_text(event: SessionInit) -> str:
    return event.prompt if event.prompt and event.prompt.strip() else MEDIA_PROMPT


def _inside(path: str, folder: str) -> bool:
    resolved = os.path.abspath(os.path.expanduser(path))
    return resolved == folder or resolved.startswith(folder.rstrip("/") + "/")


def _check_ids(host_session_id: str, platform: str) -> None:
    if not host_session_id.strip() or len(host_session_id) > 512:
        raise ValueError("host_session_id must be 1-512 characters")
    if not platform.strip() or len(platform) > 64:
        raise ValueError("platform must be 1-64 characters")


def _synthetic_id(event: ToolEvent) -> str:
    """A stable id for hosts that send none, so a re-sent event is still recognised."""
    material = json.dumps(
        [event.tool_name, event.tool_input, event.tool_response], sort_keys=True, default=str
    )
    return "sha-" + hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _now() -> int:
    return int(time.time() * 1000)
