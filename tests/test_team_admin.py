"""Team administration on a real PostgreSQL: init, members, and the engine's access control
(a member sees and writes only its own team's shared projects, even with raw SQL)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import psycopg
import pytest

from claude_mem.team import admin, pg
from tests.net import free_port
from tests.polling import wait_until
from tests.store_helpers import session
from tests.team_pg import TeamDatabase
from tests.worker_fixtures import RunningWorker, running_worker

Names = Callable[[str], str]
INSERT_RECORD = (
    "INSERT INTO claude_mem.records (team_id, origin_id, content_hash, kind, project,"
    " created_at, member, machine, source_session, body, search_text)"
    " VALUES (%s, %s, 'h', 'observation', %s, 1, %s, 'm1', 's1', '{}', 'text')"
)


def _team_id(owner_url: str, team: str) -> int:
    with pg.connect(owner_url) as conn:
        row = conn.execute("SELECT id FROM claude_mem.teams WHERE name = %s", (team,)).fetchone()
    assert row is not None
    return int(str(row[0]))


def _share(owner_url: str, team: str, project: str) -> int:
    team_id = _team_id(owner_url, team)
    with pg.connect(owner_url) as conn:
        conn.execute(
            "INSERT INTO claude_mem.shared_projects (team_id, project, shared_by)"
            " VALUES (%s, %s, 'owner')",
            (team_id, project),
        )
    return team_id


def test_init_twice_is_fine_and_adds_named_teams(team_db: TeamDatabase) -> None:
    assert admin.init(team_db.owner_url) == []  # the fixture migrated the schema already
    assert admin.init(team_db.owner_url) == []
    admin.init(team_db.owner_url, "backend")
    with pg.connect(team_db.owner_url) as conn:
        names = conn.execute("SELECT name FROM claude_mem.teams ORDER BY name").fetchall()
    assert names == [("backend",), (admin.DEFAULT_TEAM,)]


def test_a_member_url_connects_as_that_member_of_its_team(
    team_db: TeamDatabase, unique_name: Names
) -> None:
    admin.init(team_db.owner_url)
    name = unique_name("alice")
    url = admin.add_member(team_db.owner_url, name)
    owner, member = urllib.parse.urlsplit(team_db.owner_url), urllib.parse.urlsplit(url)
    assert (member.hostname, member.port, member.path) == (owner.hostname, owner.port, owner.path)
    assert member.username == name
    assert member.password
    with pg.connect(url) as conn:
        row = conn.execute("SELECT session_user, claude_mem.current_team()").fetchone()
    assert row == (name, _team_id(team_db.owner_url, admin.DEFAULT_TEAM))
    assert [(m.role, m.team, m.can_write) for m in admin.members(team_db.owner_url)] == [
        (name, admin.DEFAULT_TEAM, True)
    ]
    with pytest.raises(admin.TeamAdminError, match=f"team reset-member {name}"):
        admin.add_member(team_db.owner_url, name)
    with pytest.raises(admin.TeamAdminError, match="exists on this server already"):
        admin.add_member(team_db.owner_url, "postgres")  # a role, not a member


def test_a_member_name_is_checked_before_any_sql(team_db: TeamDatabase) -> None:
    admin.init(team_db.owner_url)
    for bad in ('x"; DROP ROLE postgres; --', "Alice", "pg_monitor", "claude_mem_writer", ""):
        with pytest.raises(admin.TeamAdminError, match="cannot be a member's name"):
            admin.add_member(team_db.owner_url, bad)
    assert admin.members(team_db.owner_url) == []


def test_add_member_names_the_team_when_there_are_several(
    team_db: TeamDatabase, unique_name: Names
) -> None:
    with pytest.raises(admin.TeamAdminError, match="run claude-mem team init URL first"):
        admin.add_member(team_db.owner_url, unique_name("early"))
    admin.init(team_db.owner_url, "a")
    admin.init(team_db.owner_url, "b")
    with pytest.raises(admin.TeamAdminError, match=r"several teams \(a, b\)"):
        admin.add_member(team_db.owner_url, unique_name("bob"))
    with pytest.raises(admin.TeamAdminError, match="no team 'c'"):
        admin.add_member(team_db.owner_url, unique_name("bob"), "c")
    admin.add_member(team_db.owner_url, unique_name("bob"), "b")
    assert [m.team for m in admin.members(team_db.owner_url)] == ["b"]


def test_a_read_only_member_reads_but_cannot_insert(
    team_db: TeamDatabase, unique_name: Names
) -> None:
    admin.init(team_db.owner_url)
    team_id = _share(team_db.owner_url, admin.DEFAULT_TEAM, "proj")
    writer = unique_name("writer")
    reader = unique_name("reader")
    writer_url = admin.add_member(team_db.owner_url, writer)
    reader_url = admin.add_member(team_db.owner_url, reader, read_only=True)
    with pg.connect(writer_url) as conn:
        conn.execute(INSERT_RECORD, (team_id, "o1", "proj", writer))
    with pg.connect(reader_url) as conn:
        assert conn.execute("SELECT origin_id FROM claude_mem.records").fetchall() == [("o1",)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(INSERT_RECORD, (team_id, "o2", "proj", reader))
    assert [m.can_write for m in admin.members(team_db.owner_url)] == [False, True]  # by name


def test_a_member_sees_and_writes_only_its_teams_shared_projects(
    team_db: TeamDatabase, unique_name: Names
) -> None:
    """The issue's access-control test: raw SQL as the member's own role."""
    owner = team_db.owner_url
    admin.init(owner, "a")
    admin.init(owner, "b")
    team_a = _share(owner, "a", "shared")
    team_b = _share(owner, "b", "theirs")
    alice, bob = unique_name("alice"), unique_name("bob")
    alice_url = admin.add_member(owner, alice, "a")
    admin.add_member(owner, bob, "b")
    with pg.connect(owner) as conn:  # rows the owner (not bound by policies) puts everywhere
        conn.execute(INSERT_RECORD, (team_a, "a-shared", "shared", "someone"))
        conn.execute(INSERT_RECORD, (team_a, "a-private", "unshared", "someone"))
        conn.execute(INSERT_RECORD, (team_b, "b-theirs", "theirs", bob))
        conn.execute(
            "INSERT INTO claude_mem.events (team_id, kind, project, origin_id, member, machine,"
            " created_at) VALUES (%s, 'forget', 'theirs', 'b-theirs', %s, 'm', 1)",
            (team_b, bob),
        )
    with pg.connect(alice_url, autocommit=True) as conn:
        seen = conn.execute("SELECT origin_id FROM claude_mem.records ORDER BY seq").fetchall()
        assert seen == [("a-shared",)]
        assert conn.execute("SELECT count(*) FROM claude_mem.events").fetchone() == (0,)
        assert conn.execute("SELECT name FROM claude_mem.teams").fetchall() == [("a",)]
        assert conn.execute("SELECT role FROM claude_mem.members").fetchall() == [(alice,)]
        projects = conn.execute("SELECT project FROM claude_mem.shared_projects").fetchall()
        assert projects == [("shared",)]
        refused = [
            (INSERT_RECORD, (team_b, "x1", "theirs", alice)),  # another team
            (INSERT_RECORD, (team_a, "x2", "shared", bob)),  # another member
            (INSERT_RECORD, (team_a, "x3", "unshared", alice)),  # a project not shared
            (
                "INSERT INTO claude_mem.shared_projects (team_id, project) VALUES (%s, 'p')",
                (team_b,),
            ),
            (
                "INSERT INTO claude_mem.events (team_id, kind, project, origin_id, machine,"
                " created_at) VALUES (%s, 'forget', 'theirs', 'b-theirs', 'm', 1)",
                (team_b,),
            ),
        ]
        for statement, values in refused:
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
                conn.execute(statement, values)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE claude_mem.records SET project = 'shared'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM claude_mem.records")
        conn.execute(INSERT_RECORD, (team_a, "mine", "shared", alice))
    with pg.connect(owner) as conn:
        origins = conn.execute("SELECT origin_id FROM claude_mem.records ORDER BY seq").fetchall()
    assert origins == [("a-shared",), ("a-private",), ("b-theirs",), ("mine",)]


def test_a_removed_member_is_cut_off_at_once_and_its_rows_stay(
    team_db: TeamDatabase, unique_name: Names
) -> None:
    admin.init(team_db.owner_url)
    team_id = _share(team_db.owner_url, admin.DEFAULT_TEAM, "proj")
    name = unique_name("leaver")
    url = admin.add_member(team_db.owner_url, name)
    open_conn = pg.connect(url, autocommit=True)
    try:
        open_conn.execute(INSERT_RECORD, (team_id, "kept", "proj", name))
        open_conn.execute("INSERT INTO claude_mem.shared_projects (project) VALUES ('mine')")
        assert admin.remove_member(team_db.owner_url, name) == admin.Removed(["mine"], 0)
        with pytest.raises(psycopg.OperationalError):
            open_conn.execute("SELECT count(*) FROM claude_mem.records")
    finally:
        open_conn.close()
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        pg.connect(url)
    with pg.connect(team_db.owner_url) as conn:
        assert conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone() is None
        kept = conn.execute("SELECT member FROM claude_mem.records").fetchall()
        shares = conn.execute("SELECT project, shared_by FROM claude_mem.shared_projects")
        assert shares.fetchall() == [("proj", "owner")]  # its share of 'mine' went with it
    assert kept == [(name,)]
    assert admin.members(team_db.owner_url) == []
    with pytest.raises(admin.TeamAdminError, match="is not a member"):
        admin.remove_member(team_db.owner_url, name)
    with pytest.raises(admin.TeamAdminError, match="is not a member"):
        admin.remove_member(team_db.owner_url, "postgres")  # only members' roles are dropped


def test_an_owner_without_pg_signal_backend_removes_a_member_and_says_what_is_left(
    team_db: TeamDatabase, unique_name: Names, data_dir: Path
) -> None:
    """An owner that may create roles but not signal other roles' sessions (no superuser,
    no pg_signal_backend): the member goes with its shares; its open session is left open,
    seeing nothing, and the owner is told why and what role would end it."""
    admin.init(team_db.owner_url)
    owner, password = unique_name("owner"), "owner-pw"
    with pg.connect(team_db.owner_url, autocommit=True) as conn:
        conn.execute(
            f"CREATE ROLE {owner} LOGIN CREATEROLE BYPASSRLS PASSWORD '{password}';"
            f"GRANT claude_mem_reader, claude_mem_writer TO {owner} WITH ADMIN OPTION;"
            f"GRANT USAGE ON SCHEMA claude_mem TO {owner};"
            f"GRANT SELECT ON claude_mem.teams TO {owner};"
            f"GRANT SELECT, INSERT, DELETE ON claude_mem.members, claude_mem.shared_projects"
            f" TO {owner}"
        )
    owner_url = pg.with_credentials(team_db.owner_url, owner, password)
    name = unique_name("leaver")
    url = admin.add_member(owner_url, name)
    open_conn = pg.connect(url, autocommit=True)
    try:
        open_conn.execute("INSERT INTO claude_mem.shared_projects (project) VALUES ('proj')")
        done = cli("team", "remove-member", name, "--url", owner_url)
        assert done.returncode == 0, done.stderr
        assert f"member {name} removed: its role is dropped, its shares (proj) dropped" in (
            done.stdout
        )
        assert "its 1 open session(s) were not ended" in done.stdout
        assert "pg_signal_backend" in done.stdout
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # its grants went too
            open_conn.execute("SELECT count(*) FROM claude_mem.records")
    finally:
        open_conn.close()
    with pg.connect(team_db.owner_url) as conn:
        assert conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone() is None
        assert conn.execute("SELECT * FROM claude_mem.shared_projects").fetchall() == []
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        pg.connect(url)


def test_a_member_cannot_init(team_db: TeamDatabase, unique_name: Names) -> None:
    admin.init(team_db.owner_url)
    url = admin.add_member(team_db.owner_url, unique_name("carol"))
    with pytest.raises(admin.TeamAdminError, match="needs the server's owner"):
        admin.init(url)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m claude_mem.cli ARGS` with this test's data dir (in the environment)."""
    return subprocess.run(
        [sys.executable, "-m", "claude_mem.cli", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
        check=False,
    )


def test_the_cli_from_init_to_leave(
    team_db: TeamDatabase, unique_name: Names, data_dir: Path
) -> None:
    owner = team_db.owner_url
    done = cli("team", "init", owner, "--team", "core")
    assert done.returncode == 0, done.stderr
    saved = data_dir / "team-owner.url"
    assert saved.read_text().strip() == owner
    assert saved.stat().st_mode & 0o777 == 0o600
    assert str(saved) in done.stdout
    assert team_db.server.password not in done.stdout + done.stderr

    name = unique_name("dana")
    done = cli("team", "add-member", name)
    assert done.returncode == 0, done.stderr
    url = next(word for word in done.stdout.split() if word.startswith("postgresql://"))
    password = urllib.parse.urlsplit(url).password
    assert password
    assert urllib.parse.urlsplit(url).username == name

    done = cli("team", "join", url)
    assert done.returncode == 0, done.stderr
    assert f"joined team 'core' as {name}" in done.stdout
    assert password not in done.stdout + done.stderr
    assert json.loads((data_dir / "settings.json").read_text())["CLAUDE_MEM_TEAM_URL"] == url

    done = cli("team", "status", "--json")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["configured"] is True
    assert status["connected"] is True
    assert (status["member"], status["team"]) == (name, "core")
    assert status["server"] == pg.redact(url)
    text_status = cli("team", "status")
    assert "team: core" in text_status.stdout
    assert "configured: yes" in text_status.stdout
    assert "connected: yes" in text_status.stdout
    assert "True" not in text_status.stdout
    doctor = cli("doctor", "--json")
    team_check = next(c for c in json.loads(doctor.stdout) if c["check"] == "team")
    assert team_check == {
        "check": "team",
        "status": "ok",
        "detail": f"{pg.redact(url)}: reachable, {name} in team 'core'",
    }
    members = cli("team", "members", "--json")
    assert [(m["role"], m["team"]) for m in json.loads(members.stdout)] == [(name, "core")]
    table = cli("team", "members").stdout.splitlines()
    assert table[0].split() == ["TEAM", "MEMBER", "ACCESS", "ADDED"]
    assert table[1].split()[:3] == ["core", name, "read-write"]
    settings_list = cli("settings", "list")
    for shown in (done, text_status, doctor, members, settings_list):
        assert password not in shown.stdout + shown.stderr

    done = cli("team", "leave")
    assert done.returncode == 0, done.stderr
    after = json.loads(cli("team", "status", "--json").stdout)
    assert after["configured"] is False

    done = cli("team", "remove-member", name)
    assert done.returncode == 0, done.stderr
    assert cli("team", "join", url).returncode == 1
    logs = [p for p in data_dir.rglob("*") if p.is_file() and "log" in p.name]
    assert [p for p in logs if password in p.read_text(errors="replace")] == []


def test_a_lost_join_url_is_issued_again_by_reset_member(
    team_db: TeamDatabase, unique_name: Names, data_dir: Path
) -> None:
    assert cli("team", "init", team_db.owner_url).returncode == 0
    name = unique_name("erin")
    old_url = admin.add_member(team_db.owner_url, name, read_only=True)
    again = cli("team", "add-member", name)
    assert again.returncode == 1
    assert f"{name} is a member already" in again.stderr
    assert f"claude-mem team reset-member {name}" in again.stderr
    assert cli("team", "reset-member", unique_name("nobody")).returncode == 1

    with pg.connect(old_url, autocommit=True) as syncing:  # a worker syncing with the old URL
        done = cli("team", "reset-member", name)
        assert done.returncode == 0, done.stderr
        with pytest.raises(psycopg.OperationalError):
            syncing.execute("SELECT 1")
    new_url = next(word for word in done.stdout.split() if word.startswith("postgresql://"))
    assert f"they run: claude-mem team join '{new_url}'" in done.stdout
    assert urllib.parse.urlsplit(new_url).password != urllib.parse.urlsplit(old_url).password
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        pg.connect(old_url)
    joined = cli("team", "join", new_url)
    assert joined.returncode == 0, joined.stderr
    assert "a read-only member" in joined.stdout
    # Same member, same team, same access.
    assert [(m.role, m.can_write) for m in admin.members(team_db.owner_url)] == [(name, False)]

    # A read-only member's share would fail on every sync: it is refused, nothing queued.
    from claude_mem.store import team as team_store
    from claude_mem.store.db import open_database

    with open_database() as db:
        session(db, project="proj")
    refused = cli("team", "share", "proj")
    assert refused.returncode == 1
    assert f"{name} is a read-only member of team 'default'" in refused.stderr
    with open_database() as db:
        assert (team_store.shared(db.read()), team_store.outbox_size(db.read())) == ([], 0)


def test_the_cli_says_what_is_wrong_in_one_line(
    team_db: TeamDatabase, unique_name: Names, data_dir: Path
) -> None:
    secret = "s3cret-not-to-show"
    unreachable = f"postgresql://someone:{secret}@127.0.0.1:{free_port()}/team"
    cases = {
        ("team", "join", "http://example.invalid/x"): "a team URL starts with postgresql://",
        ("team", "join", unreachable): "cannot connect to the team server at",
        ("team", "join", team_db.owner_url): "is not a member of a team there",
        ("team", "add-member", "eve"): "no owner URL: run claude-mem team init URL first",
        ("team", "init", unreachable): "cannot connect to the team server at",
    }
    with socket.socket() as silent:  # accepts connections (the kernel does), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        cases[("team", "join", f"postgresql://someone:{secret}@127.0.0.1:{port}/team")] = (
            "timeout expired"
        )
        for argv, message in cases.items():
            done = cli(*argv)
            assert done.returncode == 1, argv
            assert message in done.stderr, (argv, done.stderr)
            assert len(done.stderr.strip().splitlines()) == 1, done.stderr
            assert secret not in done.stderr
            assert team_db.server.password not in done.stderr
    admin.init(team_db.owner_url)
    member_url = admin.add_member(team_db.owner_url, unique_name("mallory"))
    done = cli("team", "init", member_url)
    assert done.returncode == 1
    assert "needs the server's owner" in done.stderr
    assert not (data_dir / "team-owner.url").exists()

    # A configured team that cannot be reached: status says so, the password redacted.
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(json.dumps({"CLAUDE_MEM_TEAM_URL": unreachable}))
    done = cli("team", "status", "--json")
    assert done.returncode == 1
    status = json.loads(done.stdout)
    assert status["connected"] is False
    assert "cannot connect" in status["error"]
    assert secret not in done.stdout + done.stderr


