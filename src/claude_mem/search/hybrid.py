"""Hybrid search: full-text BM25 and vector similarity fused by reciprocal rank, plus timelines.

Ranking. Each kind (observation, summary, prompt) yields up to `CANDIDATES` ids from FTS5
(BM25 over the query's terms, `store.fulltext`) and, when vectors are available, up to
`CANDIDATES` from the vector index (cosine similarity ≥ `MIN_SIMILARITY`). Each source ranks
its candidates across kinds (BM25 values of the three tables are treated as comparable;
cosines are), equal values sharing a rank. A record's score is

    kind_weight × Σ_source source_weight × (value / best value) / (RRF_K + rank_in_source)

with RRF_K = 60 and ranks from 1. The value ratio keeps a source's weak tail weak: a record
that matched one common word of a long question is not worth nearly what its best match is.
Both source weights are 1.0 (a record both lists agree on beats one either list ranks first
alone: an exact identifier wins through full text, a paraphrase through vectors), except
that a query in plain prose, naming no quoted phrase, path or identifier, weighs full text
`PROSE_FULLTEXT_WEIGHT` when vectors answer too: its matches are any-word matches, and
meaning is what vectors measure (bench/memory_quality.py). Yet full text's best few hits that
hold one of the query's distinctive words (few records hold it) never rank below the records
without one, however close the vectors find those (`fuse`). Prompts weigh 0.8 (a question is
a weaker answer than a finding). An observation a
newer one superseded (`store.supersede`) scores `SUPERSEDED_WEIGHT` of that: still found,
and labelled with its successor, but below every current record of comparable relevance,
and below its successor whenever both are found (`newer_first`). Searched `as_of` a date,
only what held then is found (`SearchFilters.as_of`), all of it current. A current decision
ranks above the older records of other sessions on its subject (`rules_first`: an earlier
discussion restating the stale rule). Equal scores go to the newer record. A hit whose text a
better-ranked one already says is dropped (`distinct`). Candidates are bounded,
so a page never reaches past the first few hundred.

Vectors are optional: without an embedding source, or while its model is still loading
(`query_vector` → None), or if it fails, the search is full-text only and says so
(`mode = "fulltext"`). A query without text lists the newest records under the filters
(`mode = "recent"`).
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Any, Literal, NamedTuple, Protocol, cast

from claude_mem import log
from claude_mem.search.distinct import distinct, said
from claude_mem.search.rules_first import rules_first
from claude_mem.store import search_queries as sq
from claude_mem.store.fulltext import clip_query, names_exact
from claude_mem.store.search_queries import KIND_ORDER, KINDS, TITLE_CHARS, Kind, SearchFilters
from claude_mem.text import shorten

RRF_K = 60
FULLTEXT_WEIGHT = 1.0
VECTOR_WEIGHT = 1.0
PROSE_FULLTEXT_WEIGHT = 0.3
KIND_WEIGHT: dict[str, float] = {"observation": 1.0, "summary": 1.0, "prompt": 0.8}
SUPERSEDED_WEIGHT = 0.5  # halved: below the current records within about RRF_K ranks of it
CANDIDATES = 200  # per kind and per source; bounds work on very frequent terms
PLACES = 5  # full text's best hits with a rare word: never below the records without one
MIN_SIMILARITY = 0.25
"""The cosine similarity below which a vector hit is noise, not a match.

Nearest neighbours always exist, so without a floor a query that matches nothing (`qqzzxxvv`,
a recipe, a random identifier) still brings the nearest records into every fused ranking. The
value is calibrated for the bundled MiniLM model by bench/vector_floor.py: paraphrased questions
about coding-agent memories (tests/fixtures/vector-floor/) score above it against their own
record, unrelated and nonsense queries score below it against every record. Short
one-tool-call rows ("Ran tests: 4 passed") draw nonsense identifiers closest, so the bench scores
unrelated queries against such rows too. Every vector hit (each kind; search, MCP, prompt-time
injection and corpus matches alike) passes `similar`.
"""
FILES_SHOWN = 3
MAX_DEPTH = 50

NO_FILTERS = SearchFilters()

Mode = Literal["hybrid", "fulltext", "recent"]
Found = tuple[tuple[Kind, int], float]
"""A source's match: (kind, id) and its value there (BM25 relevance or cosine), higher better."""


