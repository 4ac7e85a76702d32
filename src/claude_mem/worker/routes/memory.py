"""Explicit memories: text an agent (or person) asks to keep, stored as an observation.

Each project's manual memories live in one session (platform `manual`), so they show up in
search, timelines and context like any other observation. The store privacy-cleans every
field; text that was private as a whole is refused rather than stored empty.
"""

from __future__ import annotations

import sqlite3
from typing import Annotated

import msgspec

from claude_mem import log
from claude_mem.privacy import clean_text
from claude_mem.project import UNKNOWN_PROJECT, resolve_project
from claude_mem.records import Observation
from claude_mem.store.limits import RECORD_TEXT_CHARS
from claude_mem.store.observations import get_observation, insert_observation
from claude_mem.store.sessions import ensure_session
from claude_mem.vocabulary import DEFAULT_TYPE, ObservationType
from claude_mem.worker.api import ApiError, Call, Endpoint

MANUAL_PLATFORM = "manual"
MAX_TEXT = RECORD_TEXT_CHARS  # stored whole
TITLE_CHARS = 80

Concept = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class MemoryBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_TEXT)]
    title: Annotated[str, msgspec.Meta(max_length=300)] | None = None
    type: ObservationType = DEFAULT_TYPE
    concepts: Annotated[list[Concept], msgspec.Meta(max_length=20)] = []
    project: Annotated[str, msgspec.Meta(min_length=1, max_length=300)] | None = None
    cwd: Annotated[str, msgspec.Meta(max_length=4096)] | None = None


class SavedMemory(msgspec.Struct):
    id: int
    created: bool  # False: the same memory was already stored (its id is returned)
    project: str
    session_id: int
    title: str


def _project(call: Call, body: MemoryBody) -> str:
    if body.project is not None and body.project.strip():
        return body.project.strip()
    if body.cwd is None or not body.cwd.strip():
        return UNKNOWN_PROJECT
    excluded = call.state.settings.get_str("CLAUDE_MEM_EXCLUDED_PROJECTS")
    try:
        identity = resolve_project(body.cwd, excluded=excluded)
    except (OSError, ValueError) as exc:
        raise ApiError(400, f"cannot resolve a project from cwd: {exc}", "invalid_body") from None
    if identity.excluded:
        raise ApiError(
            400, f"project {identity.name!r} is excluded from memory", "project_excluded"
        )
    return identity.name


def _title(title: str | None, text: str, redact: bool) -> str:
    """The given title, else the memory's first line cut to a readable length."""
    chosen = clean_text(title or "", redact=redact)
    if chosen:
        return chosen
    first = text.splitlines()[0].strip()
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1].rstrip() + "…"


def save_memory(call: Call) -> SavedMemory:
    body: MemoryBody = call.body
    db = call.state.db
    assert db is not None
    text = clean_text(body.text, redact=db.redact_secrets)
    if not text:
        raise ApiError(400, "nothing to store: the text is empty once private parts are removed",
                       "empty_memory")  # fmt: skip
    project = _project(call, body)
    title = _title(body.title, text, db.redact_secrets)
    try:
        with db.write() as conn:
            session_id = ensure_session(
                conn, platform=MANUAL_PLATFORM, host_session_id=f"manual:{project}",
                project=project,
            )  # fmt: skip
            obs_id, created = insert_observation(
                conn,
                Observation(
                    session_id=session_id, project=project, type=body.type, title=title,
                    narrative=text, concepts=list(body.concepts), generated_by=MANUAL_PLATFORM,
                    source="manual",
                ),
                redact=db.redact_secrets,
            )  # fmt: skip
            row = get_observation(conn, obs_id) if created else None
    except sqlite3.Error as exc:
        log.error("memory", "saving a memory failed", error=str(exc))
        raise ApiError(503, f"the database refused the write: {exc}", "store_error") from None
    if row is not None:
        call.state.stream.publish("new_observation", observation=row)
    log.info("memory", "memory saved", id=obs_id, project=project, created=created)
    return SavedMemory(obs_id, created, project, session_id, title)


ENDPOINTS = [
    Endpoint("POST", "/api/memory", save_memory,
             "Store an explicit memory as an observation in the project's manual session",
             "data", body=MemoryBody, response=SavedMemory, errors=(400, 503)),
]  # fmt: skip
