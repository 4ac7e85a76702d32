"""The team server's schema: named migrations, each in one transaction with its record.

Everything lives in the `claude_mem` schema of the team's database. Access control is the
engine's: a member is a PostgreSQL login role, granted `claude_mem_reader` (read) and, unless
read-only, `claude_mem_writer` (append); row-level security limits every row to the member's
own team (`claude_mem.current_team()`, the team of `session_user`) and records to the
projects that team shares: a project is shared while at least one member shares it (one
`shared_projects` row per member who does). Rows are appended; a record is rewritten only by
its author (its embedding filled in, its content edited) and a supersede link when it changes
(`_UPDATES`): forgets and supersede links are rows of `events`. Each row
carries the transaction that wrote it (`txid`), so a reader can take rows in commit-safe
order: everything below `pg_snapshot_xmin(pg_current_snapshot())` has committed or never will.
Full text is the one read that is not a member's own statement: under row-level security it
could not use the GIN index, so `claude_mem.matching` (SECURITY DEFINER, readers only) picks
the records to score under the read policy's own conditions, and hands back only their seqs;
it reads `record_words`, a narrow copy of what it needs that the server keeps in step.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psycopg

READER = "claude_mem_reader"
WRITER = "claude_mem_writer"
DIMENSIONS = 384  # the local embedding model's (search/embed.py); vectors are pushed as made


class TeamSchemaError(RuntimeError):
    """The server's schema is newer than this version knows; the message says so."""


@dataclass(frozen=True, slots=True)
class Migration:
    name: str
    sql: str


_ROLES = f"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{READER}') THEN
        CREATE ROLE {READER} NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{WRITER}') THEN
        CREATE ROLE {WRITER} NOLOGIN;
    END IF;
END
$$;
"""

_TABLES = f"""
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE claude_mem.teams (
    id bigserial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE claude_mem.members (
    role name PRIMARY KEY,
    team_id bigint NOT NULL REFERENCES claude_mem.teams (id),
    can_write boolean NOT NULL DEFAULT true,
    added_at timestamptz NOT NULL DEFAULT now()
);

-- The team of the connected member (NULL for anyone else). SECURITY DEFINER: members may
-- not read the membership table freely, and session_user (not current_user) is who logged in.
CREATE FUNCTION claude_mem.current_team() RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT team_id FROM claude_mem.members WHERE role = session_user
$$;

CREATE TABLE claude_mem.shared_projects (
    team_id bigint NOT NULL DEFAULT claude_mem.current_team() REFERENCES claude_mem.teams (id),
    project text NOT NULL,
    shared_by name NOT NULL DEFAULT session_user,
    shared_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, project, shared_by)
);

-- Code stays searchable: no stemming, no stop words, and paths and identifiers split into
-- their parts (`src/store.py` → src, store, py) on both sides, text and query alike, so any
-- part, or the whole, finds it.
CREATE TEXT SEARCH CONFIGURATION claude_mem.code (COPY = pg_catalog.simple);
CREATE FUNCTION claude_mem.code_words(text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN translate($1, '/._-:', '     ');

CREATE TABLE claude_mem.records (
    seq bigserial PRIMARY KEY,
    txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    team_id bigint NOT NULL DEFAULT claude_mem.current_team() REFERENCES claude_mem.teams (id),
    origin_id text NOT NULL,
    content_hash text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('observation', 'summary')),
    project text NOT NULL,
    type text,
    title text,
    created_at bigint NOT NULL,
    member name NOT NULL DEFAULT session_user,
    machine text NOT NULL,
    source_session text NOT NULL,
    body jsonb NOT NULL,
    search_text text NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (
        to_tsvector('claude_mem.code'::regconfig, claude_mem.code_words(search_text))
    ) STORED,
    embedding vector({DIMENSIONS}),
    UNIQUE (team_id, origin_id)
);
CREATE INDEX records_pull ON claude_mem.records (team_id, txid, seq);
CREATE INDEX records_project ON claude_mem.records (team_id, project, created_at);
CREATE INDEX records_tsv ON claude_mem.records USING gin (tsv);
-- A kind's nearest vectors (team/search.py asks per kind): a rare kind is read through this
-- and sorted, rather than walking the whole HNSW graph past the other kind's rows.
CREATE INDEX records_kind ON claude_mem.records (team_id, kind);
CREATE INDEX records_embedding ON claude_mem.records USING hnsw (embedding vector_cosine_ops);

