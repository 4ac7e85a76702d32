from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from claude_mem import paths
from claude_mem.store import Database, SchemaError
from claude_mem.store.db import connect
from claude_mem.store.migrations import MIGRATIONS, Migration, applied, migrate, statements
from claude_mem.store.schema import FTS_COLUMNS

NAMES = [m.name for m in MIGRATIONS]

# Rows valid at the schema that exists right after the named migration.
SEED_AFTER = {
    "0001_sessions_and_prompts": [
        "INSERT INTO sessions (id, platform, host_session_id, project, started_at, updated_at)"
        " VALUES (1, 'claude-code', 'host-1', 'proj', 1000, 1000)",
        "INSERT INTO user_prompts (session_id, prompt_number, text, created_at)"
        " VALUES (1, 1, 'find the flaky scheduler test', 1001)",
    ],
    "0002_observations_and_summaries": [
        "INSERT INTO observations (id, session_id, project, type, title, narrative, content_hash,"
        " created_at) VALUES (1, 1, 'proj', 'bugfix', 'Fixed scheduler race', 'lock added',"
        " 'h1', 1002)",
        "INSERT INTO observations (id, session_id, project, type, title, content_hash,"
        " generated_by, created_at) VALUES (4, 1, 'proj', 'decision', 'Saved by hand', 'h4',"
        " 'manual', 1002)",
        "INSERT INTO session_summaries (session_id, project, request, learned, created_at)"
        " VALUES (1, 'proj', 'fix scheduler', 'lock ordering matters', 1003)",
    ],
    "0003_fulltext": [],
    "0004_tool_uses_and_queue": [
        "INSERT INTO tool_uses (session_id, tool_use_id, tool_name, created_at)"
        " VALUES (1, 'tu-1', 'Read', 1004)",
        "INSERT INTO queue (session_id, kind, dedup_key, payload, available_at, created_at)"
        " VALUES (1, 'observation', 'tu-1', '{}', 1004, 1004)",
    ],
    "0005_token_usage": [
        "INSERT INTO token_usage (day, session_id, provider, input_tokens, calls)"
        " VALUES ('2026-11-30', 1, 'anthropic', 100, 1)",
    ],
    "0006_vectors": [
        "INSERT INTO vectors (kind, row_id, model, dim, vector, created_at)"
        " VALUES ('observation', 1, 'm@1', 2, x'0000803f00000000', 1005)",
    ],
    "0007_corpora": [
        "INSERT INTO corpora (name, created_at, updated_at) VALUES ('auth', 1006, 1006)",
    ],
    "0008_observation_files": [
        "INSERT INTO observations (id, session_id, project, type, title, files_modified,"
        " content_hash, created_at) VALUES (2, 1, 'proj', 'change', 'Edited a.py',"
        " '[\"src/a.py\"]', 'h2', 1007)",
    ],
    "0009_search_filters": [],
    "0010_observation_source": [
        "INSERT INTO observations (id, session_id, project, type, title, content_hash, source,"
        " created_at) VALUES (3, 1, 'proj', 'change', 'Imported', 'h3', 'import', 1008)",
    ],
    "0011_turns_and_supersede": [
        "UPDATE sessions SET transcript_path = '/t.jsonl', transcript_offset = 10 WHERE id = 1",
        "INSERT INTO observations (id, session_id, project, type, title, content_hash,"
        " created_at, superseded_by) VALUES (6, 1, 'proj', 'decision', 'Old', 'h6', 1009, 3)",
    ],
    "0012_fulltext_stemmed": [],
    "0013_git_history": [
        "INSERT INTO git_commits (project, sha, change_key, observation_id, authored_at)"
        " VALUES ('proj', 'a1b2c3d', 'k1', 3, 1010)",
        "INSERT INTO git_history (project, root, head, refreshed_at)"
        " VALUES ('proj', '/src/proj', 'a1b2c3d', 1011)",
    ],
    "0014_vector_text_hash": [
        "INSERT INTO vectors (kind, row_id, model, dim, vector, created_at, text_hash)"
        " VALUES ('observation', 4, 'm@1', 2, x'0000803f00000000', 1010, 'abc')",
    ],
    "0015_transcript_recovery": [
        "UPDATE sessions SET recovered_offset = 20, recovered_turn = 1 WHERE id = 1",
    ],
    "0016_team": [
        "INSERT INTO team_shares (project, shared_at) VALUES ('proj', 1012)",
        "INSERT INTO observations (id, session_id, project, type, title, content_hash,"
        " created_at, author, origin_id) VALUES (7, 1, 'proj', 'discovery', 'Theirs', 'h7',"
        " 1013, 'alice', 'm-2/observation/1')",
        "INSERT INTO team_outbox (op, kind, row_id, project, created_at)"
        " VALUES ('record', 'observation', 4, 'proj', 1014)",
        "INSERT INTO team_cursor (stream, txid, seq) VALUES ('records', '900', 4)",
    ],
    "0017_team_updates": [
        "INSERT INTO team_visible (project) VALUES ('proj')",
    ],
    "0018_decision_validity": [
        "INSERT INTO observations (id, session_id, project, type, title, content_hash,"
        " created_at, valid_from) VALUES (8, 1, 'proj', 'decision', 'Newer', 'h8', 1015, 1015)",
        "UPDATE observations SET superseded_by = 8 WHERE id = 4",
    ],
}


def schema_of(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    rows = conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
    )
    return [(r[0], r[1], r[2] or "") for r in rows]


def test_every_migration_has_seed_data_defined() -> None:
    assert list(SEED_AFTER) == NAMES


