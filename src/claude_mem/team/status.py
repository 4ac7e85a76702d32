"""What `team status`, `GET /api/team/status` and the viewer's sync panel show.

Nothing here names a password: the server is shown redacted (`team.pg.redact`), and so is
every error the sync recorded.
"""

from __future__ import annotations

import sqlite3

import msgspec

from claude_mem.store import team as team_store
from claude_mem.team import pg


class TeamError(msgspec.Struct, kw_only=True):
    at: int  # epoch ms
    message: str  # password redacted


class TeamStatus(msgspec.Struct, kw_only=True):
    configured: bool  # a team URL is set
    server: str | None = None  # the team URL, password redacted
    member: str | None = None  # the role it connects as
    team: str | None = None  # the member's team, once the server said
    last_push_at: int | None = None  # epoch ms of the last push that reached the server
    last_pull_at: int | None = None  # epoch ms of the last pull round that finished
    last_error: str | None = None  # the last round's error; None once a round succeeds
    errors: list[TeamError] = []  # the last errors, newest last
    outbox: int = 0  # changes waiting to be pushed
    lag_s: float | None = None  # now − the newest pulled record's time
    shared_projects: list[str] = []
    pushed: int = 0  # records and events pushed by this worker
    pulled: int = 0  # records and events pulled by this worker


def local_status(conn: sqlite3.Connection, url: str) -> TeamStatus:
    """What the local store says alone (no worker syncing): the setting, the outbox, the
    shares."""
    return TeamStatus(
        configured=bool(url),
        server=pg.redact(url) or None,
        member=pg.user_of(url) if url else None,
        outbox=team_store.outbox_size(conn),
        shared_projects=team_store.shared(conn),
    )
