"""`claude-mem import --from-claude-mem`: a database built with the original claude-mem's
schema (inventory §4.1/4.2, below) is imported field by field, read-only, idempotently, and the
imported rows are embedded by the worker."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from claude_mem.store.db import open_database
from tests.worker_fixtures import running_worker

# --- claude-mem's schema at HEAD (13.x): tables, constraints, indexes, FTS5 triggers ----------


SCHEMA = """
CREATE TABLE schema_versions (
    id INTEGER PRIMARY KEY,
    version INTEGER UNIQUE NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE sdk_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content_session_id TEXT NOT NULL,
    memory_session_id TEXT UNIQUE,
    project TEXT NOT NULL,
    platform_source TEXT NOT NULL DEFAULT 'claude',
    user_prompt TEXT,
    started_at TEXT NOT NULL,
    started_at_epoch INTEGER NOT NULL,
    completed_at TEXT,
    completed_at_epoch INTEGER,
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'failed')),
    worker_port INTEGER,
    prompt_counter INTEGER DEFAULT 0,
    custom_title TEXT
);
CREATE INDEX idx_sdk_sessions_claude_id ON sdk_sessions (content_session_id);
CREATE INDEX idx_sdk_sessions_sdk_id ON sdk_sessions (memory_session_id);
CREATE INDEX idx_sdk_sessions_project ON sdk_sessions (project);
CREATE INDEX idx_sdk_sessions_status ON sdk_sessions (status);
CREATE INDEX idx_sdk_sessions_started ON sdk_sessions (started_at_epoch DESC);
CREATE INDEX idx_sdk_sessions_platform_source ON sdk_sessions (platform_source);
CREATE UNIQUE INDEX ux_sdk_sessions_platform_content
    ON sdk_sessions (platform_source, content_session_id);

CREATE TABLE observations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_session_id TEXT NOT NULL,
    project TEXT NOT NULL,
    text TEXT,
    type TEXT NOT NULL,
    title TEXT,
    subtitle TEXT,
    narrative TEXT,
    facts TEXT,
    concepts TEXT,
    files_read TEXT,
    files_modified TEXT,
    prompt_number INTEGER,
    discovery_tokens INTEGER DEFAULT 0,
    created_at TEXT NOT NULL,
    created_at_epoch INTEGER NOT NULL,
    content_hash TEXT,
    generated_by_model TEXT,
    relevance_count INTEGER DEFAULT 0,
    merged_into_project TEXT,
    agent_type TEXT,
    agent_id TEXT,
    metadata TEXT,
    synced_at INTEGER,
    origin_device_id TEXT,
    origin_local_id TEXT,
    sync_rev TEXT NOT NULL DEFAULT '1',
    FOREIGN KEY (memory_session_id) REFERENCES sdk_sessions (memory_session_id)
        ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX idx_observations_sdk_session ON observations (memory_session_id);
CREATE INDEX idx_observations_project ON observations (project);
CREATE INDEX idx_observations_type ON observations (type);
CREATE INDEX idx_observations_created ON observations (created_at_epoch DESC);
CREATE INDEX idx_observations_content_hash ON observations (content_hash, created_at_epoch);
CREATE INDEX idx_observations_merged_into ON observations (merged_into_project);
CREATE INDEX idx_observations_agent_type ON observations (agent_type);
CREATE INDEX idx_observations_agent_id ON observations (agent_id);
CREATE INDEX idx_observations_unsynced ON observations (id) WHERE synced_at IS NULL;
CREATE UNIQUE INDEX ux_observations_session_hash ON observations (memory_session_id, content_hash);
CREATE UNIQUE INDEX ux_observations_origin ON observations (origin_device_id, origin_local_id)
    WHERE origin_device_id IS NOT NULL;

