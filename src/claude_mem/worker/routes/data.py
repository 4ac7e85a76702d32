"""Reading and forgetting memory: pages of each record kind, single records, deletes, stats."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import msgspec

from claude_mem.records import Observation, Session, Summary
from claude_mem.store import stats
from claude_mem.store.forget import forget_project
from claude_mem.store.observations import (
    delete_observation,
    get_observation,
    get_observations,
    list_observations,
    observations_by_file,
)
from claude_mem.store.rows import of_session
from claude_mem.store.sessions import delete_session, get_session, list_prompts, list_sessions
from claude_mem.store.summaries import list_summaries
from claude_mem.worker.api import MAX_ID, ApiError, Call, Endpoint
from claude_mem.worker.schemas import Limit, Offset, Prompt, records

R = TypeVar("R")  # a record kind
P = TypeVar("P")  # a page of them


class PageQuery(msgspec.Struct, kw_only=True):
    offset: Offset = 0
    limit: Limit = 20
    project: list[str] = []


class ObservationPage(msgspec.Struct):
    items: list[Observation]
    has_more: bool
    offset: int
    limit: int


class SummaryPage(msgspec.Struct):
    items: list[Summary]
    has_more: bool
    offset: int
    limit: int


class PromptPage(msgspec.Struct):
    items: list[Prompt]
    has_more: bool
    offset: int
    limit: int


class SessionPage(msgspec.Struct):
    items: list[Session]
    has_more: bool
    offset: int
    limit: int


RecordId = Annotated[int, msgspec.Meta(ge=0, le=MAX_ID)]


class IdsBody(msgspec.Struct):
    ids: Annotated[list[RecordId], msgspec.Meta(max_length=500)]


class ObservationList(msgspec.Struct):
    items: list[Observation]


class ByFileQuery(msgspec.Struct, kw_only=True):
    path: Annotated[list[str], msgspec.Meta(min_length=1, max_length=20)]
    project: list[str] = []
    limit: Limit = 40


class SessionDetail(msgspec.Struct):
    session: Session
    prompts: list[Prompt]
    observations: list[Observation]
    summaries: list[Summary]


class Deleted(msgspec.Struct):
    deleted: bool
    id: int


class ProjectQuery(msgspec.Struct, kw_only=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]


class ForgottenProject(msgspec.Struct):
    project: str
    sessions: int
    prompts: int
    observations: int
    summaries: int


class Project(msgspec.Struct):
    name: str
    sessions: int
    observations: int
    last_activity: int | None


class Projects(msgspec.Struct):
    projects: list[Project]


class QueueCounts(msgspec.Struct):
    pending: int
    processing: int
    dead: int


class Stats(msgspec.Struct):
    version: str
    uptime_s: float
    database_path: str
    database_bytes: int
    counts: dict[str, int]
    queue: QueueCounts
    stream_clients: int
    active_consumers: int
    provider_chain: list[str]
    provider_health: dict[str, dict[str, Any]]
    embedding: dict[str, Any] | None = None  # None when vectors are off


def _conn(call: Call) -> sqlite3.Connection:
    assert call.state.db is not None
    return call.state.db.read()


def _page(
    call: Call,
    lister: Callable[..., list[dict[str, Any]]],
    kind: type[R],
    page_type: Callable[[list[R], bool, int, int], P],
) -> P:
    q: PageQuery = call.query
    rows = lister(_conn(call), projects=tuple(q.project), limit=q.limit + 1, offset=q.offset)
    return page_type(records(kind, rows[: q.limit]), len(rows) > q.limit, q.offset, q.limit)


def observations_page(call: Call) -> ObservationPage:
    return _page(call, list_observations, Observation, ObservationPage)


def summaries_page(call: Call) -> SummaryPage:
    return _page(call, list_summaries, Summary, SummaryPage)


def sessions_page(call: Call) -> SessionPage:
    return _page(call, list_sessions, Session, SessionPage)


def prompts_page(call: Call) -> PromptPage:
    return _page(call, list_prompts, Prompt, PromptPage)


def observation_by_id(call: Call) -> Observation:
    row = get_observation(_conn(call), call.params["id"])
    if row is None:
        raise ApiError(404, f"observation {call.params['id']} not found", "not_found")
    return records(Observation, [row])[0]


def observations_batch(call: Call) -> ObservationList:
    body: IdsBody = call.body
    return ObservationList(records(Observation, get_observations(_conn(call), body.ids)))


def observations_for_file(call: Call) -> ObservationList:
    q: ByFileQuery = call.query
    rows = observations_by_file(_conn(call), q.path, projects=tuple(q.project), limit=q.limit)
    return ObservationList(records(Observation, rows))


def session_detail(call: Call) -> SessionDetail:
    conn = _conn(call)
    sid = call.params["id"]
    row = get_session(conn, sid)
    if row is None:
        raise ApiError(404, f"session {sid} not found", "not_found")
    return SessionDetail(
        records(Session, [row])[0],
        records(Prompt, of_session(conn, "user_prompts", sid)),
        records(Observation, of_session(conn, "observations", sid)),
        records(Summary, of_session(conn, "session_summaries", sid)),
    )


def _delete(call: Call, deleter: Callable[[sqlite3.Connection, int], bool], kind: str) -> Deleted:
    db = call.state.db
    assert db is not None
    item_id = call.params["id"]
    with db.write() as conn:
        deleted = deleter(conn, item_id)
    if not deleted:
        raise ApiError(404, f"{kind} {item_id} not found", "not_found")
    call.state.stream.publish(f"{kind}_deleted", record_id=item_id)
    return Deleted(True, item_id)


def remove_observation(call: Call) -> Deleted:
    return _delete(call, delete_observation, "observation")


def remove_session(call: Call) -> Deleted:
    return _delete(call, delete_session, "session")


def remove_project(call: Call) -> ForgottenProject:
    db = call.state.db
    assert db is not None
    name = call.query.name
    with db.write() as conn:
        counts = forget_project(conn, name)
    if not any(counts.values()):
        raise ApiError(404, f"project {name!r} has no memory", "not_found")
    call.state.stream.publish("project_deleted", project=name)
    return ForgottenProject(project=name, **counts)


def project_list(call: Call) -> Projects:
    return Projects([msgspec.convert(p, Project) for p in stats.projects(_conn(call))])


def worker_stats(call: Call) -> Stats:
    state = call.state
    assert state.db is not None
    snapshot = stats.snapshot(_conn(call))
    return Stats(
        version=state.version,
        uptime_s=round(time.time() - state.started_at, 3),
        database_path=str(state.db.path),
        database_bytes=state.db.path.stat().st_size,
        counts=snapshot["counts"],
        queue=QueueCounts(**snapshot["queue"]),
        stream_clients=state.stream.client_count,
        active_consumers=state.pipeline.active_sessions if state.pipeline else 0,
        provider_chain=state.pipeline.chain() if state.pipeline else [],
        provider_health=state.pipeline.health.snapshot() if state.pipeline else {},
        embedding=state.embedding.status() if state.embedding else None,
    )


ENDPOINTS = [
    Endpoint("GET", "/api/observations", observations_page, "Observations, newest first",
             "data", query=PageQuery, response=ObservationPage),
    Endpoint("GET", "/api/observations/by-file", observations_for_file,
             "Observations that read or modified a file (exact paths)", "data",
             query=ByFileQuery, response=ObservationList),
    Endpoint("POST", "/api/observations/batch", observations_batch,
             "Full observations by ids, in the order given", "data",
             body=IdsBody, response=ObservationList),
    Endpoint("GET", "/api/observations/{id:int}", observation_by_id, "One observation", "data",
             response=Observation, errors=(404,)),
    Endpoint("DELETE", "/api/observations/{id:int}", remove_observation,
             "Forget an observation (full-text rows go with it)", "data",
             response=Deleted, errors=(404,)),
    Endpoint("GET", "/api/summaries", summaries_page, "Session summaries, newest first", "data",
             query=PageQuery, response=SummaryPage),
    Endpoint("GET", "/api/prompts", prompts_page, "User prompts, newest first", "data",
             query=PageQuery, response=PromptPage),
    Endpoint("GET", "/api/sessions", sessions_page, "Sessions, newest first", "data",
             query=PageQuery, response=SessionPage),
    Endpoint("GET", "/api/sessions/{id:int}", session_detail,
             "A session with its prompts, observations and summaries in order", "data",
             response=SessionDetail, errors=(404,)),
    Endpoint("DELETE", "/api/sessions/{id:int}", remove_session,
             "Forget a session and everything recorded in it", "data",
             response=Deleted, errors=(404,)),
    Endpoint("GET", "/api/projects", project_list, "Projects with counts", "data",
             response=Projects, errors=()),
    Endpoint("DELETE", "/api/projects", remove_project,
             "Forget a project: its sessions, prompts, observations and summaries", "data",
             query=ProjectQuery, response=ForgottenProject, errors=(400, 404)),
    Endpoint("GET", "/api/stats", worker_stats, "Worker, database and queue figures", "data",
             response=Stats, errors=()),
]  # fmt: skip