def test_share_and_unshare_without_a_worker_write_the_store() -> None:
    from claude_mem.store import team as team_store
    from claude_mem.store.db import open_database

    with open_database() as db:
        session(db, project="proj")
    refused = cli("team", "share", "nope")
    assert refused.returncode == 1
    assert "nothing to share: no project nope in memory (known: proj)" in refused.stderr
    done = cli("team", "share", "proj")
    assert done.returncode == 0, done.stderr
    assert "sharing proj with the team" in done.stdout
    assert "proj is shared already" in cli("team", "share", "proj").stdout
    with open_database() as db:
        assert team_store.shared(db.read()) == ["proj"]
    done = cli("team", "unshare", "proj")
    assert done.returncode == 0, done.stderr
    with open_database() as db:
        assert team_store.shared(db.read()) == []
    assert "proj was not shared" in cli("team", "unshare", "proj").stdout


def test_share_and_status_go_through_a_running_worker(
    worker: RunningWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(worker.port))
    assert worker.state.db is not None
    session(worker.state.db, project="proj")
    assert "no project nope in memory" in cli("team", "share", "nope").stderr
    done = cli("team", "share", "proj")
    assert done.returncode == 0, done.stderr
    assert worker.client.get("/api/team/status").json()["shared_projects"] == ["proj"]
    done = cli("team", "status", "--json")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["source"] == "worker"
    assert status["configured"] is False
    assert status["shared_projects"] == ["proj"]
    assert "proj is not shared any more" in cli("team", "unshare", "proj").stdout
    assert worker.client.get("/api/team/status").json()["shared_projects"] == []