CREATE TABLE session_summaries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_session_id TEXT NOT NULL,
    project TEXT NOT NULL,
    request TEXT,
    investigated TEXT,
    learned TEXT,
    completed TEXT,
    next_steps TEXT,
    files_read TEXT,
    files_edited TEXT,
    notes TEXT,
    prompt_number INTEGER,
    discovery_tokens INTEGER DEFAULT 0,
    created_at TEXT,
    created_at_epoch INTEGER NOT NULL,
    merged_into_project TEXT,
    synced_at INTEGER,
    origin_device_id TEXT,
    origin_local_id TEXT,
    sync_rev TEXT NOT NULL DEFAULT '1',
    FOREIGN KEY (memory_session_id) REFERENCES sdk_sessions (memory_session_id)
        ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX idx_session_summaries_sdk_session ON session_summaries (memory_session_id);
CREATE INDEX idx_session_summaries_project ON session_summaries (project);
CREATE INDEX idx_session_summaries_created ON session_summaries (created_at_epoch DESC);
CREATE INDEX idx_summaries_merged_into ON session_summaries (merged_into_project);
CREATE INDEX idx_session_summaries_unsynced ON session_summaries (id) WHERE synced_at IS NULL;
CREATE UNIQUE INDEX ux_session_summaries_origin
    ON session_summaries (origin_device_id, origin_local_id) WHERE origin_device_id IS NOT NULL;

CREATE TABLE user_prompts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_db_id INTEGER REFERENCES sdk_sessions (id) ON DELETE CASCADE,
    content_session_id TEXT NOT NULL,
    prompt_number INTEGER NOT NULL,
    prompt_text TEXT NOT NULL,
    created_at TEXT,
    created_at_epoch INTEGER NOT NULL,
    synced_at INTEGER,
    origin_device_id TEXT,
    origin_local_id TEXT,
    sync_rev TEXT NOT NULL DEFAULT '1'
);
CREATE INDEX idx_user_prompts_session ON user_prompts (session_db_id);
CREATE INDEX idx_user_prompts_claude_session ON user_prompts (content_session_id);
CREATE INDEX idx_user_prompts_created ON user_prompts (created_at_epoch DESC);
CREATE INDEX idx_user_prompts_prompt_number ON user_prompts (prompt_number);
CREATE INDEX idx_user_prompts_lookup ON user_prompts (session_db_id, prompt_number);
CREATE INDEX idx_user_prompts_content_lookup ON user_prompts (content_session_id, prompt_number);
CREATE INDEX idx_user_prompts_unsynced ON user_prompts (id) WHERE synced_at IS NULL;
CREATE UNIQUE INDEX ux_user_prompts_origin ON user_prompts (origin_device_id, origin_local_id)
    WHERE origin_device_id IS NOT NULL;

CREATE TABLE pending_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_db_id INTEGER NOT NULL REFERENCES sdk_sessions (id) ON DELETE CASCADE,
    content_session_id TEXT NOT NULL,
    message_type TEXT NOT NULL CHECK (message_type IN ('observation', 'summarize')),
    tool_name TEXT,
    tool_input TEXT,
    tool_response TEXT,
    cwd TEXT,
    last_user_message TEXT,
    last_assistant_message TEXT,
    prompt_number INTEGER,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing')),
    created_at_epoch INTEGER NOT NULL,
    agent_type TEXT,
    agent_id TEXT,
    tool_use_id TEXT
);
CREATE UNIQUE INDEX ux_pending_session_tool ON pending_messages (session_db_id, tool_use_id)
    WHERE tool_use_id IS NOT NULL;
"""

_FTS = {
    "observations": ("title", "subtitle", "narrative", "text", "facts", "concepts"),
    "session_summaries": ("request", "investigated", "learned", "completed", "next_steps", "notes"),
    "user_prompts": ("prompt_text",),
}


def _fts(table: str, columns: tuple[str, ...]) -> str:
    cols = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    return f"""
CREATE VIRTUAL TABLE {table}_fts USING fts5 ({cols}, content='{table}', content_rowid='id');
CREATE TRIGGER {table}_ai AFTER INSERT ON {table} BEGIN
    INSERT INTO {table}_fts (rowid, {cols}) VALUES (new.id, {new});
END;
CREATE TRIGGER {table}_ad AFTER DELETE ON {table} BEGIN
    INSERT INTO {table}_fts ({table}_fts, rowid, {cols}) VALUES ('delete', old.id, {old});
