"""DDL of each migration. Timestamps are epoch milliseconds; list fields are JSON arrays."""

SESSIONS_AND_PROMPTS = """
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL,
    host_session_id TEXT NOT NULL,
    project TEXT NOT NULL,
    cwd TEXT,
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'failed')),
    first_prompt TEXT,
    prompt_count INTEGER NOT NULL DEFAULT 0,
    started_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    ended_at INTEGER,
    end_reason TEXT,
    UNIQUE (platform, host_session_id)
);
CREATE INDEX idx_sessions_project ON sessions (project, started_at DESC);
CREATE INDEX idx_sessions_started ON sessions (started_at DESC);

CREATE TABLE user_prompts (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    prompt_number INTEGER NOT NULL,
    text TEXT NOT NULL,
    is_private INTEGER NOT NULL DEFAULT 0 CHECK (is_private IN (0, 1)),
    created_at INTEGER NOT NULL,
    UNIQUE (session_id, prompt_number)
);
CREATE INDEX idx_prompts_created ON user_prompts (created_at DESC);
"""

OBSERVATIONS_AND_SUMMARIES = """
CREATE TABLE observations (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    project TEXT NOT NULL,
    type TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    subtitle TEXT NOT NULL DEFAULT '',
    narrative TEXT NOT NULL DEFAULT '',
    facts TEXT NOT NULL DEFAULT '[]',
    concepts TEXT NOT NULL DEFAULT '[]',
    files_read TEXT NOT NULL DEFAULT '[]',
    files_modified TEXT NOT NULL DEFAULT '[]',
    prompt_number INTEGER,
    discovery_tokens INTEGER NOT NULL DEFAULT 0,
    content_hash TEXT NOT NULL,
    agent_type TEXT,
    agent_id TEXT,
    generated_by TEXT,
    created_at INTEGER NOT NULL,
    UNIQUE (session_id, content_hash)
);
CREATE INDEX idx_observations_project ON observations (project, created_at DESC);
CREATE INDEX idx_observations_created ON observations (created_at DESC);
CREATE INDEX idx_observations_type ON observations (type);

CREATE TABLE session_summaries (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    project TEXT NOT NULL,
    request TEXT NOT NULL DEFAULT '',
    investigated TEXT NOT NULL DEFAULT '',
    learned TEXT NOT NULL DEFAULT '',
    completed TEXT NOT NULL DEFAULT '',
    next_steps TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT '',
    prompt_number INTEGER,
    discovery_tokens INTEGER NOT NULL DEFAULT 0,
    generated_by TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX idx_summaries_project ON session_summaries (project, created_at DESC);
CREATE INDEX idx_summaries_session ON session_summaries (session_id);
"""

# External-content FTS5 tables kept in step by triggers; 'rebuild' indexes rows that existed
# before this migration ran (an upgrade from an earlier schema).
_FTS_TEMPLATE = """
CREATE VIRTUAL TABLE {table}_fts USING fts5 (
    {columns},
    content = '{table}',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER {table}_ai AFTER INSERT ON {table} BEGIN
    INSERT INTO {table}_fts (rowid, {columns}) VALUES (new.id, {new});
END;
CREATE TRIGGER {table}_ad AFTER DELETE ON {table} BEGIN
    INSERT INTO {table}_fts ({table}_fts, rowid, {columns}) VALUES ('delete', old.id, {old});
END;
CREATE TRIGGER {table}_au AFTER UPDATE ON {table} BEGIN
    INSERT INTO {table}_fts ({table}_fts, rowid, {columns}) VALUES ('delete', old.id, {old});
    INSERT INTO {table}_fts (rowid, {columns}) VALUES (new.id, {new});
END;
INSERT INTO {table}_fts ({table}_fts) VALUES ('rebuild');
"""

FTS_COLUMNS = {
    "observations": (
        "title",
        "subtitle",
        "narrative",
        "facts",
        "concepts",
        "files_read",
        "files_modified",
    ),
    "session_summaries": (
        "request",
        "investigated",
        "learned",
        "completed",
        "next_steps",
        "notes",
    ),
    "user_prompts": ("text",),
}


