"""Building a corpus: filter → observations (hybrid search when a query is given) → render.

The filter is stored with the corpus, so `rebuild` re-runs it over today's memory. A query
goes through `HybridSearcher` (full text, plus vectors when the worker has them); without
one, the newest observations under the filters are taken. Either way the chosen ones are
rendered oldest first.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from claude_mem.corpus import render
from claude_mem.corpus.names import validate_name
from claude_mem.search.filters import build_filters
from claude_mem.search.hybrid import HybridSearcher, VectorSource
from claude_mem.store import corpora
from claude_mem.store.corpora import Corpus
from claude_mem.store.db import Database
from claude_mem.store.observations import get_observations
from claude_mem.store.search_queries import SearchFilters

DEFAULT_LIMIT = 500
MAX_LIMIT = 5000


class CorpusError(ValueError):
    """A corpus request that cannot be done (bad filter, unknown corpus); says why."""


class CorpusNotFound(CorpusError):
    def __init__(self, name: str, available: list[str]) -> None:
        known = ", ".join(available) if available else "none yet"
        super().__init__(f"no corpus named {name!r} (available: {known})")
        self.available = available


@dataclass(frozen=True, slots=True)
class CorpusFilter:
    """Which observations a corpus holds; times are epoch ms, inclusive."""

    project: str | None = None
    types: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    query: str | None = None
    since: int | None = None
    until: int | None = None
    limit: int = DEFAULT_LIMIT

    @classmethod
    def parse(
        cls,
        *,
        project: str | None = None,
        types: list[str] | tuple[str, ...] = (),
        concepts: list[str] | tuple[str, ...] = (),
        files: list[str] | tuple[str, ...] = (),
        query: str | None = None,
        since: str | int | None = None,
        until: str | int | None = None,
        limit: int | None = None,
    ) -> CorpusFilter:
        """A filter from user values; CorpusError on a bad date or limit."""
        limit = DEFAULT_LIMIT if limit is None else limit
        if not 1 <= limit <= MAX_LIMIT:
            raise CorpusError(f"limit must be between 1 and {MAX_LIMIT}")
        try:
            checked = build_filters(
                projects=[project] if project else [],
                types=types,
                concepts=concepts,
                files=files,
                since=since,
                until=until,
            )
        except ValueError as exc:
            raise CorpusError(str(exc)) from None
        return cls(
            project=checked.projects[0] if checked.projects else None,
            types=checked.types,
            concepts=checked.concepts,
            files=checked.files,
            query=(query or "").strip() or None,
            since=checked.since,
            until=checked.until,
            limit=limit,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CorpusFilter:
        return cls(
            project=data.get("project"),
            types=tuple(data.get("types") or ()),
            concepts=tuple(data.get("concepts") or ()),
            files=tuple(data.get("files") or ()),
            query=data.get("query"),
            since=data.get("since"),
            until=data.get("until"),
            limit=int(data.get("limit") or DEFAULT_LIMIT),
        )

    def to_dict(self) -> dict[str, Any]:
        """Only the parts that are set, lists as lists (what is stored and shown)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items() if v}


def search_filters(filt: CorpusFilter) -> SearchFilters:
    return SearchFilters(
        projects=(filt.project,) if filt.project else (),
        types=filt.types,
        concepts=filt.concepts,
        files=filt.files,
        since=filt.since,
        until=filt.until,
    )


def select(
    db: Database, filt: CorpusFilter, vectors: VectorSource | None = None
) -> list[dict[str, Any]]:
    """The observations `filt` picks, oldest first."""
    filters = search_filters(filt)
    found = HybridSearcher(db, vectors).search(
        filt.query or "", filters, kinds=("observation",), limit=filt.limit
    )
    rows = get_observations(db.read(), [hit.id for hit in found.hits])
    return sorted(rows, key=lambda row: (row["created_at"], row["id"]))


def stats_of(observations: list[dict[str, Any]]) -> dict[str, Any]:
    times = [row["created_at"] for row in observations]
    types = Counter(str(row["type"]) for row in observations)
    return {
        "observation_count": len(observations),
        "date_range": {
            "earliest": min(times) if times else None,
            "latest": max(times) if times else None,
        },
        "type_breakdown": dict(sorted(types.items())),
        "token_estimate": 0,
    }


def build(
    db: Database,
    name: str,
    filt: CorpusFilter,
    *,
    description: str = "",
    vectors: VectorSource | None = None,
) -> Corpus:
    """Select, render and store the corpus `name` (replacing one of that name)."""
    validate_name(name)
    observations = select(db, filt, vectors)
    stats = stats_of(observations)
    rendered = render.render(name, description, observations, stats)
    # The estimate is shown inside the text it measures: render once more with it filled in.
    stats["token_estimate"] = render.estimate_tokens(rendered)
    rendered = render.render(name, description, observations, stats)
    corpus = Corpus(
        name=name,
        description=description,
        filter=filt.to_dict(),
        stats=stats,
        system_prompt=render.system_prompt(name, filt.to_dict(), stats),
        observation_ids=[row["id"] for row in observations],
        rendered=rendered,
    )
    with db.write() as conn:
        return corpora.save(conn, corpus, redact=db.redact_secrets)


def load(db: Database, name: str) -> Corpus:
    """The stored corpus, or CorpusNotFound listing the ones that exist."""
    validate_name(name)
    conn = db.read()
    found = corpora.get(conn, name)
    if found is None:
        raise CorpusNotFound(name, corpora.names(conn))
    return found


def rebuild(db: Database, name: str, *, vectors: VectorSource | None = None) -> Corpus:
    """The corpus built again from its stored filter over today's memory."""
    old = load(db, name)
    filt = CorpusFilter.from_dict(old.filter)
    return build(db, name, filt, description=old.description, vectors=vectors)


def delete(db: Database, name: str) -> None:
    validate_name(name)
    with db.write() as conn:
        if not corpora.delete(conn, name):
            raise CorpusNotFound(name, corpora.names(conn))


def describe(corpus: Corpus) -> dict[str, Any]:
    """A corpus without its rendering: what lists and APIs show."""
    return {
        "name": corpus.name,
        "description": corpus.description,
        "filter": corpus.filter,
        "stats": corpus.stats,
        "session_id": corpus.session_id,
        "session_provider": corpus.session_provider,
        "created_at": corpus.created_at,
        "updated_at": corpus.updated_at,
    }
