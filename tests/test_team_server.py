"""The team server on one machine (`claude-mem team serve --embedded DIR`) and its schema."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from claude_mem.team import embedded, pg, schema
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


def test_team_serve_prints_the_owner_url_and_stops_cleanly(tmp_path: Path) -> None:
    directory = tmp_path / "served"
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mem.cli", "team", "serve", "--embedded", str(directory)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(2)]
        url = lines[1].split(": ", 1)[1].strip()
        assert url.startswith("postgresql://postgres:")
        with pg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "team server stopped" in out
    assert not embedded.EmbeddedServer(directory, 0, "").running()
