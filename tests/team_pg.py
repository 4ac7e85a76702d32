"""A real PostgreSQL + pgvector for the team tests: one embedded server per test session
(started through `claude_mem.team.embedded`, as `claude-mem team serve --embedded` starts it),
and a fresh database on it for each test, migrated to the team schema.

Roles belong to the whole server, not a database: a test names its roles with
`unique_name(...)` so no two tests share one. A test that stops its server starts its own
with `own_team_server`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from claude_mem.team import embedded, pg, schema

_counter = itertools.count(1)


@dataclass(frozen=True, slots=True)
class TeamDatabase:
    server: embedded.EmbeddedServer
    name: str

    @property
    def owner_url(self) -> str:
        """The owner's URL of this test's own database."""
        return self.server.url(self.name)


def _names() -> Callable[[str], str]:
    prefix = f"t{os.getpid()}_{next(_counter)}"
    return lambda base: f"{prefix}_{base}"


@pytest.fixture(scope="session")
def team_server() -> Iterator[embedded.EmbeddedServer]:
    """Its folder is its own, not under pytest's numbered temp folders: another pytest run
    on the machine prunes old ones, and would delete a running server's cluster. (As root,
    the server's system user could not reach a folder under them either.)"""
    with _served("claude-mem-team-server-") as server:
        yield server


@contextlib.contextmanager
def _served(prefix: str) -> Iterator[embedded.EmbeddedServer]:
    """A server in a temporary folder of its own (the DIR it is given: as root, made
    searchable for the system user the server runs as, created if need be)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        server = embedded.start(folder, create_user=True)
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def unique_name() -> Callable[[str], str]:
    """`unique_name("alice")` → a role name no other test of this run uses."""
    return _names()


@pytest.fixture
def team_db(team_server: embedded.EmbeddedServer) -> Iterator[TeamDatabase]:
    """A database of its own for this test, with the team schema migrated."""
    name = f"team_{os.getpid()}_{next(_counter)}"
    with pg.connect(team_server.url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    database = TeamDatabase(team_server, name)
    with pg.connect(database.owner_url, autocommit=True) as conn:
        schema.migrate(conn)
    try:
        yield database
    finally:
        with pg.connect(team_server.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def own_team_server() -> Iterator[embedded.EmbeddedServer]:
    """A server this test may stop and start again (`embedded.start(server.directory)`)."""
    with _served("claude-mem-own-team-server-") as server:
        yield server
