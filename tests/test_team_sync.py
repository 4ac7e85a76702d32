"""Team sync against a real PostgreSQL: a worker pushes its shared projects' memories, a
teammate's worker (another data dir, another process) pulls them with their author, nothing
comes back twice, tombstones carry, and a server that goes away and returns loses and doubles
nothing while the worker keeps answering."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from claude_mem.team import admin, embedded, pg, schema
from tests.net import free_port, worker_pids
from tests.polling import wait_until
from tests.team_pg import TeamDatabase
from tests.worker_fixtures import RunningWorker, running_worker
from tests.worker_process import Env


def add_member(owner_url: str, team: str, role: str) -> str:
    """A member of `team` (made if new), as `team init` and `team add-member` make one."""
    admin.init(owner_url, team)
    return admin.add_member(owner_url, role, team)


def server_rows(owner_url: str, query: str) -> list[tuple[Any, ...]]:
    with pg.connect(owner_url, autocommit=True) as conn:
        return conn.execute(query.encode()).fetchall()


@contextmanager
def team_worker(monkeypatch: pytest.MonkeyPatch, url: str) -> Iterator[RunningWorker]:
    """A real worker in this process on this test's data dir, syncing with `url`."""
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    monkeypatch.setenv("CLAUDE_MEM_TEAM_URL", url)
    with running_worker() as running:
        assert running.state.team is not None
        yield running


@contextmanager
def worker_process(data_dir: Path, url: str) -> Iterator[httpx2.Client]:
    """A teammate's worker: its own process and data dir, syncing with `url`."""
    port = free_port()
    env = Env(data_dir, port)
    env.vars.update(
        CLAUDE_MEM_DATA_DIR=str(data_dir),
        CLAUDE_MEM_WORKER_PORT=str(port),
        CLAUDE_MEM_TEAM_URL=url,
        CLAUDE_MEM_EMBEDDING_MODEL="none",
    )
    env.start()
    token = (data_dir / "worker.token").read_text().strip()
    client = httpx2.Client(
        base_url=f"http://127.0.0.1:{port}", headers={"x-claude-mem-token": token}, timeout=10
    )
    try:
        assert wait_until(lambda: client.get("/api/readiness").status_code == 200, 30)
        yield client
    finally:
        client.close()
        env.cli("worker", "stop", timeout=30)
        leaked = worker_pids(data_dir)
        assert not leaked, f"worker processes leaked: {leaked}"


def remember(client: httpx2.Client, project: str, title: str, text: str) -> int:
    answer = client.post("/api/memory", json={"project": project, "title": title, "text": text})
    assert answer.status_code == 200, answer.text
    return int(answer.json()["id"])


def observations(client: httpx2.Client) -> list[dict[str, Any]]:
    answer = client.get("/api/observations", params={"limit": 100})
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


def titles(client: httpx2.Client) -> list[str]:
    return sorted(o["title"] for o in observations(client))