CREATE TABLE claude_mem.events (
    seq bigserial PRIMARY KEY,
    txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    team_id bigint NOT NULL DEFAULT claude_mem.current_team() REFERENCES claude_mem.teams (id),
    kind text NOT NULL CHECK (kind IN ('supersede', 'forget')),
    project text NOT NULL,
    origin_id text NOT NULL,
    successor_origin_id text,
    member name NOT NULL DEFAULT session_user,
    machine text NOT NULL,
    created_at bigint NOT NULL,
    UNIQUE (team_id, kind, origin_id)
);
CREATE INDEX events_pull ON claude_mem.events (team_id, txid, seq);
"""

# The member's team and its shared projects, computed once per statement (an InitPlan), not
# once per row: a correlated subquery and a SECURITY DEFINER call per row made every scan by a
# member several times slower (bench/team_bench.py).
_TEAM = "team_id = (SELECT claude_mem.current_team())"
_SHARED = """project = ANY (ARRAY(SELECT s.project FROM claude_mem.shared_projects s
        WHERE s.team_id = (SELECT claude_mem.current_team())))"""

# Who may do what. Reading and appending are separate grants; row-level security then limits
# every statement to the member's team (and records to its shared projects).
_ACCESS = f"""
GRANT USAGE ON SCHEMA claude_mem TO {READER}, {WRITER};
GRANT EXECUTE ON FUNCTION claude_mem.current_team() TO {READER}, {WRITER};
GRANT EXECUTE ON FUNCTION claude_mem.code_words(text) TO {READER};
GRANT SELECT ON claude_mem.teams, claude_mem.members, claude_mem.shared_projects,
    claude_mem.records, claude_mem.events TO {READER};
GRANT SELECT ON claude_mem.shared_projects TO {WRITER};
GRANT INSERT, DELETE ON claude_mem.shared_projects TO {WRITER};
GRANT INSERT ON claude_mem.records, claude_mem.events TO {WRITER};
GRANT UPDATE (embedding) ON claude_mem.records TO {WRITER};
GRANT USAGE ON SEQUENCE claude_mem.records_seq_seq, claude_mem.events_seq_seq TO {WRITER};
REVOKE ALL ON FUNCTION claude_mem.current_team() FROM PUBLIC;

ALTER TABLE claude_mem.teams ENABLE ROW LEVEL SECURITY;
ALTER TABLE claude_mem.members ENABLE ROW LEVEL SECURITY;
ALTER TABLE claude_mem.shared_projects ENABLE ROW LEVEL SECURITY;
ALTER TABLE claude_mem.records ENABLE ROW LEVEL SECURITY;
ALTER TABLE claude_mem.events ENABLE ROW LEVEL SECURITY;

CREATE POLICY own_team ON claude_mem.teams FOR SELECT
    USING (id = claude_mem.current_team());
CREATE POLICY own_team ON claude_mem.members FOR SELECT
    USING (team_id = claude_mem.current_team());
CREATE POLICY own_team ON claude_mem.shared_projects FOR SELECT
    USING (team_id = claude_mem.current_team());
CREATE POLICY share ON claude_mem.shared_projects FOR INSERT
    WITH CHECK (team_id = claude_mem.current_team() AND shared_by = session_user);
CREATE POLICY unshare ON claude_mem.shared_projects FOR DELETE
    USING (team_id = claude_mem.current_team() AND shared_by = session_user);

CREATE POLICY read_shared ON claude_mem.records FOR SELECT USING ({_TEAM} AND {_SHARED});
CREATE POLICY append_own ON claude_mem.records FOR INSERT
    WITH CHECK ({_TEAM} AND member = session_user AND {_SHARED});
CREATE POLICY embed_own ON claude_mem.records FOR UPDATE
    USING (team_id = claude_mem.current_team() AND member = session_user)
    WITH CHECK (team_id = claude_mem.current_team() AND member = session_user);

CREATE POLICY read_shared ON claude_mem.events FOR SELECT USING ({_TEAM} AND {_SHARED});
CREATE POLICY append_own ON claude_mem.events FOR INSERT
    WITH CHECK (team_id = claude_mem.current_team() AND member = session_user);
