"""SQL behind search: filtered full-text candidates, filter checks, index rows and timelines.

Three record kinds are searchable: `observation` (observations), `summary` (session_summaries)
and `prompt` (user_prompts, project and platform from their session). Filters on observation
fields (type, concepts, files) exclude the other kinds. Every user value is a bound parameter;
full-text queries go through `fulltext.match_expressions`, so any text is searched literally.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Literal

from claude_mem.store.fulltext import match_expressions
from claude_mem.store.rows import JSON_LIST_FIELDS, json_list, row_dicts
from claude_mem.vocabulary import HISTORY_SOURCE

Kind = Literal["observation", "summary", "prompt"]
KINDS: tuple[Kind, ...] = ("observation", "summary", "prompt")
# Orders records with the same timestamp in a timeline: a prompt, then its work, then the summary.
KIND_ORDER: dict[str, int] = {"prompt": 0, "observation": 1, "summary": 2}

TABLES: dict[str, str] = {
    "observation": "observations",
    "summary": "session_summaries",
    "prompt": "user_prompts",
}
_OBS_TEXT = ("title", "subtitle", "narrative", "facts", "concepts", "files_read", "files_modified")
_SUMMARY_TEXT = ("request", "investigated", "learned", "completed", "next_steps", "notes")
TITLE_CHARS = 160
# Summary and prompt titles are read as a prefix this long; `claude_mem.text.shorten` cuts them
# to TITLE_CHARS at a word boundary (search.hybrid), the same for every client.
_TITLE_PREFIX = 4 * TITLE_CHARS + 1
# Ranked full-text matches per kind and pass at most: the most recent ones (see
# fulltext_ranked; bench/search_bench.py measures what a smaller window costs in BM25 terms).
FTS_WINDOW = 500
# Index-row columns per kind, all aliased to one shape; `chars` measures the full record;
# `author` and `origin_id`: the member a row pulled from the team came from and its id on
# the team server (NULL for one's own rows).
_INDEX_COLUMNS = {
    "observation": f"""r.id, 'observation' AS kind, r.created_at AS time, r.type AS type,
        r.title AS title, r.project AS project, r.session_id AS session_id,
        r.files_modified AS files_modified, r.files_read AS files_read,
        ({" + ".join(f"length(r.{c})" for c in _OBS_TEXT)}) AS chars,
        r.superseded_by AS superseded_by, r.source AS source,
        CASE WHEN r.source = '{HISTORY_SOURCE}' THEN (SELECT g.sha FROM git_commits g
                                         WHERE g.observation_id = r.id) END AS sha,
        r.author AS author, r.origin_id AS origin_id""",
    "summary": f"""r.id, 'summary' AS kind, r.created_at AS time, 'summary' AS type,
        substr(COALESCE(NULLIF(r.request, ''), NULLIF(r.completed, ''), r.learned), 1,
               {_TITLE_PREFIX}) AS title,
        r.project AS project, r.session_id AS session_id,
        '[]' AS files_modified, '[]' AS files_read,
        ({" + ".join(f"length(r.{c})" for c in _SUMMARY_TEXT)}) AS chars,
        NULL AS superseded_by, NULL AS source, NULL AS sha, r.author AS author,
        r.origin_id AS origin_id""",
    "prompt": f"""r.id, 'prompt' AS kind, r.created_at AS time, 'prompt' AS type,
        substr(r.text, 1, {_TITLE_PREFIX}) AS title, s.project AS project,
        r.session_id AS session_id, '[]' AS files_modified, '[]' AS files_read,
        length(r.text) AS chars, NULL AS superseded_by, NULL AS source, NULL AS sha,
        NULL AS author, NULL AS origin_id""",
}


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """What a search is limited to; empty tuples and None mean "no limit"."""

    projects: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    since: int | None = None  # epoch ms, inclusive
    until: int | None = None  # epoch ms, inclusive
    platforms: tuple[str, ...] = ()
    session_id: int | None = None
    # Epoch ms: what was known then (records created by then) and held then (an observation
    # superseded later is current as of that moment; one superseded by then is left out).
    as_of: int | None = None

    @property
    def observation_only(self) -> bool:
        """Whether a filter names observation fields, which the other kinds don't have."""
        return bool(self.types or self.concepts or self.files)

    @property
    def empty(self) -> bool:
        return self == SearchFilters()

    def kinds(self, wanted: Iterable[Kind] = KINDS) -> tuple[Kind, ...]:
        """The kinds these filters can match, out of `wanted`."""
        return tuple(k for k in wanted if k == "observation" or not self.observation_only)