class FullText(NamedTuple):
    """The full-text half: its matches, best first, and the keys among them that hold one of
    the query's distinctive terms (`search_queries.DISTINCTIVE_SHARE`)."""

    ranked: list[Found]
    distinctive: set[tuple[Kind, int]]


class VectorIndexLike(Protocol):
    @property
    def quantized(self) -> bool: ...  # False: a row's score is the same whichever rows rank

    def query(
        self, vector: Any, k: int, allowed: set[int] | None = None
    ) -> list[tuple[int, float]]: ...


class VectorSource(Protocol):
    """What the searcher needs from the embedding side (`WorkerState.embedding`)."""

    def query_vector(self, text: str) -> Any | None: ...

    def index(self, kind: str) -> VectorIndexLike: ...


@dataclass(frozen=True, slots=True)
class Hit:
    """One index line: enough to decide whether to fetch the full record."""

    id: int
    kind: str
    time: int
    type: str
    title: str
    project: str
    session_id: int
    files: list[str]
    token_cost: int
    score: float
    superseded_by: int | None = None  # the newer observation that replaced this one
    source: str | None = None  # where an observation came from (`git`: the project's history)
    commit: str | None = None  # a commit observation's hash
    author: str | None = None  # the teammate who wrote a team record (team/search.py)
    origin_id: str | None = None  # a team record's id on the team server

    @property
    def label(self) -> str:
        """`#12` (observation), `#S12` (summary), `#P12` (prompt): what `parse_anchor` reads."""
        return "#" + {"observation": "", "summary": "S", "prompt": "P"}[self.kind] + str(self.id)


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[Hit]
    mode: Mode
    has_more: bool


@dataclass(frozen=True, slots=True)
class Timeline:
    items: list[Hit]  # oldest first
    anchor_index: int | None  # position of the anchor record in items, if it is one
    anchor_time: int


def index_hit(row: dict[str, Any], score: float = 0.0) -> Hit:
    """A search index line from a row of `search_queries` shape (team search builds one)."""
    files = list(dict.fromkeys([*row.get("files_modified", []), *row.get("files_read", [])]))
    return Hit(
        id=row["id"],
        kind=row["kind"],
        time=row["time"],
        type=row["type"],
        title=shorten(row["title"] or "", TITLE_CHARS),
        project=row["project"] or "",
        session_id=row["session_id"],
        files=[str(f) for f in files[:FILES_SHOWN]],
        token_cost=(int(row["chars"] or 0) + 3) // 4,
        score=round(score, 6),
        superseded_by=row.get("superseded_by"),
        source=row.get("source"),
        commit=row.get("sha"),
        author=row.get("author"),
        origin_id=row.get("origin_id"),
    )


def _order(hit: Hit) -> tuple[int, int, int]:
    return hit.time, KIND_ORDER[hit.kind], hit.id


class Reader(Protocol):
    """Gives each calling thread its own read connection (`store.Database` does)."""

    def read(self) -> sqlite3.Connection: ...