"""

# What a search may be limited to (team/search.py's filters), as conditions on records `r`,
# written once for both sides: the member's own statements (psycopg's named parameters) and
# `matching`'s (its arguments). A NULL filters nothing; a forgotten record never passes.
# The filters on columns that `record_words` holds too; those that look inside the body; and
# the one no record passes once forgotten.
_COLUMN_FILTERS = """r.kind = ANY(%(kinds)s::text[])
    AND (%(projects)s::text[] IS NULL OR r.project = ANY(%(projects)s::text[]))
    AND (%(types)s::text[] IS NULL OR r.type = ANY(%(types)s::text[]))
    AND (%(since)s::bigint IS NULL OR r.created_at >= %(since)s::bigint)
    AND (%(until)s::bigint IS NULL OR r.created_at <= %(until)s::bigint)"""
_BODY_FILTERS = """
    AND (%(platforms)s::text[] IS NULL OR r.body->>'platform' = ANY(%(platforms)s::text[]))
    AND (%(concepts)s::text[] IS NULL
         OR COALESCE(r.body->'fields'->'concepts', '[]') ?| %(concepts)s::text[])
    AND (%(files)s::text[] IS NULL OR EXISTS (
        SELECT 1 FROM jsonb_array_elements_text(COALESCE(r.body->'fields'->'files_read', '[]')
            || COALESCE(r.body->'fields'->'files_modified', '[]')) AS f(path)
        WHERE f.path = ANY(%(files)s::text[]) OR EXISTS (
            SELECT 1 FROM unnest(%(folders)s::text[]) AS d(folder)
            WHERE starts_with(f.path, d.folder))))"""
_NOT_FORGOTTEN = """
    AND NOT EXISTS (SELECT 1 FROM claude_mem.events e WHERE e.team_id = r.team_id
        AND e.kind = 'forget' AND e.origin_id = r.origin_id)"""
SEARCH_FILTERS = _COLUMN_FILTERS + _BODY_FILTERS + _NOT_FORGOTTEN
SEARCH_FILTER_NAMES = (
    "kinds", "projects", "types", "since", "until", "platforms", "concepts", "files", "folders"
)  # fmt: skip
_MATCHING_ARGS = ", ".join(
    f"{name} {'bigint' if name in ('since', 'until') else 'text[]'}" for name in SEARCH_FILTER_NAMES
)
# The newest $3 records holding $1 (older than $2 if set) under the filters ($4…).
_WINDOW = (
    "SELECT r.seq FROM claude_mem.records r"
    f" WHERE r.tsv @@ $1 AND ($2::bigint IS NULL OR r.seq < $2) AND {_TEAM} AND {_SHARED} AND "
    + SEARCH_FILTERS % {name: f"${n}" for n, name in enumerate(SEARCH_FILTER_NAMES, 4)}
    + " ORDER BY r.seq DESC LIMIT $3"
)

_FILTER_VALUES = ", ".join(SEARCH_FILTER_NAMES)  # matching's arguments, passed on
# `matching`'s body on `records`: the newest `lim` holding any word into `newest`, then, if
# that window is full, the newest `lim` older ones holding every word.
_RECORD_WINDOWS = f"""\
    EXECUTE $q$SELECT array_agg(seq ORDER BY seq DESC) FROM ({_WINDOW}) w$q$
        INTO newest USING any_words, NULL::bigint, lim, {_FILTER_VALUES};
    RETURN QUERY SELECT unnest(newest);
    IF all_words IS NOT NULL AND cardinality(newest) = lim THEN
        RETURN QUERY EXECUTE $q${_WINDOW}$q$
            USING all_words, newest[lim], lim, {_FILTER_VALUES};
    END IF;"""

# Full text for members. Row-level security keeps a member's statement from evaluating `@@`
# (not leakproof) before the policy's conditions, so it could never use the GIN index: every
# member's full-text search read the whole table. This function picks the records to score
# itself, as the schema's owner, under the read policy's own conditions (the caller's team,
# its shared projects: `_TEAM`, `_SHARED`) and the filters, so it returns nothing its caller
# could not read, and only seqs: the member's own statement reads and ranks those rows under
# row-level security. As local search (`search_queries.fulltext_matches`): the newest `lim`
# holding any word, then, if that window is full and `all_words` is given, the newest `lim`
# holding every word older than it (the newer ones were in it). EXECUTE: each statement is
# planned for its values, so an unset filter costs nothing.
_SEARCH = f"""
CREATE FUNCTION claude_mem.matching(
    any_words tsquery, all_words tsquery, lim integer, {_MATCHING_ARGS})
RETURNS SETOF bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
    newest bigint[];