def _marks(values: tuple[object, ...]) -> str:
    return ", ".join("?" * len(values))


def _where(kind: Kind, f: SearchFilters) -> tuple[str, list[object], bool]:
    """(SQL conditions on alias r, parameters, whether the sessions join `s` is needed)."""
    clauses: list[str] = []
    params: list[object] = []
    needs_session = kind == "prompt"
    if kind == "prompt":
        clauses.append("r.is_private = 0")
    if f.projects:
        column = "s.project" if kind == "prompt" else "r.project"
        clauses.append(f"{column} IN ({_marks(f.projects)})")
        params.extend(f.projects)
    if f.platforms:
        needs_session = True
        clauses.append(f"s.platform IN ({_marks(f.platforms)})")
        params.extend(f.platforms)
    if f.session_id is not None:
        clauses.append("r.session_id = ?")
        params.append(f.session_id)
    if f.since is not None:
        clauses.append("r.created_at >= ?")
        params.append(f.since)
    if f.until is not None:
        clauses.append("r.created_at <= ?")
        params.append(f.until)
    if f.as_of is not None:
        clauses.append("r.created_at <= ?")
        params.append(f.as_of)
        if kind == "observation":
            clauses.append("r.valid_from <= ? AND (r.valid_to IS NULL OR r.valid_to > ?)")
            params.extend([f.as_of, f.as_of])
    if kind == "observation":
        if f.types:
            clauses.append(f"r.type IN ({_marks(f.types)})")
            params.extend(f.types)
        if f.concepts:
            marks = _marks(f.concepts)
            clauses.append(f"EXISTS (SELECT 1 FROM json_each(r.concepts) WHERE value IN ({marks}))")
            params.extend(f.concepts)
        if f.files:
            # The file index (observation_files, path-ordered): an exact path, or a folder as
            # the range of paths that start with "folder/" ('0' sorts right after '/').
            tests = " OR ".join("path = ? OR (path > ? AND path < ?)" for _ in f.files)
            clauses.append(f"r.id IN (SELECT observation_id FROM observation_files WHERE {tests})")
            for path in f.files:
                folder = path.rstrip("/")
                params.extend([path, folder + "/", folder + "0"])
    elif f.observation_only:
        clauses.append("0")
    return " AND ".join(clauses) or "1", params, needs_session


def _from(kind: Kind, needs_session: bool) -> str:
    join = " JOIN sessions s ON s.id = r.session_id" if needs_session else ""
    return f"{TABLES[kind]} r{join}"