class HybridSearcher:
    """Searches a store; `vectors` is optional (see the module docstring)."""

    def __init__(
        self,
        db: Reader,
        vectors: VectorSource | None = None,
        *,
        candidates: int = CANDIDATES,
    ) -> None:
        self.db, self.vectors = db, vectors
        self.candidates = candidates

    @property
    def conn(self) -> sqlite3.Connection:
        """The calling thread's connection: the two halves of a search never share one."""
        return self.db.read()

    def search(
        self,
        query: str,
        filters: SearchFilters = NO_FILTERS,
        *,
        kinds: Iterable[Kind] = KINDS,
        limit: int = 20,
        offset: int = 0,
        besides: int | None = None,
    ) -> SearchResult:
        """The page [offset, offset + limit) of the fused ranking; never raises on any text.
        `besides`: a session whose records are left out before near-duplicates are dropped
        (prompt-time injection's own session: its copy must not hide another's)."""
        limit, offset = max(1, limit), max(0, offset)
        query = clip_query(query)  # both halves see the same, bounded text
        wanted = filters.kinds(kinds)
        if not query.strip():
            found = self._recent(wanted, filters, limit, offset, besides=besides)
        else:
            found = self._ranked(wanted, query, filters, limit, offset, besides=besides)
        if filters.as_of is None:
            return found
        # As of a date, what held then is current: a later successor is not shown.
        hits = [replace(hit, superseded_by=None) for hit in found.hits]
        return replace(found, hits=hits)

    def _ranked(
        self,
        kinds: Sequence[Kind],
        query: str,
        filters: SearchFilters,
        limit: int,
        offset: int,
        *,
        besides: int | None,
    ) -> SearchResult:
        fulltext, vectors = self._sources(kinds, query, filters)
        scores = fuse(query, fulltext.ranked, vectors, fulltext.distinctive)
        if filters.as_of is None:  # as of a date, all that is found held then
            observations = [record_id for kind, record_id in scores if kind == "observation"]
            newer_first(scores, sq.superseded(self.conn, observations))
            shown = [key for key, _ in page_candidates(scores, offset + limit)]
            rules_first(self.conn, scores, shown)
        mode: Mode = "hybrid" if vectors is not None else "fulltext"
        end = offset + limit
        wanted = end
        while True:  # near-duplicates dropped (`distinct`), more candidates fill the page
            ranked = page_candidates(scores, wanted)
            hits = sorted(self._hydrate(ranked), key=fused_order)
            hits = [hit for hit in hits if hit.session_id != besides]
            hits = distinct(hits, said(self.conn, hits))
            if len(hits) >= end or len(ranked) >= len(scores):
                break
            wanted *= 2
        return SearchResult(hits[offset:end], mode, len(hits) > end or len(ranked) < len(scores))

    def timeline(
        self,
        anchor: tuple[str, int],
        filters: SearchFilters = NO_FILTERS,
        *,
        before: int = 5,
        after: int = 5,
    ) -> Timeline | None:
        """Records around `anchor` in time order, or None when the anchor doesn't exist.

        `anchor` is (kind, id) for a record, ("session", id) for a session's start, or
        ("time", epoch ms). Without project filters the window stays in the anchor's project.
        """
        before, after = (max(0, min(MAX_DEPTH, n)) for n in (before, after))
        what, value = anchor
        record: Hit | None = None
        if what in KIND_ORDER:
            row = sq.record_time(self.conn, cast(Kind, what), value)  # a kind: checked above
            if row is None:
                return None
            record = index_hit(row)
            key = _order(record)
            project = record.project
        elif what == "session":
            session = sq.session_start(self.conn, value)
            if session is None:
                return None
            key, project = (session["time"], -1, 0), session["project"]
        else:
            key, project = (value, -1, 0), ""
        if not filters.projects and project:
            filters = replace(filters, projects=(project,))
        earlier, later = sq.around(self.conn, key, filters, before=before, after=after)
        older = sorted((index_hit(r) for r in earlier), key=_order, reverse=True)[:before]
        newer = sorted((index_hit(r) for r in later), key=_order)[:after]
        items = [*reversed(older), *([record] if record else []), *newer]
        return Timeline(items, len(older) if record else None, key[0])

    # --- internals ----------------------------------------------------------------------

    def query_vector(self, query: str) -> Any | None:
        """The query's embedding; None without vectors, while the model loads, or on error."""
        if self.vectors is None:
            return None
        try:
            return self.vectors.query_vector(query)
        except Exception as exc:  # a broken model must never break search
            log.warn("search", "query embedding failed; full text only", error=repr(exc))
            return None

    def _sources(
        self, kinds: Sequence[Kind], query: str, filters: SearchFilters
    ) -> tuple[FullText, list[Found] | None]:
        """(full-text, vector) matches; vectors None when they can't answer. With vectors,
        the full-text half runs in a pool thread, on that thread's own connection, while this
        one embeds the query, applies the filters and scans the index (SQLite, numpy and ONNX
        release the GIL), so a search costs about the slower half, not the sum."""
        if self.vectors is None:
            return self._fulltext(kinds, query, filters), None
        pending = _pool().submit(self._fulltext, kinds, query, filters)
        try:
            vector = self.query_vector(query)
            vectors = self._vectors(kinds, vector, filters) if vector is not None else None
        finally:
            fulltext = pending.result()
        return fulltext, vectors

    def _fulltext(self, kinds: Sequence[Kind], query: str, filters: SearchFilters) -> FullText:
        found = FullText([], set())
        for kind in kinds:
            matches = sq.fulltext_matches(self.conn, kind, query, filters, self.candidates)
            found.ranked.extend(((kind, record_id), value) for record_id, value in matches.ranked)
            found.distinctive.update((kind, record_id) for record_id in matches.distinctive)
        return found

    def _vectors(self, kinds: Sequence[Kind], vector: Any, filters: SearchFilters) -> list[Found]:
        return [
            ((kind, record_id), score)
            for kind in kinds
            for record_id, score in self._vector_hits(kind, vector, filters)
        ]

    def _vector_hits(
        self, kind: Kind, vector: Any, filters: SearchFilters
    ) -> list[tuple[int, float]]:
        """The kind's best vector hits that the filters allow and the store still holds.

        Filters are applied after ranking when the index's scores are exact: the filters'
        share of the whole index's best is then the filtered ranking itself, whenever it fills
        the candidates or the index had no more above the floor. Only otherwise are the
        allowed ids listed to rank among them alone, a read of every allowed row (for the
        cwd's project, usually most of the store)."""
        assert self.vectors is not None
        try:
            exact = not self.vectors.index(kind).quantized
        except Exception:  # a missing or broken index: _index_hits says so
            exact = False
        if not filters.empty and exact:
            hits = self._index_hits(kind, vector, None)
            kept = self._kept(kind, hits, filters)
            if len(hits) < self.candidates or len(kept) == len(hits):
                return kept
        try:
            allowed = sq.allowed_ids(self.conn, kind, filters) if not filters.empty else None
        except Exception as exc:
            log.warn("search", "vector filter failed", kind=kind, error=repr(exc))
            return []
        if allowed is not None and not allowed:
            return []
        return self._kept(kind, self._index_hits(kind, vector, allowed), filters)

    def _kept(
        self, kind: Kind, hits: list[tuple[int, float]], filters: SearchFilters
    ) -> list[tuple[int, float]]:
        """`hits` the store still holds under `filters` (the index lags deletes, knows no
        privacy), order kept."""
        kept = set(sq.keep_allowed(self.conn, kind, [i for i, _ in hits], filters))
        return [(i, score) for i, score in hits if i in kept]

    def _index_hits(
        self, kind: Kind, vector: Any, allowed: set[int] | None
    ) -> list[tuple[int, float]]:
        """The index's best hits at or above the floor."""
        assert self.vectors is not None
        try:
            return similar(self.vectors.index(kind), vector, self.candidates, allowed)
        except Exception as exc:  # a missing or broken index: full text still answers
            log.warn("search", "vector query failed", kind=kind, error=repr(exc))
            return []

    def _recent(
        self,
        kinds: Sequence[Kind],
        filters: SearchFilters,
        limit: int,
        offset: int,
        *,
        besides: int | None,
    ) -> SearchResult:
        end = offset + limit
        rows = [row for kind in kinds for row in sq.newest(self.conn, kind, filters, end + 1)]
        mine = [r for r in rows if r["session_id"] != besides]
        hits = sorted((index_hit(r) for r in mine), key=_order, reverse=True)
        return SearchResult(hits[offset:end], "recent", len(hits) > end)

    def _hydrate(self, ranked: list[tuple[tuple[Kind, int], float]]) -> list[Hit]:
        by_kind: dict[Kind, list[int]] = {}
        for (kind, record_id), _ in ranked:
            by_kind.setdefault(kind, []).append(record_id)
        rows = {
            (kind, record_id): row
            for kind, ids in by_kind.items()
            for record_id, row in sq.index_rows(self.conn, kind, ids).items()
        }
        return [index_hit(rows[key], score) for key, score in ranked if key in rows]