def test_status_reads_as_sentences_and_leave_stops_the_running_workers_sync(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_mem import settings

    away = f"postgresql://zoe:pw@127.0.0.1:{free_port()}/team"  # no server: every round fails
    settings.save({"CLAUDE_MEM_TEAM_URL": away})
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    with running_worker() as worker:
        sync = worker.state.team
        assert sync is not None
        assert wait_until(lambda: len(sync.status().errors) >= 1, 30)
        monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(worker.port))
        done = cli("team", "status")
        assert done.returncode == 1  # the last round failed
        lines = done.stdout.splitlines()
        assert "configured: yes" in lines
        assert "pull lag: -" in lines
        error_lines = lines[lines.index(next(x for x in lines if x.startswith("errors: "))) + 1 :]
        first = error_lines[0].split()
        shown = datetime.fromisoformat(first[0])
        assert shown.utcoffset() == datetime.now().astimezone().utcoffset()  # local time
        assert abs(shown.timestamp() * 1000 - sync.status().errors[0].at) < 1000
        assert "OperationalError" in first[1]
        assert "{" not in done.stdout
        assert "pw@" not in done.stdout
        machine = json.loads(cli("team", "status", "--json").stdout)
        assert isinstance(machine["errors"][0]["at"], int)  # --json keeps the machine fields
        assert machine["configured"] is True

        done = cli("team", "leave")
        assert done.returncode == 0, done.stderr
        assert f"the running worker (pid {os.getpid()}) stopped its team sync" in done.stdout
        assert worker.state.team is None
        assert "claude-mem-team" not in {thread.name for thread in threading.enumerate()}
        again = cli("team", "leave")
        assert "was not syncing with a team" in again.stdout
    done = cli("team", "leave")
    assert "no worker runs: nothing syncs with the team, nothing to stop" in done.stdout
