"""Property: what reaches the team server holds no byte of a private region or a secret, and
nothing of a project that is not shared: every column of every table of the team schema is
scanned after real turns (prompt, the agent's words, a tool result, its reply) went through a
worker whose project is shared."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claude_mem.pipeline import consumer
from claude_mem.team import pg
from tests.polling import wait_until
from tests.team_pg import TeamDatabase
from tests.test_pipeline_consumer import configure
from tests.test_privacy_store import hidden
from tests.test_privacy_turns import replay
from tests.test_team_sync import add_member
from tests.worker_fixtures import RunningWorker, running_worker, wait_drained

_runs = itertools.count()
UNSHARED_WORD = "quokkaunsharedword"
SHARED_WORD = "wombatsharedword"  # proves the scan sees what was pushed


def server_bytes(owner_url: str) -> str:
    """Every row of every table in the team schema, as text."""
    with pg.connect(owner_url, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'claude_mem'"
        ).fetchall()
        dump = [
            repr(conn.execute(f"SELECT t::text FROM claude_mem.{name} t".encode()).fetchall())
            for (name,) in tables
        ]
    return "\n".join(dump)


@pytest.fixture
def team_worker(
    team_db: TeamDatabase,
    unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[RunningWorker]:
    monkeypatch.setattr(consumer, "POLL_S", 0.05)
    monkeypatch.delenv("CLAUDE_MEM_TURN_IDLE_S")  # turns end at their Stop, as by default
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    monkeypatch.setenv(
        "CLAUDE_MEM_TEAM_URL", add_member(team_db.owner_url, unique_name("t"), unique_name("m"))
    )
    with running_worker() as running:
        configure(running, turn_idle_s=3600)
        assert running.client.post("/api/team/share", json={"project": "proj"}).status_code == 200
        yield running


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(hidden(), min_size=1, max_size=3))
def test_no_private_secret_or_unshared_byte_reaches_the_team_server(
    team_worker: RunningWorker,
    team_db: TeamDatabase,
    tmp_path: Path,
    items: list[tuple[str, str]],
) -> None:
    run = next(_runs)
    texts = [text for text, _ in items] + [SHARED_WORD]
    replay(team_worker, tmp_path / f"shared{run}.jsonl", texts)
    replay(team_worker, tmp_path / f"other{run}.jsonl", [UNSHARED_WORD], cwd="/w/other")
    wait_drained(team_worker)
    sync = team_worker.state.team
    assert sync is not None
    sync.wake()
    assert wait_until(lambda: sync.status().outbox == 0 and sync.status().pushed > 0, 30)
    everything = server_bytes(team_db.owner_url)
    assert SHARED_WORD in everything  # the shared project's memories are there
    assert UNSHARED_WORD not in everything
    assert "/w/other" not in everything
    for _, marker in items:
        assert marker not in everything
        assert marker.lower() not in everything.lower()