BEGIN
{_RECORD_WINDOWS}
END
$fn$;
REVOKE ALL ON FUNCTION claude_mem.matching FROM PUBLIC;
GRANT EXECUTE ON FUNCTION claude_mem.matching TO {READER};
"""

# Full text's own narrow table. `matching` read `records` for every match of the words (a
# GIN bitmap can't stop at the newest): wide rows, about a heap page per match of a frequent
# word pair, more pages than the server caches. `record_words` holds just the columns the
# usual filters need and the words without their positions (`strip`: what `@@` needs unless
# the query is a phrase), so the same scan reads a few small pages. The server keeps it in
# step (triggers: a push need not know it): a record's row is added with it, unless the record
# is forgotten already, and removed when a `forget` event arrives. Members get no grant on it:
# only `matching` (SECURITY DEFINER) reads it, under the read policy's conditions. A search
# that filters on what only the body holds (platforms, concepts, files), or whose words make a
# phrase, reads `records` as before.

# The newest $4 records in seqs [$2, $3) holding $1 under the filters ($5…).
_WORDS_RANGE = (
    "SELECT r.seq FROM claude_mem.record_words r"
    f" WHERE r.tsv @@ $1 AND r.seq >= $2 AND r.seq < $3 AND {_TEAM} AND {_SHARED} AND "
    + _COLUMN_FILTERS % {name: f"${n}" for n, name in enumerate(SEARCH_FILTER_NAMES, 5)}
    + " ORDER BY r.seq DESC LIMIT $4"
)
_WORDS_COLUMNS = "seq, team_id, created_at, kind, project, type, tsv"
_WORDS_ROWS = f"""SELECT seq, team_id, created_at, kind, project, type, strip(tsv)
    FROM {{source}} r WHERE TRUE {_NOT_FORGOTTEN}"""
_RECORD_WORDS = f"""
CREATE TABLE claude_mem.record_words (
    seq bigint PRIMARY KEY,  -- a records seq (no foreign key: records are never deleted)
    team_id bigint NOT NULL,
    created_at bigint NOT NULL,
    kind text NOT NULL,
    project text NOT NULL,
    type text,
    tsv tsvector NOT NULL
);
ALTER TABLE claude_mem.record_words ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON claude_mem.record_words FROM PUBLIC;

INSERT INTO claude_mem.record_words ({_WORDS_COLUMNS})
{_WORDS_ROWS.format(source="claude_mem.records")};
CREATE INDEX record_words_tsv ON claude_mem.record_words USING gin (tsv);
-- A project filter's rows of a range of seqs: ANDed with the words' bitmap, so the heap is
-- read only for the matches in those projects.
CREATE INDEX record_words_project ON claude_mem.record_words (team_id, project, seq);

CREATE FUNCTION claude_mem.add_record_words() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
    INSERT INTO claude_mem.record_words ({_WORDS_COLUMNS})
    {_WORDS_ROWS.format(source="added")};
    RETURN NULL;
END
$fn$;
CREATE TRIGGER record_words AFTER INSERT ON claude_mem.records
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT
    EXECUTE FUNCTION claude_mem.add_record_words();

CREATE FUNCTION claude_mem.drop_forgotten_words() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
    DELETE FROM claude_mem.record_words w USING added e, claude_mem.records r
    WHERE e.kind = 'forget' AND r.team_id = e.team_id AND r.origin_id = e.origin_id
      AND w.seq = r.seq;
    RETURN NULL;
END
$fn$;
CREATE TRIGGER record_words AFTER INSERT ON claude_mem.events
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT
    EXECUTE FUNCTION claude_mem.drop_forgotten_words();
REVOKE ALL ON FUNCTION claude_mem.add_record_words(), claude_mem.drop_forgotten_words()
    FROM PUBLIC;

-- A window from `record_words`: the newest `lim` records holding `words` below `below` (NULL:
-- any). A GIN bitmap finds every match, and a frequent word pair's matches are spread over
-- most of the table, so the heap is read in ranges of seqs, newest first, each sized for
-- what is missing at the density of matches seen so far (four times wider after none),
-- until the window is full: the same records, a few pages read.
CREATE FUNCTION claude_mem.newest_words(
    words tsquery, below bigint, lim integer, {_MATCHING_ARGS})
RETURNS bigint[]
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
    found bigint[] := '{{}}';
    more bigint[];
    high bigint := coalesce(below, (SELECT max(seq) + 1 FROM claude_mem.record_words));
    span bigint := lim * 8;
BEGIN
    WHILE high > 0 AND cardinality(found) < lim LOOP
        EXECUTE $q$SELECT array_agg(seq ORDER BY seq DESC) FROM ({_WORDS_RANGE}) w$q$
            INTO more USING words, high - span, high, lim - cardinality(found), {_FILTER_VALUES};
        found := found || coalesce(more, '{{}}');
        high := high - span;
        -- The next range: wide enough for what is missing at the density just seen.
        span := CASE WHEN more IS NULL THEN span * 4
                     ELSE greatest(lim, ceil(span * (lim - cardinality(found)) * 1.25
                                             / cardinality(more))::bigint) END;
    END LOOP;
    RETURN found;
END
$fn$;
REVOKE ALL ON FUNCTION claude_mem.newest_words FROM PUBLIC;

