"""SQL behind search: filtered full-text candidates, filter checks, index rows and timelines.

Three record kinds are searchable: `observation` (observations), `summary` (session_summaries)
and `prompt` (user_prompts, project and platform from their session). Filters on observation
fields (type, concepts, files) exclude the other kinds. Every user value is a bound parameter;
full-text queries go through `fulltext.match_expressions`, so any text is searched literally.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Literal, NamedTuple

from claude_mem.store.fulltext import match_expressions, query_terms
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
# Full text prunes a query's terms by how many records hold them (see fulltext_matches): a term
# in more than RARE_MATCHES records is frequent (counting costs a walk of that many matches per
# term), and BM25 ranks every match of the rare terms, rarest first while they number
# RANKED_MATCHES at most (bench/search_bench.py times what a match costs). A query of
# frequent terms alone is scored in windows of FTS_WINDOW: the most recent matches (the bench
# measures what that costs in BM25 terms).
RARE_MATCHES = 200
RANKED_MATCHES = 2000
# A term that one record in DISTINCTIVE_SHARE holds at most (one record at least) is
# distinctive: full text's best hits that hold one are never buried under records the vectors
# find close (`search.hybrid.fuse`). In a small store only a word of one record is.
DISTINCTIVE_SHARE = 1000
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


class FullTextMatches(NamedTuple):
    ranked: list[tuple[int, float]]  # (id, BM25 relevance, higher is better), best first
    distinctive: frozenset[int]  # the ids among them holding a distinctive term


def fulltext_matches(
    conn: sqlite3.Connection,
    kind: Kind,
    query: str,
    filters: SearchFilters,
    limit: int = 200,
    *,
    window: int | None = None,
    rare: int = RARE_MATCHES,
) -> FullTextMatches:
    """The `kind` records that `query` finds under `filters` (any of its terms, every exact
    part it requires: see `fulltext`), ranked, and which of them hold one of its distinctive
    terms (`DISTINCTIVE_SHARE`).

    BM25 costs time per scored match and phrase (bench/search_bench.py), so terms are pruned
    by how many records hold them, never by age: a term in more than `rare` records is
    frequent; the others are kept rarest first while their matches together number at most
    `RANKED_MATCHES`, and every match of those is ranked by BM25 over them (FTS5
    ranks the whole doclist). The terms left out weigh least in BM25 (as MaxScore prunes), so
    an old record holding a pasted bug report's rare words is found however many newer ones
    hold its common words. When the rare terms' matches are fewer than `limit`, the newest
    matches of the frequent terms follow them unscored (relevance 0: left to vectors and
    recency). A query whose every term is frequent is ranked as before: `_windowed`."""
    parsed = query_terms(query)
    if parsed is None:
        return FullTextMatches([], frozenset())
    if parsed.all_required:  # every match holds every term: the matches are few or alike
        windowed = _windowed(conn, kind, match_expressions(query), filters, limit, window=window)
        return FullTextMatches(windowed, frozenset())
    fts = f"{TABLES[kind]}_fts"
    holders = dict(zip(parsed.terms, _holders(conn, TABLES[kind], parsed.terms, rare), strict=True))
    counted = sorted(((n, term) for term, (n, _) in holders.items()), key=itemgetter(0))
    kept, frequent = _split(counted, rare)  # sorted stably: the query's order among equals
    if not kept:
        if not frequent:
            return FullTextMatches([], frozenset())
        windowed = _windowed(conn, kind, match_expressions(query), filters, limit, window=window)
        return FullTextMatches(windowed, frozenset())
    source, conditions, params = _matching(kind, filters)
    sql = f"""SELECT {fts}.rowid, -{fts}.rank FROM {source} WHERE {conditions}
              ORDER BY {fts}.rank, {fts}.rowid DESC LIMIT ?"""
    ranked: list[tuple[int, float]] = conn.execute(
        sql, (parsed.any_of(kept), *params, limit)
    ).fetchall()
    if frequent and len(ranked) < limit:
        seen = {rowid for rowid, _ in ranked}
        newest = (
            f"SELECT {fts}.rowid FROM {source} WHERE {conditions} ORDER BY {fts}.rowid DESC LIMIT ?"
        )
        rows = conn.execute(newest, (parsed.any_of(frequent), *params, limit)).fetchall()
        ranked += [(rowid, 0.0) for (rowid,) in rows if rowid not in seen][: limit - len(ranked)]
    holding = {rowid for _, ids in holders.values() for rowid in ids}
    return FullTextMatches(ranked, frozenset(rowid for rowid, _ in ranked if rowid in holding))


def _holders(
    conn: sqlite3.Connection, table: str, terms: Sequence[str], rare: int
) -> list[tuple[int, list[int]]]:
    """For each of `terms`: how many records hold it, counted up to `rare` + 1 (more: a
    frequent term), and which, when one record in `DISTINCTIVE_SHARE` (one at least, `rare` at
    most) holds it at most (the term is distinctive). One statement: a term's first holders
    are read (a distinctive term's matches are walked once: a phrase of common tokens, such as
    a path, costs a walk each), and only past the distinctive ones are they counted on."""
    fts = f"{table}_fts"
    match = f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? LIMIT"
    each = f"""(SELECT CASE WHEN count(*) <= (SELECT n FROM few)
                   THEN coalesce(group_concat(rowid), '')
                   ELSE (SELECT count(*) FROM ({match} ?)) END
               FROM ({match} (SELECT n FROM few) + 1))"""
    row = conn.execute(
        # The store's size from its newest id (ids grow, deletes are few): one b-tree path,
        # where a count reads every page of an index and evicts the doclists search reads.
        f"""WITH few(n) AS (
                SELECT max(1, min(?, coalesce(max(id), 0) / {DISTINCTIVE_SHARE})) FROM {table})
            SELECT {", ".join([each] * len(terms))}""",
        [rare, *(value for term in terms for value in (term, rare + 1, term))],
    ).fetchone()
    found: list[tuple[int, list[int]]] = []
    for held in row:  # a count past the distinctive ones, else their ids
        if isinstance(held, int):
            found.append((held, []))
        else:
            ids = [int(i) for i in held.split(",")] if held else []
            found.append((len(ids), ids))
    return found


def _split(counted: list[tuple[int, str]], rare: int) -> tuple[list[str], list[str]]:
    """(kept, frequent) among the terms some record holds: the rare ones, rarest first, while
    their matches together number at most `RANKED_MATCHES`; then the rest."""
    kept: list[str] = []
    total = 0
    for position, (matches, term) in enumerate(counted):
        if matches > rare or total + matches > RANKED_MATCHES:
            return kept, [t for n, t in counted[position:] if n]
        if matches:
            kept.append(term)
            total += matches
    return kept, []


def _matching(kind: Kind, filters: SearchFilters) -> tuple[str, str, list[object]]:
    """(FROM clause, WHERE conditions with one MATCH parameter first, the filters' parameters)
    of `kind`'s full-text matches under `filters`."""
    fts = f"{TABLES[kind]}_fts"
    where, params, needs_session = _where(kind, filters)
    if where == "1":
        return fts, f"{fts} MATCH ?", params
    session_join = " JOIN sessions s ON s.id = r.session_id" if needs_session else ""
    # Without statistics the planner reads each whole row; the covering index is enough
    # unless a filter looks inside the JSON lists.
    covered = kind == "observation" and not (filters.concepts or filters.files)
    hint = " INDEXED BY idx_observations_search_filters" if covered else ""
    source = f"{fts} JOIN {TABLES[kind]} r{hint} ON r.id = {fts}.rowid{session_join}"
    return source, f"{fts} MATCH ? AND {where}", params


def _windowed(
    conn: sqlite3.Connection,
    kind: Kind,
    expressions: tuple[str, ...],
    filters: SearchFilters,
    limit: int,
    *,
    window: int | None,
) -> list[tuple[int, float]]:
    """A query of frequent terms alone: each term is weak evidence and ranking all of their
    matches would cost time in proportion to the corpus, so only the newest `window` (default
    `FTS_WINDOW`) matches that pass the filters are scored: FTS5 walks the doclist newest
    first (rowids grow with time) and stops there, filters apply during the walk, and one pass
    does it all (a phrase of common tokens, such as a path, is costly to evaluate even when it
    matches little). Vectors (exact under filters) and recency decide among its matches. The
    records holding every term are scored too, the newest `window` of them older than that
    window (the newer ones were in it), so no frequent term pushes out a record with all."""
    window = FTS_WINDOW if window is None else window
    fts = f"{TABLES[kind]}_fts"
    source, conditions, params = _matching(kind, filters)
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


def current_decisions(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[int, int]]:
    """The observations among `ids` typed decision that nothing superseded, each with its
    session and time (`rules_first` reads the whole row only where those allow a lift)."""
    found: dict[int, tuple[int, int]] = {}
    for start in range(0, len(ids), 500):
        chunk = tuple(ids[start : start + 500])
        sql = f"""SELECT id, session_id, created_at FROM observations WHERE type = 'decision'
                  AND superseded_by IS NULL AND id IN ({_marks(chunk)})"""
        found.update((row[0], (row[1], row[2])) for row in conn.execute(sql, chunk))
    return found