def fulltext_ranked(
    conn: sqlite3.Connection,
    kind: Kind,
    query: str,
    filters: SearchFilters,
    limit: int = 200,
    *,
    window: int | None = None,
) -> list[tuple[int, float]]:
    """(id, BM25 relevance, higher is better) of `kind` records that `query` finds under
    `filters` (any of its terms, every exact part it requires: see `fulltext`), best first.

    BM25 costs time per scored match, so a very frequent term would cost time in proportion
    to the corpus (bench/search_bench.py). Only the newest `window` (default
    `FTS_WINDOW`) matches that pass the filters are scored: FTS5 walks the doclist newest
    first (rowids grow with time) and stops there, filters apply during the walk, and one pass
    does it all (a phrase of common tokens, such as a path, is costly to evaluate even when
    it matches little). A very frequent term is weak evidence anyway; vectors (exact under
    filters) and recency decide among its matches, and older matches are left to them. The
    records holding every term are scored too, the newest `window` of them older than that
    window (the newer ones were in it), so a frequent term in the query never pushes out a
    record that has all of it.
    """
    expressions = match_expressions(query)
    if not expressions:
        return []
    window = FTS_WINDOW if window is None else window
    fts = f"{TABLES[kind]}_fts"
    where, params, needs_session = _where(kind, filters)
    if where == "1":
        source, conditions = fts, f"{fts} MATCH ?"
    else:
        session_join = " JOIN sessions s ON s.id = r.session_id" if needs_session else ""
        # Without statistics the planner reads each whole row; the covering index is enough
        # unless a filter looks inside the JSON lists.
        covered = kind == "observation" and not (filters.concepts or filters.files)
        hint = " INDEXED BY idx_observations_search_filters" if covered else ""
        source = f"{fts} JOIN {TABLES[kind]} r{hint} ON r.id = {fts}.rowid{session_join}"
        conditions = f"{fts} MATCH ? AND {where}"
    newest = f"SELECT {fts}.rowid, {fts}.rank FROM {source} WHERE {conditions}"
    older = f"{newest} AND {fts}.rowid < ?"
    size = max(window, limit)
    scored: list[tuple[int, float]] = []
    bound: tuple[int, ...] = ()
    for expression in expressions:  # the same phrases: a record scores the same in each
        sql = older if bound else newest
        found = conn.execute(
            f"{sql} ORDER BY {fts}.rowid DESC LIMIT ?", (expression, *params, *bound, size)
        ).fetchall()
        scored += found
        if len(found) < size:  # every match of the widest expression is scored already
            break
        # The narrower expression's matches this new were scored here: it scores older ones.
        bound = (found[-1][0],)
    # `scored` holds each record once, newest first (each pass is older than the last), so a
    # stable sort on FTS5's rank (lower is better) puts the newer record first among equals.
    scored.sort(key=itemgetter(1))
    return [(rowid, -rank) for rowid, rank in scored[:limit]]


def allowed_ids(conn: sqlite3.Connection, kind: Kind, filters: SearchFilters) -> set[int] | None:
    """Every id of `kind` the filters allow (for a vector query); None when nothing filters."""
    where, params, needs_session = _where(kind, filters)
    if where == "1":
        return None
    sql = f"SELECT r.id FROM {_from(kind, needs_session)} WHERE {where}"
    return {row[0] for row in conn.execute(sql, params)}


def keep_allowed(
    conn: sqlite3.Connection, kind: Kind, ids: list[int], filters: SearchFilters
) -> list[int]:
    """`ids` that still exist and pass `filters`, order kept (drops deleted vector hits)."""
    if not ids:
        return []
    where, params, needs_session = _where(kind, filters)
    found: set[int] = set()
    for start in range(0, len(ids), 500):
        chunk = tuple(ids[start : start + 500])
        sql = f"""SELECT r.id FROM {_from(kind, needs_session)}
                  WHERE r.id IN ({_marks(chunk)}) AND {where}"""
        found.update(row[0] for row in conn.execute(sql, (*chunk, *params)))
    return [i for i in ids if i in found]


def newest(
    conn: sqlite3.Connection, kind: Kind, filters: SearchFilters, limit: int
) -> list[dict[str, Any]]:
    """Index rows of `kind` under `filters`, newest first (a search without query text)."""
    where, params, _ = _where(kind, filters)
    sql = f"""SELECT {_INDEX_COLUMNS[kind]} FROM {_from(kind, True)} WHERE {where}
              ORDER BY r.created_at DESC, r.id DESC LIMIT ?"""
    return row_dicts(conn.execute(sql, (*params, limit)))


def index_rows(conn: sqlite3.Connection, kind: Kind, ids: list[int]) -> dict[int, dict[str, Any]]:
    """Index rows (id, kind, time, type, title, project, session_id, files_*, chars,
    superseded_by, source, sha: a commit observation's hash, author) by id."""
    rows: dict[int, dict[str, Any]] = {}
    columns = _INDEX_COLUMNS[kind]
    source = _from(kind, kind == "prompt")  # only a prompt's project is its session's
    for start in range(0, len(ids), 500):
        chunk = tuple(ids[start : start + 500])
        cursor = conn.execute(
            f"SELECT {columns} FROM {source} WHERE r.id IN ({_marks(chunk)})", chunk
        )
        names = [column[0] for column in cursor.description]
        lists = JSON_LIST_FIELDS.intersection(names)
        for values in cursor:
            row = dict(zip(names, values, strict=True))
            for name in lists:
                row[name] = json_list(row[name])
            rows[row["id"]] = row
    return rows