-- As 0004's, the windows read from `record_words` when it can answer them.
CREATE OR REPLACE FUNCTION claude_mem.matching(
    any_words tsquery, all_words tsquery, lim integer, {_MATCHING_ARGS})
RETURNS SETOF bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
    newest bigint[];
BEGIN
    IF platforms IS NOT NULL OR concepts IS NOT NULL OR files IS NOT NULL
       OR strpos(any_words::text, '<') > 0 OR strpos(all_words::text, '<') > 0 THEN
{textwrap.indent(_RECORD_WINDOWS, "    ")}
        RETURN;
    END IF;
    newest := claude_mem.newest_words(any_words, NULL, lim, {_FILTER_VALUES});
    RETURN QUERY SELECT unnest(newest);
    IF all_words IS NOT NULL AND cardinality(newest) = lim THEN
        RETURN QUERY SELECT unnest(
            claude_mem.newest_words(all_words, newest[lim], lim, {_FILTER_VALUES}));
    END IF;
END
$fn$;
"""

# Records and links change after they are pushed: an observation edited in place (folded,
# edited) is pushed again, and a supersede link set later or pointed elsewhere. The author's
# push rewrites its record's row, by origin id, and a member's push rewrites the team's link
# of a record; either takes a new `txid` and `seq`, so every puller reads the row again, past
# its cursor, as it reads a new one. `record_words` follows a record's new words and seq.
_UPDATES = f"""
GRANT UPDATE (content_hash, type, title, created_at, body, search_text, txid, seq)
    ON claude_mem.records TO {WRITER};
GRANT UPDATE (successor_origin_id, machine, created_at, member, txid, seq)
    ON claude_mem.events TO {WRITER};
CREATE POLICY relink ON claude_mem.events FOR UPDATE
    USING (team_id = claude_mem.current_team() AND kind = 'supersede')
    WITH CHECK (team_id = claude_mem.current_team() AND member = session_user);

CREATE FUNCTION claude_mem.move_record_words() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
    DELETE FROM claude_mem.record_words w USING earlier b JOIN later a USING (team_id, origin_id)
    WHERE a.seq <> b.seq AND w.seq = b.seq;
    INSERT INTO claude_mem.record_words ({_WORDS_COLUMNS})
    SELECT r.seq, r.team_id, r.created_at, r.kind, r.project, r.type, strip(r.tsv)
    FROM later r JOIN earlier b USING (team_id, origin_id)
    WHERE r.seq <> b.seq {_NOT_FORGOTTEN};
    RETURN NULL;
END
$fn$;
CREATE TRIGGER record_words_moved AFTER UPDATE ON claude_mem.records
    REFERENCING OLD TABLE AS earlier NEW TABLE AS later FOR EACH STATEMENT
    EXECUTE FUNCTION claude_mem.move_record_words();
REVOKE ALL ON FUNCTION claude_mem.move_record_words() FROM PUBLIC;
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration("0001_roles", _ROLES),
    Migration("0002_tables", _TABLES),
    Migration("0003_access", _ACCESS),
    Migration("0004_search", _SEARCH),
    Migration("0005_record_words", _RECORD_WORDS),
    Migration("0006_updates", _UPDATES),
)

_LOCK = 0x636C6D  # an advisory lock id of our own: concurrent `team init`s migrate one at a time


def migrate(conn: psycopg.Connection[tuple[object, ...]]) -> list[str]:
    """Bring the server's schema up to date (as its owner); the names of what was applied.

    Each migration commits with its record; a server that has migrations this version does
    not know is refused (written by a newer claude-mem), never guessed at.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        conn.execute("CREATE SCHEMA IF NOT EXISTS claude_mem")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS claude_mem.migrations ("
            " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.execute("REVOKE ALL ON claude_mem.migrations FROM PUBLIC")
        done = {str(row[0]) for row in conn.execute("SELECT name FROM claude_mem.migrations")}
        unknown = done - {m.name for m in MIGRATIONS}
        if unknown:
            raise TeamSchemaError(
                "the team server's schema is newer than this claude-mem "
                f"(unknown migrations: {', '.join(sorted(unknown))}); upgrade claude-mem"
            )
    applied = []
    for migration in MIGRATIONS:
        if migration.name in done:
            continue
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            again = conn.execute(
                "SELECT 1 FROM claude_mem.migrations WHERE name = %s", (migration.name,)
            ).fetchone()
            if again:
                continue
            conn.execute(migration.sql.encode())
            conn.execute("INSERT INTO claude_mem.migrations (name) VALUES (%s)", (migration.name,))
        applied.append(migration.name)
    return applied