def _fts(table: str, columns: tuple[str, ...], template: str = _FTS_TEMPLATE) -> str:
    return template.format(
        table=table,
        columns=", ".join(columns),
        new=", ".join(f"new.{c}" for c in columns),
        old=", ".join(f"old.{c}" for c in columns),
    )


FULLTEXT = "".join(_fts(table, columns) for table, columns in FTS_COLUMNS.items())

TOOL_USES_AND_QUEUE = """
CREATE TABLE tool_uses (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    tool_use_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    tool_input TEXT NOT NULL DEFAULT 'null',
    tool_response TEXT NOT NULL DEFAULT 'null',
    cwd TEXT,
    prompt_number INTEGER,
    agent_type TEXT,
    agent_id TEXT,
    observation_id INTEGER REFERENCES observations (id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (session_id, tool_use_id)
);
CREATE INDEX idx_tool_uses_created ON tool_uses (created_at DESC);

CREATE TABLE queue (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('observation', 'summary')),
    dedup_key TEXT,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'dead')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    available_at INTEGER NOT NULL,
    claimed_at INTEGER,
    created_at INTEGER NOT NULL,
    UNIQUE (session_id, kind, dedup_key)
);
CREATE INDEX idx_queue_ready ON queue (status, available_at, id);
CREATE INDEX idx_queue_session ON queue (session_id, status);
"""

TOKEN_USAGE = """
CREATE TABLE token_usage (
    day TEXT NOT NULL,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    provider TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    calls INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, session_id, provider, model)
);
CREATE INDEX idx_token_usage_session ON token_usage (session_id);
"""

# Embeddings beside their rows. `kind` spans three tables, so no foreign key: triggers make
# deletes propagate, and an edit of the embedded text drops the now-stale vector so the
# background embedder picks the row up again.
_VECTOR_TRIGGERS = {
    "observation": ("observations", "title, subtitle, narrative, facts"),
    "summary": ("session_summaries", "request, learned, completed, next_steps"),
    "prompt": ("user_prompts", "text, is_private"),
}

VECTORS = """
CREATE TABLE vectors (
    kind TEXT NOT NULL CHECK (kind IN ('observation', 'summary', 'prompt')),
    row_id INTEGER NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (kind, row_id)
);
CREATE INDEX idx_vectors_model ON vectors (model, kind, row_id);
""" + "".join(
    f"""
CREATE TRIGGER {table}_vectors_ad AFTER DELETE ON {table} BEGIN
    DELETE FROM vectors WHERE kind = '{kind}' AND row_id = old.id;
END;
CREATE TRIGGER {table}_vectors_au AFTER UPDATE OF {columns} ON {table} BEGIN
    DELETE FROM vectors WHERE kind = '{kind}' AND row_id = old.id;
END;
"""
    for kind, (table, columns) in _VECTOR_TRIGGERS.items()
)

# Knowledge corpora (corpus/): a saved filter, what it selected, its rendering, and the agent
# session primed with it. Kept in the database so backups, restores and exports carry them.
CORPORA = """
CREATE TABLE corpora (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT '',
    filter TEXT NOT NULL DEFAULT '{}',
    stats TEXT NOT NULL DEFAULT '{}',
    system_prompt TEXT NOT NULL DEFAULT '',
    observation_ids TEXT NOT NULL DEFAULT '[]',
    rendered TEXT NOT NULL DEFAULT '',
    session_id TEXT,
    session_provider TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
"""


# Which observations read or modified which file: the file-read gate looks a path up here
# instead of scanning every observation's JSON lists. Kept in step with `observations` by
# triggers (the last two statements index the rows that existed before); rows of a deleted
# observation go by cascade.
def _file_rows(row: str, source: str = "") -> str:
    return "".join(
        f"""
    INSERT OR IGNORE INTO observation_files (path, observation_id, modified)
        SELECT j.value, {row}.id, {modified} FROM {source}json_each(
            CASE WHEN json_valid({row}.{column}) THEN {row}.{column} ELSE '[]' END) AS j
        WHERE j.type = 'text';"""
        for column, modified in (("files_modified", 1), ("files_read", 0))
    )