def test_shared_memory_reaches_a_teammate_once_with_its_author(
    team_db: TeamDatabase,
    unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    team = unique_name("team")
    alice, bob = unique_name("alice"), unique_name("bob")
    alice_url = add_member(team_db.owner_url, team, alice)
    bob_url = add_member(team_db.owner_url, team, bob)
    with team_worker(monkeypatch, alice_url) as a, worker_process(tmp_path / "bob", bob_url) as b:
        assert a.client.post("/api/team/share", json={"project": "proj"}).json() == {
            "project": "proj", "shared": True, "changed": True, "queued": 0,
        }  # fmt: skip
        remember(
            a.client, "proj", "retry budget", "lives in pipeline/retry.py <private>pw</private>"
        )
        remember(a.client, "elsewhere", "not shared", "stays on this machine")
        assert wait_until(lambda: "retry budget" in titles(b), 30)
        [copy] = [o for o in observations(b) if o["title"] == "retry budget"]
        assert (copy["author"], copy["source"], copy["project"]) == (alice, "team", "proj")
        assert "pw" not in copy["narrative"]

        assert b.post("/api/team/share", json={"project": "proj"}).status_code == 200
        since = a.state.stream.last_id
        remember(b, "proj", "bob's finding", "the scheduler holds the lock")
        assert wait_until(lambda: "bob's finding" in titles(a.client), 30)
        announced = [json.loads(frame) for _, frame in a.state.stream.backlog(since) or []]
        cards = [e["observation"] for e in announced if e["type"] == "new_observation"]
        assert [(c["title"], c["author"]) for c in cards] == [("bob's finding", bob)]  # live
        assert titles(a.client) == ["bob's finding", "not shared", "retry budget"]
        assert wait_until(lambda: a.state.team is not None and a.state.team.rounds >= 2, 10)
        assert titles(a.client) == ["bob's finding", "not shared", "retry budget"]  # no echo
        assert titles(b) == ["bob's finding", "retry budget"]

        rows = server_rows(team_db.owner_url, "SELECT * FROM claude_mem.records")
        assert len(rows) == 2
        scanned = repr(rows)
        assert "not shared" not in scanned
        assert "stays on this machine" not in scanned
        assert "pw" not in scanned.replace("pwd", "")

        status = a.client.get("/api/team/status").json()
        password = alice_url.split(":")[2].split("@")[0]
        assert password not in repr(status)
        assert status["server"] == pg.redact(alice_url)
        assert (status["member"], status["team"], status["outbox"]) == (alice, team, 0)
        assert status["shared_projects"] == ["proj"]
        assert status["configured"] is True
        assert status["pushed"] == 1
        assert status["pulled"] == 1
        assert status["last_error"] is None
        assert status["lag_s"] is not None

        # Forgetting the memory forgets the teammate's copy too.
        [mine] = [o for o in observations(a.client) if o["title"] == "retry budget"]
        assert a.client.delete(f"/api/observations/{mine['id']}").status_code == 200
        assert wait_until(lambda: "retry budget" not in titles(b), 30)


def test_vectors_of_shared_rows_reach_the_server(
    team_db: TeamDatabase,
    unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from claude_mem.store import vectors

    url = add_member(team_db.owner_url, unique_name("team"), unique_name("carol"))
    with team_worker(monkeypatch, url) as a:
        a.client.post("/api/team/share", json={"project": "proj"})
        obs = remember(a.client, "proj", "vector me", "text")
        db = a.state.db
        assert db is not None
        with db.write() as conn:
            vectors.upsert(conn, "observation", obs, "m", bytes(4 * schema.DIMENSIONS))
        query = "SELECT count(*) FROM claude_mem.records WHERE embedding IS NOT NULL"
        assert wait_until(lambda: server_rows(team_db.owner_url, query)[0][0] == 1, 30)


def test_server_stopped_mid_run_loses_and_doubles_nothing(
    own_team_server: embedded.EmbeddedServer,
    unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pg.connect(own_team_server.url(), autocommit=True) as conn:
        conn.execute('CREATE DATABASE "team"')
    owner_url = own_team_server.url("team")
    with pg.connect(owner_url, autocommit=True) as conn:
        schema.migrate(conn)
    url = add_member(owner_url, unique_name("team"), unique_name("dave"))
    count = "SELECT count(*), count(DISTINCT origin_id) FROM claude_mem.records"
    with team_worker(monkeypatch, url) as a:
        sync = a.state.team
        assert sync is not None
        a.client.post("/api/team/share", json={"project": "proj"})
        for n in range(5):
            remember(a.client, "proj", f"before {n}", "text")
        assert wait_until(lambda: server_rows(owner_url, count)[0] == (5, 5), 30)

        own_team_server.stop()
        for n in range(5):  # memory keeps working while the server is away
            remember(a.client, "proj", f"during {n}", "text")
        assert wait_until(lambda: sync.status().last_error is not None, 30)
        assert sync.status().outbox == 5
        assert own_team_server.password not in repr(sync.status())

        embedded.start(own_team_server.directory)
        assert wait_until(lambda: sync.status().outbox == 0, 60)
        assert server_rows(owner_url, count)[0] == (10, 10)
        assert wait_until(lambda: sync.status().last_error is None, 60)
        assert len(sync.status().errors) >= 1


def test_unshare_takes_only_ones_own_share_off_the_server(
    team_db: TeamDatabase,
    unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    team, alice, bob = unique_name("team"), unique_name("alice"), unique_name("bob")
    alice_url = add_member(team_db.owner_url, team, alice)
    bob_url = add_member(team_db.owner_url, team, bob)
    shares = "SELECT project, shared_by FROM claude_mem.shared_projects ORDER BY shared_by"
    records = "SELECT count(*) FROM claude_mem.records"
    with team_worker(monkeypatch, alice_url) as a, pg.connect(bob_url, autocommit=True) as b:
        a.client.post("/api/team/share", json={"project": "proj"})
        remember(a.client, "proj", "kept", "text")
        assert wait_until(lambda: server_rows(team_db.owner_url, records) == [(1,)], 30)
        assert server_rows(team_db.owner_url, shares) == [("proj", alice)]
        b.execute("INSERT INTO claude_mem.shared_projects (project) VALUES ('proj')")
        assert a.client.post("/api/team/unshare", json={"project": "proj"}).status_code == 200
        assert wait_until(lambda: server_rows(team_db.owner_url, shares) == [("proj", bob)], 30)
        assert b.execute(records).fetchone() == (1,)  # bob still shares it: the team sees it
        b.execute("DELETE FROM claude_mem.shared_projects WHERE project = 'proj'")
        assert b.execute(records).fetchone() == (0,)  # nobody shares it: nobody reads it
        assert server_rows(team_db.owner_url, records) == [(1,)]  # kept, as every row is


def test_the_sync_follows_its_settings_without_a_worker_restart(
    team_db: TeamDatabase,
    unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The team URL cleared (`team leave`) stops the worker's sync; `team join` again starts
    it, and what was written meanwhile reaches the server: no worker restart."""
    from claude_mem import settings

    url = add_member(team_db.owner_url, unique_name("team"), unique_name("erin"))
    count = "SELECT count(*) FROM claude_mem.records"
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    settings.save({"CLAUDE_MEM_TEAM_URL": url})
    with running_worker() as a:
        a.client.post("/api/team/share", json={"project": "proj"})
        remember(a.client, "proj", "before", "text")
        assert wait_until(lambda: server_rows(team_db.owner_url, count) == [(1,)], 30)

        settings.save({"CLAUDE_MEM_TEAM_URL": ""})
        assert wait_until(lambda: a.state.team is None, 30)
        remember(a.client, "proj", "while away", "text")
        assert a.client.get("/api/team/status").json()["outbox"] == 1
        assert server_rows(team_db.owner_url, count) == [(1,)]

        joined = subprocess.run(
            [sys.executable, "-m", "claude_mem.cli", "team", "join", url],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert joined.returncode == 0, joined.stderr
        assert "worker restart" not in joined.stdout
        assert wait_until(lambda: server_rows(team_db.owner_url, count) == [(2,)], 30)
        remember(a.client, "proj", "after", "text")
        assert wait_until(lambda: server_rows(team_db.owner_url, count) == [(3,)], 30)
        assert a.client.get("/api/team/status").json()["outbox"] == 0