END;
CREATE TRIGGER {table}_au AFTER UPDATE ON {table} BEGIN
    INSERT INTO {table}_fts ({table}_fts, rowid, {cols}) VALUES ('delete', old.id, {old});
    INSERT INTO {table}_fts (rowid, {cols}) VALUES (new.id, {new});
END;
"""


VERSIONS = (4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 20, 21, 22, 23, 24, 26, 27, 28, 29, 30, 31, 32,
            33, 34, 35, 39, 41, 42, 44, 45, 46, 47, 48, 49)  # fmt: skip


def create(path: Path) -> sqlite3.Connection:
    """A new database at `path` with claude-mem's schema (WAL, foreign keys on, like it)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.executescript(SCHEMA + "".join(_fts(t, c) for t, c in _FTS.items()))
    conn.executemany(
        "INSERT INTO schema_versions (version, applied_at) VALUES (?, '2026-01-01T00:00:00Z')",
        [(v,) for v in VERSIONS],
    )
    return conn


# --- the tests --------------------------------------------------------------------------------

BIN = Path(sys.executable).with_name("claude-mem")
EPOCH = 1_767_225_600_000  # 2026-01-01T00:00:00Z
PRIVATE = "the private launch date"


def cli(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ) | ({"HOME": str(home)} if home else {})
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False)  # fmt: skip


def populate(conn: sqlite3.Connection) -> None:
    """Sessions of three platforms, prompts, observations (one legacy, one with a private part),
    summaries (one with legacy file columns) and a manual memory, as claude-mem writes them."""
    sessions = [
        (1, "cc-1", "mem-1", "old-shop", "claude", "Fix <private>the secret</private> totals",
         EPOCH, EPOCH + 600_000, "completed", "Totals title"),
        (2, "cx-2", "mem-2", "blog", "codex", "Add preview", EPOCH + 1000, None, "active", None),
        (3, "gm-3", None, "blog", "gemini", "No memory yet", EPOCH + 2000, None, "failed", None),
        (4, "manual-content-blog", "manual-blog", "blog", "claude", None, EPOCH + 3000, None,
         "active", None),
    ]  # fmt: skip
    for sid, content, memory, project, platform, prompt, start, end, status, title in sessions:
        conn.execute(
            """INSERT INTO sdk_sessions (id, content_session_id, memory_session_id, project,
                   platform_source, user_prompt, started_at, started_at_epoch, completed_at,
                   completed_at_epoch, status, worker_port, prompt_counter, custom_title)
               VALUES (?, ?, ?, ?, ?, ?, 'iso', ?, 'iso', ?, ?, 37777, 0, ?)""",
            (sid, content, memory, project, platform, prompt, start, end, status, title),
        )
    prompts = [
        (1, "cc-1", 1, "Fix <private>the secret</private> totals", EPOCH + 10),
        (1, "cc-1", 2, "<private>only private</private>", EPOCH + 20),
        (None, "cx-2", 1, "Add preview", EPOCH + 1010),
    ]
    for session_db_id, content, number, text, at in prompts:
        conn.execute(
            """INSERT INTO user_prompts (session_db_id, content_session_id, prompt_number,
                   prompt_text, created_at, created_at_epoch) VALUES (?, ?, ?, ?, 'iso', ?)""",
            (session_db_id, content, number, text, at),
        )
    observations = [
        ("mem-1", "old-shop", None, "bugfix", "Fixed cart rounding", "Totals",
         f"Float sums drifted. <private>{PRIVATE}</private>", '["total() uses Decimal"]',
         '["gotcha", "pattern"]', '["src/cart.py"]', '["src/cart.py", "tests/test_cart.py"]',
         1, 1234, EPOCH + 100, "claude-haiku-4-5", "reviewer", "agent-7"),
        ("mem-1", "old-shop", "Legacy free text observation", "discovery", None, None, None,
         None, None, None, None, None, 0, EPOCH + 200, None, None, None),
        ("mem-2", "blog", None, "feature", "Markdown preview", "", "Live preview.", "[]",
         '"not-a-list"', "[]", "[]", 1, 10, EPOCH + 1100, "gemini-2.5-flash", None, None),
        ("manual-blog", "blog", None, "discovery", "Deploys need VPN", "Manual memory",
         "Deploys need VPN.", "[]", "[]", "[]", "[]", None, 0, EPOCH + 3100, None, None, None),
    ]  # fmt: skip
    for obs_row in observations:
        conn.execute(
            """INSERT INTO observations (memory_session_id, project, text, type, title, subtitle,
                   narrative, facts, concepts, files_read, files_modified, prompt_number,
                   discovery_tokens, created_at, created_at_epoch, content_hash,
                   generated_by_model, agent_type, agent_id)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'iso', ?, hex(randomblob(8)),
                   ?, ?, ?)""",
            obs_row,
        )
    summaries = [
        ("mem-1", "old-shop", "Fix totals", "cart.py", "Floats drift", "Decimal totals",
         "Add tests", "Reviewed", '["src/cart.py"]', '["src/cart.py"]', 2, 300, EPOCH + 500),
        ("mem-2", "blog", "Preview", None, None, None, None, None, None, None, None, 0,
         EPOCH + 1500),
    ]  # fmt: skip
    for row in summaries:
        conn.execute(
            """INSERT INTO session_summaries (memory_session_id, project, request, investigated,
                   learned, completed, next_steps, notes, files_read, files_edited,
                   prompt_number, discovery_tokens, created_at, created_at_epoch)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'iso', ?)""",
            row,
        )


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "claude-mem.db"
    conn = create(path)
    populate(conn)
    conn.close()
    return path