OBSERVATION_FILES = f"""
CREATE TABLE observation_files (
    path TEXT NOT NULL,
    observation_id INTEGER NOT NULL REFERENCES observations (id) ON DELETE CASCADE,
    modified INTEGER NOT NULL CHECK (modified IN (0, 1)),
    PRIMARY KEY (path, observation_id)
) WITHOUT ROWID;
CREATE INDEX idx_observation_files_observation ON observation_files (observation_id);
CREATE TRIGGER observations_files_ai AFTER INSERT ON observations BEGIN{_file_rows("new")}
END;
CREATE TRIGGER observations_files_au AFTER UPDATE OF files_read, files_modified
ON observations BEGIN
    DELETE FROM observation_files WHERE observation_id = old.id;{_file_rows("new")}
END;
{_file_rows("o", "observations o, ")}
"""

# Full-text search under filters walks matches newest first and tests each one's columns; this
# covering index answers project, date, type and session tests without reading the (large)
# observation row (bench/search_bench.py; search_queries.fulltext_matches uses it by name).
SEARCH_FILTERS = """
CREATE INDEX idx_observations_search_filters
    ON observations (id, project, created_at, type, session_id);
"""

# Where each observation's unit of work came from (vocabulary.ObservationSource). Earlier
# rows keep no trace of an import, so they count as captured by hooks, except the memories
# saved by hand, which their generator names.
OBSERVATION_SOURCE = """
ALTER TABLE observations ADD COLUMN source TEXT NOT NULL DEFAULT 'hooks';
UPDATE observations SET source = 'manual' WHERE generated_by = 'manual';
"""

# Turns: where the host's transcript is and how far it has been read (the offset commits with
# the units built from it), the last prompt turn the agent finished (its Stop), and the link
# from a superseded observation to the one that replaced it (kept, never deleted).
TURNS_AND_SUPERSEDE = """
ALTER TABLE sessions ADD COLUMN transcript_path TEXT;
ALTER TABLE sessions ADD COLUMN transcript_offset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN transcript_turn INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN closed_turn INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observations ADD COLUMN superseded_by INTEGER
    REFERENCES observations (id) ON DELETE SET NULL;
CREATE INDEX idx_observations_superseded ON observations (superseded_by)
    WHERE superseded_by IS NOT NULL;
"""

