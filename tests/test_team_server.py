"""The team server on one machine (`claude-mem team serve --embedded DIR`) and its schema."""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from claude_mem.team import admin, embedded, pg, schema
from tests.team_pg import TeamDatabase


def test_the_owner_needs_the_password(team_server: embedded.EmbeddedServer) -> None:
    with pg.connect(team_server.url(), autocommit=True) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
        # Sized for the machine, not PostgreSQL's built-in 128 MB (embedded.shared_buffers_mb).
        buffers = conn.execute(
            "SELECT setting::bigint * current_setting('block_size')::bigint / 1048576"
            " FROM pg_settings WHERE name = 'shared_buffers'"
        ).fetchone()
        assert buffers == (embedded.shared_buffers_mb(),)
    wrong = pg.with_credentials(team_server.url(), "postgres", "not-the-password")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        pg.connect(wrong)


def test_a_server_started_again_keeps_its_url_and_data(
    own_team_server: embedded.EmbeddedServer,
) -> None:
    with pg.connect(own_team_server.url(), autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (n int)")
        conn.execute("INSERT INTO kept VALUES (7)")
    own_team_server.stop()
    assert not own_team_server.running()
    with pytest.raises(psycopg.OperationalError):
        pg.connect(own_team_server.url())
    again = embedded.start(own_team_server.directory)
    assert again.url() == own_team_server.url()
    with pg.connect(again.url()) as conn:
        assert conn.execute("SELECT n FROM kept").fetchall() == [(7,)]
    assert (own_team_server.directory / "owner.password").stat().st_mode & 0o077 == 0


def test_migrations_apply_once_and_a_newer_schema_is_refused(team_db: TeamDatabase) -> None:
    with pg.connect(team_db.owner_url, autocommit=True) as conn:
        assert schema.migrate(conn) == []  # the fixture migrated it already
        names = [str(row[0]) for row in conn.execute("SELECT name FROM claude_mem.migrations")]
        assert sorted(names) == [m.name for m in schema.MIGRATIONS]
        vector = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        assert vector == (1,)
        conn.execute("INSERT INTO claude_mem.migrations (name) VALUES ('9999_from_the_future')")
        with pytest.raises(schema.TeamSchemaError, match="9999_from_the_future"):
            schema.migrate(conn)


def test_code_words_are_found_whole_or_in_parts(team_db: TeamDatabase) -> None:
    with pg.connect(team_db.owner_url, autocommit=True) as conn:
        conn.execute("INSERT INTO claude_mem.teams (name) VALUES ('t')")
        conn.execute(
            "INSERT INTO claude_mem.records (team_id, origin_id, content_hash, kind, project,"
            " created_at, member, machine, source_session, body, search_text)"
            " SELECT id, 'o1', 'h', 'observation', 'p', 1, 'm', 'x', 's', '{}',"
            " 'fixed a crash in src/claude_mem/store.py parse_config()' FROM claude_mem.teams"
        )
        for query in ("store.py", "src/claude_mem/store.py", "parse_config", "claude_mem", "crash"):
            found = conn.execute(
                "SELECT count(*) FROM claude_mem.records WHERE tsv @@"
                " plainto_tsquery('claude_mem.code', claude_mem.code_words(%s))",
                (query,),
            ).fetchone()
            assert found == (1,), query
        missing = conn.execute(
            "SELECT count(*) FROM claude_mem.records WHERE tsv @@"
            " plainto_tsquery('claude_mem.code', claude_mem.code_words('parse_settings'))"
        ).fetchone()
        assert missing == (0,)


def _serve(directory: Path) -> tuple[subprocess.Popen[str], list[str]]:
    """`team serve --embedded directory` running, and what it printed up to its next step."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mem.cli", "team", "serve", "--embedded", str(directory)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    assert proc.stdout is not None
    lines: list[str] = []
    while not lines or (lines[-1] and not lines[-1].startswith("owner URL")):
        lines.append(proc.stdout.readline())
    lines.append(proc.stdout.readline())
    return proc, lines


def _stopped(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    return out, err


def test_team_serve_prints_the_owner_url_and_next_step_and_stops_cleanly() -> None:
    with tempfile.TemporaryDirectory(prefix="claude-mem-serve-") as folder:
        directory = Path(folder)
        proc, lines = _serve(directory)
        try:
            url = next(line for line in lines if line.startswith("owner URL")).split(": ", 1)[1]
            url = url.strip()
            assert url.startswith("postgresql://postgres:")
            assert f"next: claude-mem team init '{url}'" in lines[-1]
            with pg.connect(url) as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
            admin.init(url, "core")
        finally:
            out, _ = _stopped(proc)
        assert "team server stopped" in out
        assert not embedded.EmbeddedServer(directory, 0, "").running()

        # Served again once initialised: the next step is adding members, not init again.
        proc, lines = _serve(directory)
        _stopped(proc)
        assert "team init" not in "".join(lines)
        assert "initialised already (teams: core)" in lines[-1]
        assert "claude-mem team add-member NAME" in lines[-1]


def _other_user() -> str:
    """A user that exists on this machine and is not the one running the tests."""
    return next(u.pw_name for u in pwd.getpwall() if u.pw_uid != os.geteuid())


def test_the_system_user_is_created_only_when_asked(tmp_path: Path) -> None:
    absent = "claude_mem_no_such_user"
    directory = tmp_path / "served"
    heard: list[str] = []
    with pytest.raises(embedded.EmbeddedServerError) as refused:
        embedded.prepare_for(absent, directory, create_user=False, say=heard.append)
    message = str(refused.value)
    assert f"the system user {absent}" in message
    assert "PostgreSQL refuses to run as root" in message
    assert "add --create-user" in message
    assert (heard, directory.exists()) == ([], False)
    with pytest.raises(KeyError):
        pwd.getpwnam(absent)


def test_a_folder_the_server_user_cannot_reach_is_named_never_widened() -> None:
    with tempfile.TemporaryDirectory(prefix="claude-mem-reach-") as folder:
        outer = Path(folder)
        outer.chmod(0o755)
        closed = outer / "closed"
        closed.mkdir(mode=0o700)
        closed.chmod(0o700)
        directory = closed / "team-pg"
        heard: list[str] = []
        # Even asked to create its user, nothing is created before the folders are checked.
        absent = "claude_mem_no_such_user"
        for user, create in ((absent, True), (_other_user(), False)):
            with pytest.raises(embedded.EmbeddedServerError) as refused:
                embedded.prepare_for(user, directory, create_user=create, say=heard.append)
            message = str(refused.value)
            assert f"system user {user}, which cannot reach {directory}: " in message
            assert f"{closed} is 0700" in message
            assert "never widens a folder you did not name" in message
            assert "use a DIR it can reach, e.g. /var/lib/claude-mem-team" in message
        assert heard == []
        assert (outer.stat().st_mode & 0o7777, closed.stat().st_mode & 0o7777) == (0o755, 0o700)
        assert not directory.exists()
        with pytest.raises(KeyError):
            pwd.getpwnam(absent)

        # The DIR the user names is made searchable for the server's user, said first.
        user = _other_user()
        reachable = outer / "team-pg"
        embedded.prepare_for(user, reachable, create_user=False, say=heard.append)
        assert reachable.stat().st_mode & 0o7777 == 0o711
        assert heard == [f"letting {user} into {reachable} (the DIR you named): mode 0700 -> 0711"]
        assert embedded.first_closed(reachable, user) is None
        assert outer.stat().st_mode & 0o7777 == 0o755