def digest(path: Path) -> tuple[str, int]:
    """The database file's hash and how many bytes its write-ahead log holds (SQLite may
    create an empty -wal beside a WAL database even for a read-only reader)."""
    wal = path.with_name(path.name + "-wal")
    return hashlib.sha256(path.read_bytes()).hexdigest(), wal.stat().st_size if wal.exists() else 0


def rows(sql: str) -> list[dict[str, Any]]:
    with open_database() as db:
        return [dict(r) for r in db.read().execute(sql)]


def test_every_field_is_mapped_and_the_source_is_untouched(source: Path) -> None:
    before = digest(source)
    done = cli("import", "--from-claude-mem", str(source), "--map-project", "old-shop=shop",
               "--json")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["imported"] == {"session": 4, "prompt": 3, "observation": 4, "summary": 2}
    assert result["orphans"] == 0
    assert digest(source) == before  # opened read-only: not a byte changed

    sessions = rows("SELECT * FROM sessions ORDER BY id")
    assert [(s["platform"], s["host_session_id"], s["project"], s["status"]) for s in sessions] == [
        ("claude-code", "cc-1", "shop", "completed"),
        ("codex", "cx-2", "blog", "active"),
        ("gemini-cli", "gm-3", "blog", "failed"),
        ("manual", "manual:blog", "blog", "active"),
    ]
    first = sessions[0]
    assert (first["started_at"], first["ended_at"], first["updated_at"]) == (
        EPOCH, EPOCH + 600_000, EPOCH + 600_000)  # fmt: skip
    assert first["first_prompt"] == "Fix  totals"  # tags stripped again on the way in
    assert first["prompt_count"] == 2
    assert sessions[1]["ended_at"] is None

    prompts = rows("SELECT * FROM user_prompts ORDER BY id")
    assert [(p["session_id"], p["prompt_number"], p["text"], p["is_private"], p["created_at"])
            for p in prompts] == [
        (sessions[0]["id"], 1, "Fix  totals", 0, EPOCH + 10),
        (sessions[0]["id"], 2, "", 1, EPOCH + 20),  # private as a whole: number kept, no text
        (sessions[1]["id"], 1, "Add preview", 0, EPOCH + 1010),  # found by content session id
    ]  # fmt: skip

    obs = rows("SELECT * FROM observations ORDER BY created_at")
    assert obs[0] | {"id": 0, "content_hash": ""} == {
        "id": 0, "session_id": sessions[0]["id"], "project": "shop", "type": "bugfix",
        "title": "Fixed cart rounding", "subtitle": "Totals", "narrative": "Float sums drifted.",
        "facts": '["total() uses Decimal"]', "concepts": '["gotcha", "pattern"]',
        "files_read": '["src/cart.py"]', "files_modified": '["src/cart.py", "tests/test_cart.py"]',
        "prompt_number": 1, "discovery_tokens": 1234, "content_hash": "",
        "agent_type": "reviewer", "agent_id": "agent-7", "generated_by": "claude-haiku-4-5",
        "source": "import", "created_at": EPOCH + 100, "superseded_by": None,
        "valid_from": EPOCH + 100, "valid_to": None, "author": None, "origin_id": None,
    }  # fmt: skip
    assert (obs[1]["narrative"], obs[1]["title"], obs[1]["facts"]) == (
        "Legacy free text observation", "", "[]")  # fmt: skip
    assert (obs[2]["concepts"], obs[2]["generated_by"]) == ('["not-a-list"]', "gemini-2.5-flash")
    assert obs[3]["session_id"] == sessions[3]["id"]

    summaries = rows("SELECT * FROM session_summaries ORDER BY id")
    assert summaries[0] | {"id": 0} == {
        "id": 0, "session_id": sessions[0]["id"], "project": "shop", "request": "Fix totals",
        "investigated": "cart.py", "learned": "Floats drift", "completed": "Decimal totals",
        "next_steps": "Add tests",
        "notes": "Reviewed\nFiles read: src/cart.py\nFiles edited: src/cart.py",
        "prompt_number": 2, "discovery_tokens": 300, "generated_by": None,
        "created_at": EPOCH + 500, "author": None, "origin_id": None,
    }  # fmt: skip
    assert summaries[1]["request"] == "Preview"

    with open_database() as db:
        text = "\n".join(str(tuple(r)) for r in db.read().execute("SELECT * FROM observations"))
    assert PRIVATE not in text