# Full text matches a word's other forms ("times" finds "time", "retried" finds "retry"): the
# FTS tables are made again with the Porter stemmer over the same tokenizer, and rebuilt. And
# BM25 weighs a record's columns by what they say: its title (a summary's request) says what
# it is about, twice as much as its text, and so do its file lists (a path names what it
# touched as exactly); facts and concepts are evidence, worth half. bench/memory_quality.py
# measures it.
_STEMMED = _FTS_TEMPLATE.replace("tokenize = 'unicode61", "tokenize = 'porter unicode61")
FTS_WEIGHTS: dict[str, tuple[float, ...]] = {
    "observations": (2.0, 1.0, 1.0, 0.5, 0.5, 2.0, 2.0),
    "session_summaries": (2.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    "user_prompts": (1.0,),
}
FULLTEXT_STEMMED = "".join(
    f"""DROP TRIGGER {table}_ai;
DROP TRIGGER {table}_ad;
DROP TRIGGER {table}_au;
DROP TABLE {table}_fts;
"""
    + _fts(table, columns, _STEMMED)
    + f"""INSERT INTO {table}_fts ({table}_fts, rank)
    VALUES ('rank', 'bm25({", ".join(map(str, FTS_WEIGHTS[table]))})');
"""
    for table, columns in FTS_COLUMNS.items()
)

# The project's git history as memory: every commit read (observation or not, so a re-run reads
# only new ones), by project and hash; `change_key` (author email, author time) is what a
# rebase or an amend keeps, so a rewritten history does not double what it re-reads. One
# `git_history` row per project says which HEAD was read in full and where the checkout is.
GIT_HISTORY = """
CREATE TABLE git_commits (
    project TEXT NOT NULL,
    sha TEXT NOT NULL,
    change_key TEXT NOT NULL,
    observation_id INTEGER REFERENCES observations (id) ON DELETE SET NULL,
    skipped TEXT,
    authored_at INTEGER NOT NULL,
    PRIMARY KEY (project, sha)
) WITHOUT ROWID;
CREATE INDEX idx_git_commits_change ON git_commits (project, change_key);
CREATE INDEX idx_git_commits_observation ON git_commits (observation_id)
    WHERE observation_id IS NOT NULL;
-- Session-start context reads a project's newest observations that are not commits; a long
-- history newer than the sessions must not be scanned through.
CREATE INDEX idx_observations_sessions ON observations (project, created_at DESC)
    WHERE source != 'git';
CREATE TABLE git_history (
    project TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    head TEXT,
    commits INTEGER NOT NULL DEFAULT 0,
    refreshed_at INTEGER NOT NULL
);
"""

# The hash of the text each vector embeds (store/vectors.text_hash): a row whose text another
# row's vector already embeds gets a copy instead of a model run. Vectors made before have
# none and are simply not shared until re-embedded.
VECTOR_TEXT_HASH = """
ALTER TABLE vectors ADD COLUMN text_hash TEXT;
CREATE INDEX idx_vectors_text_hash ON vectors (model, text_hash) WHERE text_hash IS NOT NULL;
"""

# How far the worker has recovered a session's transcript (tool calls the hooks never delivered,
# worker/recovery.py) and the prompt turn in effect there. Sessions from before start at the
# turns' offset: everything before it was compressed, so its events had arrived.
TRANSCRIPT_RECOVERY = """
ALTER TABLE sessions ADD COLUMN recovered_offset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN recovered_turn INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET recovered_offset = transcript_offset, recovered_turn = transcript_turn;
"""

# Team memory (team/sync.py). Projects the user shares, and an outbox filled by triggers in the
# transaction of each write, so no shared change is lost between a write and its push: a new
# observation or summary of a shared project that is the user's own (a teammate's copy has an
# `origin_id`), a supersede link to one of the user's own observations, a deletion (a `forget`
# tombstone) and a stored vector of an own row. An outbox row names the local row (`row_id`,
# and `successor_id` for a link, always an own row); the sync thread makes origin ids of them
# when it pushes, a teammate's copy keeping its own (`origin_id`). Pulled rows carry their
# `author` and server `origin_id` (unique); each pulled stream's cursor commits with its rows.
_NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
_TEAM_TABLES = {"observation": "observations", "summary": "session_summaries"}


def _own_shared(row: str) -> str:
    """SQL: whether `row` is the user's own record of a shared project."""
    return (
        f"{row}.origin_id IS NULL"
        f" AND EXISTS (SELECT 1 FROM team_shares WHERE project = {row}.project)"
    )


def _vector_of_own_shared(kind: str) -> str:
    table = _TEAM_TABLES[kind]
    return (
        f"(new.kind = '{kind}' AND EXISTS (SELECT 1 FROM {table} r"
        f" WHERE r.id = new.row_id AND {_own_shared('r')}))"
    )


TEAM = (
    """
CREATE TABLE team_shares (
    project TEXT PRIMARY KEY,
    shared_at INTEGER NOT NULL
);
CREATE TABLE team_outbox (
    id INTEGER PRIMARY KEY,
    op TEXT NOT NULL CHECK (op IN ('record', 'vector', 'supersede', 'forget')),
    kind TEXT NOT NULL CHECK (kind IN ('observation', 'summary')),
    row_id INTEGER NOT NULL,
    project TEXT NOT NULL,
    origin_id TEXT,
    successor_id INTEGER,
    created_at INTEGER NOT NULL
);
CREATE INDEX idx_team_outbox_row ON team_outbox (kind, row_id);
CREATE TABLE team_cursor (
    stream TEXT PRIMARY KEY,
    txid TEXT NOT NULL,
    seq INTEGER NOT NULL
);
"""
    + "".join(
        f"""
ALTER TABLE {table} ADD COLUMN author TEXT;
ALTER TABLE {table} ADD COLUMN origin_id TEXT;
CREATE UNIQUE INDEX idx_{table}_origin ON {table} (origin_id) WHERE origin_id IS NOT NULL;
CREATE TRIGGER {table}_team_ai AFTER INSERT ON {table} WHEN {_own_shared("new")} BEGIN
    INSERT INTO team_outbox (op, kind, row_id, project, created_at)
        VALUES ('record', '{kind}', new.id, new.project, {_NOW_MS});
END;
CREATE TRIGGER {table}_team_ad AFTER DELETE ON {table} WHEN {_own_shared("old")} BEGIN
    INSERT INTO team_outbox (op, kind, row_id, project, created_at)
        VALUES ('forget', '{kind}', old.id, old.project, {_NOW_MS});
END;
"""
        for kind, table in _TEAM_TABLES.items()
    )
    + f"""
CREATE TRIGGER observations_team_au AFTER UPDATE OF superseded_by ON observations
WHEN new.superseded_by IS NOT NULL AND new.superseded_by IS NOT old.superseded_by
    AND EXISTS (SELECT 1 FROM observations s WHERE s.id = new.superseded_by
                AND {_own_shared("s")}) BEGIN
    INSERT INTO team_outbox (op, kind, row_id, project, origin_id, successor_id, created_at)
        VALUES ('supersede', 'observation', new.id, new.project, new.origin_id,
                new.superseded_by, {_NOW_MS});
END;
"""
    + "".join(
        f"""
CREATE TRIGGER vectors_team_{name} AFTER {event} ON vectors
WHEN {" OR ".join(_vector_of_own_shared(kind) for kind in _TEAM_TABLES)} BEGIN
    INSERT INTO team_outbox (op, kind, row_id, project, created_at)
        SELECT 'vector', new.kind, new.row_id, project, {_NOW_MS} FROM (
            SELECT project FROM observations WHERE new.kind = 'observation' AND id = new.row_id
            UNION ALL
            SELECT project FROM session_summaries WHERE new.kind = 'summary' AND id = new.row_id
        );
END;
"""
        for name, event in (("ai", "INSERT"), ("au", "UPDATE"))
    )
)

# Team rows that change after they are queued: an own observation of a shared project edited
# in place (a decision folded into its session's earlier one) is queued again, and pushed
# over its server row; a supersede link is queued whenever it is set or pointed elsewhere and
# one side is the user's own shared row, the other own or a teammate's copy (a history
# decision superseded by a teammate's later one). A link between two teammates' copies came
# from the server. `team_visible` holds the team's shared projects as the last pull saw them:
# one that appears again is pulled from its start.
TEAM_UPDATES = f"""
CREATE TRIGGER observations_team_edit AFTER UPDATE OF content_hash ON observations
WHEN new.content_hash IS NOT old.content_hash AND {_own_shared("new")} BEGIN
    INSERT INTO team_outbox (op, kind, row_id, project, created_at)
        VALUES ('record', 'observation', new.id, new.project, {_NOW_MS});
END;
DROP TRIGGER observations_team_au;
CREATE TRIGGER observations_team_au AFTER UPDATE OF superseded_by ON observations
WHEN new.superseded_by IS NOT NULL AND new.superseded_by IS NOT old.superseded_by
    AND EXISTS (SELECT 1 FROM observations s WHERE s.id = new.superseded_by
                AND ({_own_shared("s")}
                     OR (s.origin_id IS NOT NULL AND {_own_shared("new")}))) BEGIN
    INSERT INTO team_outbox (op, kind, row_id, project, origin_id, successor_id, created_at)
        VALUES ('supersede', 'observation', new.id, new.project, new.origin_id,
                new.superseded_by, {_NOW_MS});
END;
CREATE TABLE team_visible (
    project TEXT PRIMARY KEY
);
"""

# When each observation held (records.Observation): `valid_from` is its time, `valid_to` the
# time of the one that superseded it. A trigger keeps `valid_to` with `superseded_by` on every
# path that links or unlinks (supersede, a session's fold, an import, a team pull, a forgotten
# successor's ON DELETE SET NULL, which makes the older one current again). Existing rows are
# back-filled the same way.
DECISION_VALIDITY = """
ALTER TABLE observations ADD COLUMN valid_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observations ADD COLUMN valid_to INTEGER;
UPDATE observations SET valid_from = created_at;
UPDATE observations SET valid_to = (SELECT s.valid_from FROM observations s
                                    WHERE s.id = observations.superseded_by)
    WHERE superseded_by IS NOT NULL;
CREATE TRIGGER observations_valid_to AFTER UPDATE OF superseded_by ON observations
WHEN new.superseded_by IS NOT old.superseded_by BEGIN
    UPDATE observations SET valid_to = (SELECT s.valid_from FROM observations s
                                        WHERE s.id = new.superseded_by)
        WHERE id = new.id;
END;
"""