def similar(
    index: VectorIndexLike, vector: Any, k: int, allowed: set[int] | None = None
) -> list[tuple[int, float]]:
    """The index's `k` best (id, cosine) pairs at or above `MIN_SIMILARITY`, best first: an
    empty list when nothing is close enough. The index may lag behind deletes and never knows
    about privacy: `keep_allowed` asks the store afterwards."""
    return [(int(i), float(s)) for i, s in index.query(vector, k, allowed) if s >= MIN_SIMILARITY]


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """Threads for the full-text half of concurrent searches (created on first use)."""
    global _POOL  # noqa: PLW0603 - one lazily created pool per process
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="claude-mem-fts")
        return _POOL


def fuse(
    query: str,
    fulltext: Sequence[Found],
    vectors: Sequence[Found] | None,
    distinctive: Collection[tuple[Kind, int]] = (),
) -> dict[tuple[Kind, int], float]:
    """The reciprocal-rank fusion of the module docstring: each key's summed score over the
    sources (`vectors` None when they did not answer), before any supersede weighting. Local
    and team search (team/search.py) both rank through it.

    Full text's best `PLACES` hits that are `distinctive` (hold a term few records hold: the
    query's rare words) count as at least as close as the best record without them: each
    scores that record's score plus its own full-text share, so records the vectors find close
    never bury one that has the query's rare words (one not embedded yet, or one its vector
    doesn't favour), and full text's order holds among them. (Deeper in full text's ranking
    a rare word is as often a stray one: there fusion decides.)"""
    weight = FULLTEXT_WEIGHT
    if vectors is not None and not names_exact(query):
        weight = PROSE_FULLTEXT_WEIGHT
    sources = [(weight, fulltext), (VECTOR_WEIGHT, vectors or ())]
    scores: dict[tuple[Kind, int], float] = {}
    get = scores.get
    for source_weight, found in sources:
        for key, rank, ratio in _ranks(found):
            share = KIND_WEIGHT[key[0]] * source_weight * ratio / (RRF_K + rank)
            scores[key] = get(key, 0.0) + share
    if vectors and distinctive:
        closest = max((v for key, v in scores.items() if key not in distinctive), default=0.0)
        for key, rank, ratio in _ranks(fulltext)[:PLACES]:
            if key in distinctive:
                share = KIND_WEIGHT[key[0]] * weight * ratio / (RRF_K + rank)
                scores[key] = max(scores[key], closest + share)
    return scores


