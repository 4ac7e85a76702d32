"""Team memory: the sync's status, sharing a project with the team (the CLI's `team
share`/`unshare` call these while a worker runs, so the sync pushes at once), and applying the
team settings at once (`team leave`, so it can say the sync has stopped; the worker also
follows them by itself within a second)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from claude_mem.store import Database
from claude_mem.store import team as team_store
from claude_mem.team.status import TeamStatus, local_status
from claude_mem.worker.api import Call, Endpoint


class ProjectBody(msgspec.Struct):
    project: Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]


class ShareResult(msgspec.Struct):
    project: str
    shared: bool  # whether the project is shared now
    changed: bool  # whether this call changed that
    queued: int  # the project's existing records queued for the team (sharing it)


def _db(call: Call) -> Database:
    assert call.state.db is not None  # needs_db: the router answers 503 until the store is open
    return call.state.db


def team_status(call: Call) -> TeamStatus:
    sync = call.state.team
    if sync is not None:
        return sync.status()
    return local_status(_db(call).read(), call.state.settings.get_str("CLAUDE_MEM_TEAM_URL"))


def share(call: Call) -> ShareResult:
    body: ProjectBody = call.body
    with _db(call).write() as conn:
        shared_before = body.project in team_store.shared(conn)
        queued = team_store.share(conn, body.project)
    _wake(call)
    return ShareResult(body.project, True, not shared_before, queued)


def unshare(call: Call) -> ShareResult:
    body: ProjectBody = call.body
    with _db(call).write() as conn:
        changed = team_store.unshare(conn, body.project)
    return ShareResult(body.project, False, changed, 0)


class SyncStopped(msgspec.Struct):
    stopped: bool  # whether a sync was running (it has stopped now)


def follow_settings(call: Call) -> SyncStopped:
    return SyncStopped(call.state.follow_team_now())


def _wake(call: Call) -> None:
    if call.state.team is not None:
        call.state.team.wake()


ENDPOINTS = [
    Endpoint("GET", "/api/team/status", team_status,
             "Team sync: server (password redacted), last push and pull, outbox, lag, errors",
             "team", response=TeamStatus, errors=()),
    Endpoint("POST", "/api/team/share", share,
             "Share a project with the team: its records are pushed, existing ones too",
             "team", body=ProjectBody, response=ShareResult),
    Endpoint("POST", "/api/team/unshare", unshare,
             "Stop sharing a project (rows already pushed stay on the server)", "team",
             body=ProjectBody, response=ShareResult),
    Endpoint("POST", "/api/team/follow", follow_settings,
             "Apply the team settings now: a cleared team URL stops the sync (team leave)",
             "team",
             response=SyncStopped, needs_db=False, errors=()),
]  # fmt: skip