def test_importing_twice_adds_nothing_and_default_path_is_home(
    source: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".claude-mem").mkdir(parents=True)
    source.rename(home / ".claude-mem" / "claude-mem.db")
    assert cli("import", "--from-claude-mem", home=home).returncode == 0
    again = cli("import", "--from-claude-mem", "--json", home=home)
    result = json.loads(again.stdout)
    assert result["imported"] == {"session": 0, "prompt": 0, "observation": 0, "summary": 0}
    assert result["skipped"] == {"session": 4, "prompt": 3, "observation": 4, "summary": 2}
    assert result["source"] == str(home / ".claude-mem" / "claude-mem.db")
    assert len(rows("SELECT id FROM observations")) == 4


def test_unusable_sources_are_refused(tmp_path: Path) -> None:
    missing = cli("import", "--from-claude-mem", str(tmp_path / "nope.db"))
    assert missing.returncode == 2
    assert "no such file" in missing.stderr
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    refused = cli("import", "--from-claude-mem", str(other))
    assert "not a claude-mem database (no sdk_sessions, observations" in refused.stderr
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not sqlite at all" * 100)
    assert "not a readable SQLite database" in cli("import", "--from-claude-mem",
                                                   str(garbage)).stderr  # fmt: skip
    bad_map = cli("import", "--from-claude-mem", str(other), "--map-project", "nope")
    assert "use OLD=NEW" in bad_map.stderr
    assert rows("SELECT id FROM sessions") == []


def test_imported_rows_are_embedded_by_a_running_worker(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedder finds rows that have no vector (store.vectors.missing) on its next poll,
    so an import needs no extra step: here the worker runs while the CLI imports."""
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "minilm-l6-int8")
    with running_worker() as worker:
        assert cli("import", "--from-claude-mem", str(source)).returncode == 0
        deadline = time.monotonic() + 60
        counts: dict[str, int] = {}
        while time.monotonic() < deadline:
            with open_database() as db:
                counts = dict(db.read().execute(
                    "SELECT kind, count(*) FROM vectors GROUP BY kind").fetchall())  # fmt: skip
            if counts == {"observation": 4, "summary": 2, "prompt": 2}:
                break
            time.sleep(0.2)
        assert counts == {"observation": 4, "summary": 2, "prompt": 2}  # private prompt: none
        found = worker.client.get("/api/search", params={"query": "floating point money"})
        assert found.json()["mode"] == "hybrid"