def newer_first(scores: dict[tuple[Kind, int], float], successors: dict[int, int]) -> None:
    """Weigh each superseded observation in `scores` (id → its successor's id) down by
    `SUPERSEDED_WEIGHT`; a successor found with it first takes its relevance if higher (a
    newer rule on the same subject answers what the older one did), so of two records on
    one subject the newer ranks first, along a chain of amendments too (oldest first)."""
    for old in sorted(successors):
        key = ("observation", successors[old])
        if key in scores:
            scores[key] = max(scores[key], scores["observation", old])
    for old in successors:
        scores["observation", old] *= SUPERSEDED_WEIGHT


def page_candidates(
    scores: dict[tuple[Kind, int], float], end: int
) -> list[tuple[tuple[Kind, int], float]]:
    """The keys a page ending at `end` can hold, best first: the top `end`, and every key
    tied with the last of them (recency breaks ties, after hydration: `fused_order`)."""
    ranked = sorted(scores.items(), key=itemgetter(1), reverse=True)  # stable, as recency wants
    if len(ranked) > end:
        boundary = ranked[end - 1][1]
        ranked = [item for item in ranked if item[1] >= boundary]
    return ranked


def fused_order(hit: Hit) -> tuple[float, int, int, int]:
    """The fused ranking's order: score, then the newer record."""
    return -hit.score, -hit.time, KIND_ORDER[hit.kind], -hit.id


def _ranks(found: Sequence[Found]) -> list[tuple[tuple[Kind, int], int, float]]:
    """Keys ranked across kinds by score, best first, each with its score's share of the
    best; equal scores share a rank (1, 2, 2, 4), so recency decides between them."""
    ordered = sorted(found, key=itemgetter(1), reverse=True)
    best = ordered[0][1] if ordered else 0.0
    ranked: list[tuple[tuple[Kind, int], int, float]] = []
    previous: float | None = None
    rank = 0
    for position, (key, score) in enumerate(ordered, start=1):
        if previous is None or (
            score != previous and not math.isclose(score, previous, rel_tol=1e-9, abs_tol=1e-12)
        ):
            rank, previous = position, score
        ranked.append((key, rank, score / best if best > 0 else 1.0))
    return ranked


def parse_anchor(text: str) -> tuple[str, int]:
    """`12`/`#12` → observation, `S12` → summary, `P12` → prompt, an ISO date/time or
    `T<epoch ms>` → that moment. ValueError when it is none of those."""
    from claude_mem.search.filters import parse_time  # noqa: PLC0415

    raw = text.strip().removeprefix("#")
    prefixes = {"S": "summary", "P": "prompt", "T": "time"}
    kind = prefixes.get(raw[:1].upper(), "observation")
    digits = raw[1:] if raw[:1].upper() in prefixes else raw
    if digits.isascii() and digits.isdigit() and len(digits) <= 18:
        return kind, int(digits)
    problem = f"anchor {text!r}: use an observation id, S<id>, P<id> or a date"
    try:
        moment = parse_time(raw) if raw else None
    except ValueError:
        raise ValueError(problem) from None
    if moment is None:
        raise ValueError(problem)
    return "time", moment