def superseded(conn: sqlite3.Connection, ids: list[int]) -> dict[int, int]:
    """The observations among `ids` that a newer one superseded, each with its successor.

    Read from the partial index of superseded rows, never the rows: `superseded_by` sits
    behind the long text columns, so testing it on each candidate reads whole records."""
    found: dict[int, int] = {}
    for start in range(0, len(ids), 500):
        chunk = tuple(ids[start : start + 500])
        sql = f"""SELECT id, superseded_by FROM observations
                  INDEXED BY idx_observations_superseded
                  WHERE superseded_by IS NOT NULL AND id IN ({_marks(chunk)})"""
        found.update((row[0], row[1]) for row in conn.execute(sql, chunk))
    return found


def record_time(conn: sqlite3.Connection, kind: Kind, record_id: int) -> dict[str, Any] | None:
    """The index row of one record (its time and project anchor a timeline), or None."""
    return index_rows(conn, kind, [record_id]).get(record_id)


def session_start(conn: sqlite3.Connection, session_id: int) -> dict[str, Any] | None:
    """A session's project and the time of its first record (its start when it has none)."""
    session = conn.execute(
        "SELECT project, started_at FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if session is None:
        return None
    first = conn.execute(
        """SELECT MIN(t) FROM (
               SELECT MIN(created_at) AS t FROM user_prompts WHERE session_id = ?1
               UNION ALL SELECT MIN(created_at) FROM observations WHERE session_id = ?1
               UNION ALL SELECT MIN(created_at) FROM session_summaries WHERE session_id = ?1)""",
        (session_id,),
    ).fetchone()[0]
    return {"project": session["project"], "time": first if first is not None else session[1]}


def around(
    conn: sqlite3.Connection,
    anchor: tuple[int, int, int],
    filters: SearchFilters,
    *,
    before: int,
    after: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Index rows on each side of `anchor` = (time, kind order, id) in timeline order
    (time, KIND_ORDER, id): up to `before` per kind strictly before it, nearest first, and up
    to `after` per kind strictly after it, oldest first. The caller merges and trims."""
    time, order, anchor_id = anchor
    earlier: list[dict[str, Any]] = []
    later: list[dict[str, Any]] = []
    for kind in filters.kinds():
        where, params, _ = _where(kind, filters)
        base = f"SELECT {_INDEX_COLUMNS[kind]} FROM {_from(kind, True)} WHERE {where}"
        mine = KIND_ORDER[kind]
        if mine == order:
            is_before, is_after = "(r.created_at, r.id) < (?, ?)", "(r.created_at, r.id) > (?, ?)"
            bound: tuple[int, ...] = (time, anchor_id)
        else:
            is_before = "r.created_at <= ?" if mine < order else "r.created_at < ?"
            is_after = "r.created_at > ?" if mine < order else "r.created_at >= ?"
            bound = (time,)
        if before:
            earlier += row_dicts(conn.execute(
                f"{base} AND {is_before} ORDER BY r.created_at DESC, r.id DESC LIMIT ?",
                (*params, *bound, before),
            ))  # fmt: skip
        if after:
            later += row_dicts(conn.execute(
                f"{base} AND {is_after} ORDER BY r.created_at, r.id LIMIT ?",
                (*params, *bound, after),
            ))  # fmt: skip
    return earlier, later


def current_decisions(conn: sqlite3.Connection, ids: list[int]) -> list[int]:
    """The observations among `ids` typed decision that nothing superseded (`rules_first`)."""
    found: list[int] = []
    for start in range(0, len(ids), 500):
        chunk = tuple(ids[start : start + 500])
        sql = f"""SELECT id FROM observations WHERE type = 'decision'
                  AND superseded_by IS NULL AND id IN ({_marks(chunk)})"""
        found += [row[0] for row in conn.execute(sql, chunk)]
    return found