def test_fresh_database_has_all_tables_triggers_and_fts(data_dir: Path) -> None:
    with Database() as db:
        conn = db.read()
        assert applied(conn) == NAMES
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        for table in (
            "sessions",
            "user_prompts",
            "observations",
            "session_summaries",
            "tool_uses",
            "queue",
        ):
            assert table in names
        for table in FTS_COLUMNS:
            assert f"{table}_fts" in names
            for suffix in ("ai", "ad", "au"):
                assert f"{table}_{suffix}" in names
        fks = conn.execute("PRAGMA foreign_key_list(observations)").fetchall()
        assert sorted((fk["table"], fk["on_delete"]) for fk in fks) == [
            ("observations", "SET NULL"),  # superseded_by: the replacement may be forgotten
            ("sessions", "CASCADE"),
        ]
        columns = [r["name"] for r in conn.execute("PRAGMA table_info(observations)")]
        for column in (
            "type", "title", "subtitle", "narrative", "facts", "concepts", "files_read",
            "files_modified", "prompt_number", "discovery_tokens", "content_hash", "agent_type",
            "agent_id", "created_at",
        ):  # fmt: skip
            assert column in columns


def test_reopening_applies_nothing(data_dir: Path) -> None:
    Database().close()
    with Database() as db:
        assert db.migrated == []
        assert db.schema_state() == (NAMES, [])
    assert not paths.backups_dir().exists()


@pytest.mark.parametrize("stop_index", range(1, len(NAMES)))
def test_upgrade_from_every_earlier_schema_keeps_data(data_dir: Path, stop_index: int) -> None:
    path = data_dir / "claude-mem.db"
    paths.ensure_data_dir()
    conn = connect(path)
    migrate(conn, stop_before=NAMES[stop_index])
    assert applied(conn) == NAMES[:stop_index]
    for name in NAMES[:stop_index]:
        for statement in SEED_AFTER[name]:
            conn.execute(statement)
    conn.close()

    with Database(path) as db:
        assert db.migrated == NAMES[stop_index:]
        conn = db.read()
        assert conn.execute("SELECT host_session_id FROM sessions").fetchall()[0][0] == "host-1"
        hits = conn.execute(
            "SELECT rowid FROM user_prompts_fts WHERE user_prompts_fts MATCH 'flaky'"
        ).fetchall()
        assert len(hits) == 1  # rows from before the FTS migration were indexed
        if stop_index >= 2:
            hits = conn.execute(
                "SELECT rowid FROM observations_fts WHERE observations_fts MATCH 'scheduler'"
            ).fetchall()
            assert [h[0] for h in hits] == [1]
            # rows from before the source column count as captured by hooks, except memories
            # saved by hand
            sources = dict(conn.execute("SELECT id, source FROM observations WHERE id IN (1, 4)"))
            if "0010_observation_source" in db.migrated:
                assert sources == {1: "hooks", 4: "manual"}
        if "0011_turns_and_supersede" in db.migrated:  # rows from before it: nothing replaced
            assert (
                conn.execute(
                    "SELECT count(*) FROM observations WHERE superseded_by IS NOT NULL"
                ).fetchone()[0]
                == 0
            )
        if "0018_decision_validity" in db.migrated:  # back-filled: from its time, until its
            # successor's (row 6 was superseded by row 3, made at 1008)
            validity = conn.execute(
                "SELECT id, valid_from = created_at, valid_to FROM observations ORDER BY id"
            ).fetchall()
            expected = {6: 1008} if stop_index >= 11 else {}
            assert [tuple(row) for row in validity] == [
                (row_id, 1, expected.get(row_id)) for row_id, _, _ in validity
            ]
        upgraded = schema_of(conn)
    backups = list(paths.backups_dir().iterdir())
    assert len(backups) == 1
    assert NAMES[stop_index - 1] in backups[0].name
    copy = sqlite3.connect(backups[0])
    assert applied(copy) == NAMES[:stop_index]
    copy.close()

    fresh_path = data_dir / "fresh.db"
    with Database(fresh_path) as fresh:
        assert upgraded == schema_of(fresh.read())


def test_empty_database_gets_no_backup(data_dir: Path) -> None:
    Database().close()
    assert not paths.backups_dir().exists()


def test_newer_database_is_refused_untouched(data_dir: Path) -> None:
    Database().close()
    conn = connect(paths.db_path())
    conn.execute("INSERT INTO schema_migrations VALUES ('9999_from_the_future', 1)")
    conn.close()
    with pytest.raises(SchemaError, match=r"newer claude-mem.*9999_from_the_future"):
        Database()


def test_failed_migration_rolls_back_completely(data_dir: Path) -> None:
    paths.ensure_data_dir()
    conn = connect(data_dir / "x.db")
    broken = (
        Migration("0001_ok", "CREATE TABLE a (x INTEGER);"),
        Migration("0002_broken", "CREATE TABLE b (x INTEGER);\nINSERT INTO nowhere VALUES (1);"),
    )
    with pytest.raises(sqlite3.OperationalError, match="nowhere"):
        migrate(conn, migrations=broken)
    assert applied(conn) == ["0001_ok"]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "b" not in tables
    conn.close()


def test_statement_splitter_keeps_trigger_bodies_whole() -> None:
    script = (
        "CREATE TABLE t (x);\n"
        "CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN\n  SELECT 1;\n  SELECT 2;\nEND;\n"
    )
    found = statements(script)
    assert len(found) == 2
    assert found[1].endswith("END;")
    with pytest.raises(ValueError, match="incomplete"):
        statements("CREATE TABLE t (x")


def test_unknown_stop_before_rejected(data_dir: Path) -> None:
    paths.ensure_data_dir()
    conn = connect(data_dir / "y.db")
    with pytest.raises(ValueError, match="unknown migration"):
        migrate(conn, stop_before="nope")
    conn.close()
