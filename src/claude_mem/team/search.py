"""Team search: the team's records on its PostgreSQL server, ranked as local search ranks.

Asked for when a query wants team memory beyond the local copy (`/api/search?scope=team`,
`claude-mem search --team`, the MCP tool's `scope`). It runs as the connected member, so
row-level security decides what comes back: the member's team, its shared projects.

Two candidate lists, as locally (`search.hybrid`): full text (`tsv @@` the query's words,
ranked with `ts_rank_cd`) and vectors (cosine distance to the query's embedding through the
HNSW index, `MIN_SIMILARITY` as the floor), each bounded by `CANDIDATES` per kind, then fused
by `hybrid.fuse` — the same function local search calls. Full text: any of the query's words
matches; the newest `FTS_WINDOW` matches are scored and, older than those, the newest
`FTS_WINDOW` holding every word, so a frequent word costs a bounded scan and never pushes out a
record that has them all; and the records holding a word that few hold (`DISTINCTIVE_SHARE`,
as locally) are scored whatever their age and rank first: the server's `ts_rank_cd` knows no
rarity, and a record with the query's rare words must not wait behind newer common ones, nor
behind the vectors' neighbours in fusion. Row-level security would keep a member's own
statement off the GIN index (`@@` is not leakproof), so the schema's `claude_mem.matching`
(SECURITY DEFINER, the read policy's own conditions) picks those records, from the narrow
`record_words` the server keeps beside `records`; the member's statement reads and ranks
them by primary key, under the policy. Forgotten records (a
`forget` event) never come back; superseded ones weigh `SUPERSEDED_WEIGHT`. The connection
never prepares statements: each is planned for its values, so unset filters fold away.

Filters (`SearchFilters`) the server answers: projects, types, concepts, files (a path or a
folder, in files read or modified), since/until and platforms. A local session id means
nothing there (`TeamSearchError`). Prompts never leave their machine: only observations and
summaries are searched. A hit's record is read whole by its id (`team_records`: `claude-mem
show T<id>`), under the same policy, forgotten ones left out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from claude_mem import log
from claude_mem.records import Observation, Summary
from claude_mem.search.hybrid import (
    CANDIDATES,
    MIN_SIMILARITY,
    NO_FILTERS,
    SUPERSEDED_WEIGHT,
    Found,
    FullText,
    Hit,
    SearchResult,
    fuse,
    fused_order,
    index_hit,
    page_candidates,
)
from claude_mem.store.fulltext import clip_query, distinctive_terms
from claude_mem.store.search_queries import DISTINCTIVE_SHARE, FTS_WINDOW, Kind, SearchFilters
from claude_mem.team import pg, schema
from claude_mem.team.records import TeamRecord, local_record

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")
TEAM_KINDS: tuple[Kind, ...] = ("observation", "summary")
SOURCE = "team"  # a team hit's `source`, as pulled team rows have locally
STATEMENT_TIMEOUT_MS = 10_000  # a search that outlives this is answered with an error
# HNSW explores this many neighbours per search (pgvector's default is 40): enough for the
# candidates asked, and iterative scans go further when row-level security or a filter drops
# rows (pgvector ≥ 0.8; older servers ignore the setting's absence, see `_vector_settings`).
EF_SEARCH = CANDIDATES


class TeamSearchError(RuntimeError):
    """The search could not run: `status` 400 (a filter the server can't answer), 409 (no
    team configured) or 502 (the server is unreachable or failed: a gateway's error, not the
    worker's own 503, which clients retry while the store opens); the message says which."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _filters(filters: SearchFilters, kinds: Sequence[Kind]) -> dict[str, object]:
    """The values of `schema.SEARCH_FILTERS`'s parameters for `filters` (None: no limit)."""
    if filters.session_id is not None:
        raise TeamSearchError(400, "a session id is local: team search can't filter by it")
    if filters.as_of is not None:
        raise TeamSearchError(400, "team search can't search as of a date; search locally")
    files = list(filters.files) or None
    return {
        "kinds": list(kinds),
        "projects": list(filters.projects) or None,
        "types": list(filters.types) or None,
        "since": filters.since,
        "until": filters.until,
        "platforms": list(filters.platforms) or None,
        "concepts": list(filters.concepts) or None,
        "files": files,
        "folders": [path.rstrip("/") + "/" for path in files] if files else None,
    }


_WORDS = "plainto_tsquery('claude_mem.code', claude_mem.code_words(%(word_{n})s))"
_FILTER_ARGS = ", ".join(f"%({name})s" for name in schema.SEARCH_FILTER_NAMES)


# Whether a newer record superseded record `r` (read with the candidates: no round trip more).
_SUPERSEDED = """EXISTS (SELECT 1 FROM claude_mem.events e WHERE e.team_id = r.team_id
    AND e.kind = 'supersede' AND e.origin_id = r.origin_id)"""


def _fulltext(
    conn: psycopg.Connection[tuple[Any, ...]],
    query: str,
    params: dict[str, object],
    kinds: Sequence[Kind],
) -> tuple[FullText, set[int]]:
    """The best full-text matches per kind, (kind, seq) and ts_rank_cd, with those holding one
    of the query's distinctive words; the superseded.

    Scored: the newest FTS_WINDOW matches of any word (an OR of each word's tsquery: a path or
    an identifier's parts all together), and, with several words and that window full, the
    newest FTS_WINDOW older ones holding them all; and, whatever their age, the records
    holding a distinctive word (`_distinctive`), ranked above the rest. The schema's `matching`
    finds them through the GIN index (a member's own statement can't use it under row-level
    security); this statement, the member's, reads their ranks by primary key (an array, so it
    is an index condition, never a join over the whole table), row-level security applying."""
    words = distinctive_terms(query)
    if not words:
        return FullText([], set()), set()
    values = {f"word_{n}": word for n, word in enumerate(words)} | {"word_all": " ".join(words)}
    any_q = " || ".join(_WORDS.format(n=n) for n in range(len(words)))
    all_q = _WORDS.format(n="all") if len(words) > 1 else "NULL"
    matching = f"claude_mem.matching(({any_q}), ({all_q}), %(window)s, {_FILTER_ARGS})"
    rare = _distinctive(conn, {**params, **values}, len(words))
    relevance = "ts_rank_cd(r.tsv, q.words)"
    first = "r.seq = ANY(%(rare)s::bigint[])"
    sql = f"""
        SELECT kind, seq, relevance, superseded FROM (
            SELECT r.kind, r.seq, {relevance} AS relevance, {_SUPERSEDED} AS superseded,
                   row_number() OVER (PARTITION BY r.kind
                                      ORDER BY {first} DESC, {relevance} DESC, r.seq DESC) AS n
            FROM claude_mem.records r, (SELECT {any_q} AS words) q
            WHERE r.seq = ANY (ARRAY(SELECT {matching}) || %(rare)s::bigint[])) ranked
        WHERE n <= %(candidates)s
    """
    found = {**params, **values, "window": FTS_WINDOW, "candidates": CANDIDATES, "rare": rare}
    rows = conn.execute(sql, found).fetchall()
    # ts_rank_cd knows no rarity: a record holding a distinctive word ranks above the others,
    # as the rare terms weigh most in BM25 locally.
    best = max((float(row[2]) for row in rows), default=0.0)
    holding = set(rare)
    ranked = [
        ((_kind(kind, kinds), int(seq)), float(rel) + (best if int(seq) in holding else 0.0))
        for kind, seq, rel, _ in rows
    ]
    distinctive = {key for key, _ in ranked if key[1] in holding}
    return FullText(ranked, distinctive), {int(row[1]) for row in rows if row[3]}


def _distinctive(
    conn: psycopg.Connection[tuple[Any, ...]], values: dict[str, object], words: int
) -> list[int]:
    """The records holding one of the query's `words` that one record in DISTINCTIVE_SHARE
    holds at most (one at least; the server's estimate of its size), under the filters: for
    each word, `matching` asked for one record more than that, in one round trip."""
    few = f"""greatest(1, floor(greatest(c.reltuples, 0) / {DISTINCTIVE_SHARE}))::int"""
    holders = ", ".join(
        f"ARRAY(SELECT claude_mem.matching(({_WORDS.format(n=n)}), NULL, few + 1, {_FILTER_ARGS}))"
        for n in range(words)
    )
    row = conn.execute(
        f"""SELECT few, {holders} FROM (SELECT {few} AS few FROM pg_class c
                WHERE c.oid = 'claude_mem.records'::regclass) size""",
        values,
    ).fetchone()
    if row is None:
        return []
    few_records, *held = row
    return sorted({int(seq) for seqs in held if len(seqs) <= few_records for seq in seqs})


def _vectors(
    conn: psycopg.Connection[tuple[Any, ...]],
    vector: Sequence[float],
    params: dict[str, object],
    kinds: Sequence[Kind],
) -> tuple[list[Found], set[int]]:
    """(kind, seq) and cosine similarity of the nearest records, per kind, above the floor;
    the superseded."""
    sent = pg.vector(vector)
    found: list[Found] = []
    superseded: set[int] = set()
    if sent is None:  # another model's size: no record's vector can be near it
        return found, superseded
    pg.binary_vectors(conn)
    for kind in kinds:
        rows = conn.execute(
            f"""SELECT seq, 1 - distance, {_SUPERSEDED} FROM (
                    SELECT r.seq, r.team_id, r.origin_id,
                           r.embedding <=> %(vector)s::vector AS distance
                    FROM claude_mem.records r
                    WHERE r.embedding IS NOT NULL AND {schema.SEARCH_FILTERS}
                    ORDER BY distance LIMIT %(candidates)s) r
                ORDER BY distance""",
            {**params, "kinds": [kind], "vector": sent, "candidates": CANDIDATES},
        ).fetchall()
        close = [row for row in rows if float(row[1]) >= MIN_SIMILARITY]
        found += [((kind, int(row[0])), float(row[1])) for row in close]
        superseded |= {int(row[0]) for row in close if row[2]}
    return found, superseded


def _kind(value: str, kinds: Sequence[Kind]) -> Kind:
    return next(k for k in kinds if k == value)


def _hits(
    conn: psycopg.Connection[tuple[Any, ...]], ranked: list[tuple[tuple[Kind, int], float]]
) -> list[Hit]:
    score = {seq: value for (_, seq), value in ranked}
    if not score:
        return []
    rows = conn.execute(
        """SELECT seq, kind, created_at, type, title, project, member, origin_id,
                  body->'fields'->'files_modified', body->'fields'->'files_read',
                  length(search_text)
           FROM claude_mem.records WHERE seq = ANY(%s)""",
        [list(score)],
    ).fetchall()
    return [_hit(row, score[int(row[0])]) for row in rows]


def _hit(row: tuple[Any, ...], score: float) -> Hit:
    seq, kind, created_at, type_, title, project, member, origin_id, modified, read, chars = row
    return index_hit(
        {
            "id": int(seq),
            "kind": kind,
            "time": int(created_at),
            "type": type_ or kind,
            "title": title,
            "project": project,
            "session_id": 0,  # a team record belongs to no local session
            "files_modified": _strings(modified),
            "files_read": _strings(read),
            "chars": chars,
            "source": SOURCE,
            "author": member,
            "origin_id": origin_id,
        },
        score,
    )


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _recent(
    conn: psycopg.Connection[tuple[Any, ...]],
    params: dict[str, object],
    limit: int,
    offset: int,
) -> SearchResult:
    end = offset + limit
    rows = conn.execute(
        f"SELECT r.seq FROM claude_mem.records r WHERE {schema.SEARCH_FILTERS}"
        " ORDER BY r.created_at DESC, r.seq DESC LIMIT %(limit)s",
        {**params, "limit": end + 1},
    ).fetchall()
    hits = _hits(conn, [(("observation", int(row[0])), 0.0) for row in rows])
    hits.sort(key=lambda h: (-h.time, -h.id))
    return SearchResult(hits[offset:end], "recent", len(hits) > end)


def search_team(
    conn: psycopg.Connection[tuple[Any, ...]],
    query: str,
    vector: Sequence[float] | None,
    filters: SearchFilters = NO_FILTERS,
    *,
    kinds: Iterable[Kind] = TEAM_KINDS,
    limit: int = 20,
    offset: int = 0,
) -> SearchResult:
    """The page [offset, offset + limit) of the team's fused ranking, on `conn` (a member's
    connection, not in a transaction); `vector` is the query's embedding, None for full text
    only. One read-only transaction, so both halves see the same rows."""
    limit, offset = max(1, limit), max(0, offset)
    query = clip_query(query)
    wanted = tuple(k for k in filters.kinds(kinds) if k in TEAM_KINDS)
    if not wanted:
        return SearchResult([], "recent" if not query.strip() else "fulltext", False)
    params = _filters(filters, wanted)
    with conn.transaction():
        conn.execute(
            f"SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = {STATEMENT_TIMEOUT_MS}"
        )
        if not query.strip():
            return _recent(conn, params, limit, offset)
        fulltext, superseded = _fulltext(conn, query, params, wanted)
        vectors = None
        if vector is not None:
            _vector_settings(conn)
            vectors, also = _vectors(conn, vector, params, wanted)
            superseded |= also
        scores = fuse(query, fulltext.ranked, vectors, fulltext.distinctive)
        for key in scores:
            if key[0] == "observation" and key[1] in superseded:
                scores[key] *= SUPERSEDED_WEIGHT
        end = offset + limit
        hits = _hits(conn, page_candidates(scores, end))
    hits.sort(key=fused_order)
    return SearchResult(hits[offset:end], "hybrid" if vectors is not None else "fulltext",
                        len(scores) > end)  # fmt: skip


_RECORD_COLUMNS = ("origin_id", "content_hash", "kind", "project", "type", "title",
                   "created_at", "machine", "source_session", "search_text")  # fmt: skip


def team_records(
    conn: psycopg.Connection[tuple[Any, ...]], seqs: Sequence[int]
) -> dict[int, Observation | Summary]:
    """Whole records by their id on the server (a team hit's `id`), as a pulled copy reads
    locally, with their author; the ones the member can't read, forgotten or unreadable by
    this version are missing."""
    params = {**_filters(NO_FILTERS, TEAM_KINDS), "seqs": list(seqs)}
    with conn.transaction():
        conn.execute(
            f"SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = {STATEMENT_TIMEOUT_MS}"
        )
        rows = conn.execute(
            f"""SELECT r.seq, r.member, r.body, {", ".join(f"r.{c}" for c in _RECORD_COLUMNS)}
                FROM claude_mem.records r
                WHERE r.seq = ANY(%(seqs)s) AND {schema.SEARCH_FILTERS}""",
            params,
        ).fetchall()
    found: dict[int, Observation | Summary] = {}
    for seq, member, body, *columns in rows:
        values = {**dict(zip(_RECORD_COLUMNS, columns, strict=True)), **body, "member": member}
        try:
            found[int(seq)] = local_record(msgspec.convert(values, TeamRecord), session_id=0)
        except msgspec.ValidationError as exc:
            log.warn("team", "a team record this version cannot read", seq=seq, error=str(exc))
    return found


def _vector_settings(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    """This transaction's HNSW search width, and iterative scans where pgvector has them
    (≥ 0.8; older servers refuse the setting), in one round trip."""
    conn.execute(
        """SELECT set_config('hnsw.ef_search', %s, true),
                  (SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)
                   FROM pg_extension WHERE extname = 'vector'
                     AND string_to_array(extversion, '.')::int[] >= '{0,8}')""",
        [str(EF_SEARCH)],
    )


class TeamSearcher:
    """Searches the team server at `url` on one connection, opened on first use, reused
    under a lock, and opened again after an error (one per worker: `searcher`)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[tuple[Any, ...]] | None = None

    def search(
        self,
        query: str,
        vector: Sequence[float] | None,
        filters: SearchFilters = NO_FILTERS,
        *,
        kinds: Iterable[Kind] = TEAM_KINDS,
        limit: int = 20,
        offset: int = 0,
    ) -> SearchResult:
        """As `search_team`; TeamSearchError (502, the password redacted) when the server
        can't be reached or fails, within the connect timeout when it is away."""
        return self._run(
            lambda conn: search_team(
                conn, query, vector, filters, kinds=kinds, limit=limit, offset=offset
            )
        )

    def records(self, seqs: Sequence[int]) -> dict[int, Observation | Summary]:
        """As `team_records`, with `search`'s errors."""
        return self._run(lambda conn: team_records(conn, seqs))

    def _run(self, work: Callable[[psycopg.Connection[tuple[Any, ...]]], T]) -> T:
        import psycopg  # noqa: PLC0415 - the driver loads only when a team is used

        with self._lock:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = pg.connect(self.url)
                    # Never prepared: a generic plan would keep the filters that are unset
                    # (NULL, folded away when planned for the values) and miss the indexes.
                    self._conn.prepare_threshold = None
                return work(self._conn)
            except psycopg.Error as exc:
                self._drop()
                message = pg.redact_text(str(exc).strip() or type(exc).__name__, self.url)
                log.warn("team", "team search failed", server=pg.redact(self.url), error=message)
                raise TeamSearchError(502, f"the team server did not answer: {message}") from None

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None


_searchers: dict[str, TeamSearcher] = {}
_searchers_lock = threading.Lock()


def searcher(url: str) -> TeamSearcher:
    """This process's searcher for `url`: 409 TeamSearchError when no team is configured."""
    if not url.strip():
        raise TeamSearchError(
            409,
            "team search needs CLAUDE_MEM_TEAM_URL (join a team: claude-mem team join URL)",
        )
    with _searchers_lock:
        found = _searchers.get(url)
        if found is None:
            found = _searchers[url] = TeamSearcher(url)
        return found


def close_searchers() -> None:
    """Close every searcher's connection (the worker, as it stops)."""
    with _searchers_lock:
        found = list(_searchers.values())
        _searchers.clear()
    for each in found:
        each.close()
