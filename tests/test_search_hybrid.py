"""Hybrid ranking, every filter, timelines and hostile queries, against a real store and a fake
vector index (the real model is tested with the embedding code)."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claude_mem.records import Summary
from claude_mem.search.filters import build_filters, parse_time
from claude_mem.search.hybrid import PLACES, HybridSearcher, VectorIndexLike, fuse, parse_anchor
from claude_mem.search.render import index_text, timeline_text
from claude_mem.store import Database
from claude_mem.store.observations import delete_observation
from claude_mem.store.search_queries import TITLE_CHARS, Kind, SearchFilters
from claude_mem.store.sessions import add_prompt
from claude_mem.store.summaries import insert_summary
from claude_mem.text import shorten
from tests.store_helpers import observation, session

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
DAY = 86_400_000


class FakeIndex:
    quantized = False  # exact cosines: filters may apply after ranking

    def __init__(self, vectors: dict[int, tuple[float, ...]]) -> None:
        self.vectors = vectors

    def query(
        self, vector: tuple[float, ...], k: int, allowed: set[int] | None = None
    ) -> list[tuple[int, float]]:
        def cosine(a: tuple[float, ...], b: tuple[float, ...]) -> float:
            dot = sum(x * y for x, y in zip(a, b, strict=True))
            return dot / (math.hypot(*a) * math.hypot(*b))

        scored = [
            (i, cosine(vector, v))
            for i, v in self.vectors.items()
            if allowed is None or i in allowed
        ]
        return sorted(scored, key=lambda p: -p[1])[:k]


class FakeEmbedding:
    """Texts map to 3-d topic vectors: (config, network, noise)."""

    def __init__(
        self, queries: dict[str, tuple[float, ...]], index: dict[str, VectorIndexLike]
    ) -> None:
        self.queries, self.indexes = queries, index
        self.loaded = True

    def query_vector(self, text: str) -> tuple[float, ...] | None:
        if not self.loaded:
            return None
        return self.queries.get(text, (0.0, 0.0, 1.0))

    def index(self, kind: str) -> VectorIndexLike:
        return self.indexes[kind]


class Fixture:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.s1 = session(db, "s-1", project="proj")
        self.s2 = session(db, "s-2", project="other", platform="codex")
        self.exact = observation(
            db, self.s1, type="bugfix", title="Fix parse_config_value crash on empty env",
            concepts=["gotcha"], files_modified=["src/conf/loader.py"], created_at=T0 + 1000,
        )  # fmt: skip
        self.retry = observation(
            db, self.s1, type="feature", title="Uploads use exponential backoff",
            narrative="Transient HTTP errors no longer abort a sync.",
            files_read=["src/net/upload.py"], created_at=T0 + 2000,
        )  # fmt: skip
        self.loader = observation(
            db, self.s1, type="discovery", title="Config loader reads settings lazily",
            concepts=["pattern"], files_read=["src/conf_x/other.py"], created_at=T0 + 3000,
        )  # fmt: skip
        self.elsewhere = observation(
            db, self.s2, project="other", type="bugfix", title="Config crash in other project",
            files_modified=["lib/conf/loader.py"], created_at=T0 + 5 * DAY,
        )  # fmt: skip
        with db.write() as conn:
            self.summary = insert_summary(
                conn,
                Summary(session_id=self.s1, project="proj", request="Make config loading robust",
                           completed="parse_config_value handles empty env", created_at=T0 + 4000),
            )  # fmt: skip
            self.prompt = add_prompt(conn, self.s1, "why does config crash?", now=T0).prompt_id
            add_prompt(conn, self.s1, "<private>config secret</private>", now=T0 + 500)
        self.embedding = FakeEmbedding(
            {
                "parse_config_value": (1.0, 0.0, 0.2),
                "network requests should try again when they fail": (0.0, 1.0, 0.0),
            },
            {
                "observation": FakeIndex({
                    self.loader: (1.0, 0.0, 0.1),  # nearest to the identifier query
                    self.retry: (0.1, 1.0, 0.0),
                    self.exact: (0.9, 0.0, 0.6),
                    self.elsewhere: (0.7, 0.0, 0.9),
                }),
                "summary": FakeIndex({self.summary: (0.5, 0.0, 0.5)}),
                "prompt": FakeIndex({}),
            },
        )  # fmt: skip

    def searcher(self, vectors: bool = False) -> HybridSearcher:
        return HybridSearcher(self.db, self.embedding if vectors else None)

    def ids(self, query: str, filters: SearchFilters | None = None, **kw: Any) -> list:
        result = self.searcher(kw.pop("vectors", False)).search(
            query, filters or SearchFilters(), **kw
        )
        return [(h.kind, h.id) for h in result.hits]


@pytest.fixture
def fx(data_dir: Path) -> Fixture:
    return Fixture(Database())


# --- ranking -------------------------------------------------------------------------------


def test_full_texts_distinctive_hits_rank_above_every_record_without_a_rare_word() -> None:
    # Full text: a record with the query's rare word (no vector), and common-word matches.
    kind: Kind = "observation"
    rare = [(kind, n) for n in range(1, PLACES + 3)]
    common = [(kind, n) for n in range(100, 140)]
    fulltext = [(key, 9.0 - n / 10) for n, key in enumerate(rare)]
    fulltext += [(key, 1.0) for key in common]
    vectors = [(key, 0.9 - n / 100) for n, key in enumerate(common)]  # close, no rare word
    query = "checkout gateway timeouts with quetzal"

    def order(distinctive: set[tuple[Kind, int]]) -> list[tuple[Kind, int]]:
        scores = fuse(query, fulltext, vectors, distinctive)
        return sorted(scores, key=lambda key: -scores[key])

    assert order(set())[0] in common  # plain prose: the vectors' neighbours come first
    # Full text's best PLACES hits come first when distinctive, in full text's order; a
    # distinctive hit further down stays where fusion puts it.
    assert order(set(rare))[:PLACES] == rare[:PLACES]
    assert order(set(rare))[PLACES] in common
    assert order({rare[3]})[0] == rare[3]
    assert order({rare[PLACES]})[0] in common


def test_exact_identifier_wins_through_full_text(fx: Fixture) -> None:
    result = fx.searcher(vectors=True).search("parse_config_value")
    assert result.mode == "hybrid"
    # Vectors alone put the loader first; full text pins the record holding the identifier.
    assert fx.embedding.index("observation").query((1.0, 0.0, 0.2), 1)[0][0] == fx.loader
    assert (result.hits[0].kind, result.hits[0].id) == ("observation", fx.exact)
    assert ("summary", fx.summary) in [(h.kind, h.id) for h in result.hits]


def test_paraphrase_wins_through_vectors(fx: Fixture) -> None:
    query = "network requests should try again when they fail"
    assert fx.searcher().search(query).hits == []  # no word of it is in any record
    result = fx.searcher(vectors=True).search(query)
    assert result.mode == "hybrid"
    assert result.hits[0].id == fx.retry
    # Dissimilar vectors (below MIN_SIMILARITY) are not offered as matches.
    assert fx.loader not in [h.id for h in result.hits]


def test_without_vectors_or_before_the_model_loads_mode_is_fulltext(fx: Fixture) -> None:
    assert fx.searcher().search("config").mode == "fulltext"
    fx.embedding.loaded = False
    result = fx.searcher(vectors=True).search("config")
    assert result.mode == "fulltext"
    assert result.hits


def test_broken_vector_side_falls_back_to_fulltext(fx: Fixture) -> None:
    class Broken:
        def query_vector(self, text: str) -> object:
            raise RuntimeError("model exploded")

        def index(self, kind: str) -> object:
            raise KeyError(kind)

    result = HybridSearcher(fx.db, Broken()).search("config")  # type: ignore[arg-type]  # stand-in
    assert result.mode == "fulltext"
    assert result.hits
    fx.embedding.indexes.pop("prompt")  # a kind without an index
    assert fx.searcher(vectors=True).search("config").mode == "hybrid"


def test_recency_breaks_ties_and_pages_are_consistent(fx: Fixture) -> None:
    # Two records of one length matching alike score the same: the newer comes first.
    s3 = session(fx.db, "s-3", project="proj")
    old = observation(fx.db, fx.s1, title="Flaky zebra test", created_at=T0 + 10)
    new = observation(fx.db, s3, title="Slow zebra build", created_at=T0 + 20)
    hits = fx.searcher().search("zebra").hits
    assert [h.id for h in hits] == [new, old]
    assert hits[0].score == hits[1].score
    everything = fx.ids("config", limit=100)
    paged = [*fx.ids("config", limit=2), *fx.ids("config", limit=2, offset=2)]
    assert paged + everything[4:] == everything
    assert fx.searcher().search("config", limit=2).has_more
    assert not fx.searcher().search("config", limit=100).has_more


def test_hit_fields(fx: Fixture) -> None:
    hit = fx.searcher().search("parse_config_value", kinds=("observation",)).hits[0]
    assert hit.kind == "observation"
    assert hit.type == "bugfix"
    assert hit.project == "proj"
    assert hit.files == ["src/conf/loader.py"]
    assert hit.time == T0 + 1000
    assert hit.session_id == fx.s1
    assert 10 < hit.token_cost < 100
    assert hit.label == f"#{hit.id}"


def test_a_file_list_that_does_not_parse_shows_no_files(fx: Fixture) -> None:
    with fx.db.write() as conn:  # what an old or hand-edited row may hold
        conn.execute(
            "UPDATE observations SET files_modified = 'not json', files_read = '' WHERE id = ?",
            (fx.exact,),
        )
    hit = fx.searcher().search("parse_config_value", kinds=("observation",)).hits[0]
    assert (hit.id, hit.files, hit.project) == (fx.exact, [], "proj")


def test_empty_query_lists_newest_under_filters(fx: Fixture) -> None:
    result = fx.searcher().search("  ", SearchFilters(projects=("proj",)))
    assert result.mode == "recent"
    times = [h.time for h in result.hits]
    assert times == sorted(times, reverse=True)
    assert all(h.project == "proj" for h in result.hits)
    assert ("prompt", fx.prompt) in [(h.kind, h.id) for h in result.hits]


# --- filters -------------------------------------------------------------------------------


def test_project_filter_and_cwd(fx: Fixture, tmp_path: Path) -> None:
    assert fx.ids("config", SearchFilters(projects=("other",))) == [("observation", fx.elsewhere)]
    proj = tmp_path / "proj"
    proj.mkdir()
    filters = build_filters(cwd=str(proj), projects=["extra"])
    assert filters.projects == ("extra", "proj")
    assert ("observation", fx.elsewhere) not in fx.ids("config", filters, limit=50)


def test_type_concept_and_kind_filters(fx: Fixture) -> None:
    bugfixes = fx.ids("config", SearchFilters(types=("bugfix",)))
    assert set(bugfixes) == {("observation", fx.elsewhere), ("observation", fx.exact)}
    # Observation-only filters exclude summaries and prompts.
    assert fx.ids("config", SearchFilters(concepts=("pattern", "nope"))) == [
        ("observation", fx.loader)
    ]
    assert fx.ids("config", kinds=("prompt",)) == [("prompt", fx.prompt)]


def test_file_filter_exact_and_folder_prefix(fx: Fixture) -> None:
    def files(*paths: str) -> set:
        return {i for _, i in fx.ids("", SearchFilters(files=paths), limit=50)}

    assert files("src/conf/loader.py") == {fx.exact}
    assert files("src/conf") == {fx.exact}
    assert files("src/conf/") == {fx.exact}
    assert files("src") == {fx.exact, fx.retry, fx.loader}
    assert files("src/con") == set()  # a prefix is a whole folder, not part of a name
    assert files("src/conf%") == set()  # LIKE wildcards are literal
    assert files("src/conf_") == set()
    assert files("src/conf_x") == {fx.loader}


def test_date_platform_and_session_filters(fx: Fixture) -> None:
    late = build_filters(since=str(T0 + DAY))
    assert fx.ids("config", late) == [("observation", fx.elsewhere)]
    early = build_filters(until="2023-11-14")  # a bare date covers its whole day
    assert ("observation", fx.exact) in fx.ids("config", early)
    assert ("observation", fx.elsewhere) not in fx.ids("config", early)
    assert fx.ids("config", build_filters(platforms=["codex"])) == [("observation", fx.elsewhere)]
    in_s1 = fx.ids("config", build_filters(session_id=fx.s1), limit=50)
    assert in_s1
    assert ("observation", fx.elsewhere) not in in_s1
    # Vector hits obey filters too.
    vector_hits = fx.ids("parse_config_value", SearchFilters(projects=("other",)), vectors=True)
    assert vector_hits == [("observation", fx.elsewhere)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1700000000000", 1_700_000_000_000),
        ("2023-11-14", 1_699_920_000_000),
        ("2023-11-14T22:13:20Z", 1_700_000_000_000),
        ("2023-11-15T00:13:20+02:00", 1_700_000_000_000),
        ("", None),
    ],
)
def test_parse_time(value: str, expected: int | None) -> None:
    assert parse_time(value) == expected


@pytest.mark.parametrize("value", ["yesterday", "2023-13-01", "99999999999999999999", "-5"])
def test_bad_dates_raise_value_error(value: str) -> None:
    with pytest.raises(ValueError, match=r"date|range"):
        build_filters(since=value)


def test_since_after_until_is_an_error() -> None:
    with pytest.raises(ValueError, match="after"):
        build_filters(since="2024-01-02", until="2024-01-01")


# --- deletes and privacy ------------------------------------------------------------------


def test_deleted_observation_never_shows_up(fx: Fixture) -> None:
    with fx.db.write() as conn:
        assert delete_observation(conn, fx.exact)
    # The fake vector index still holds it, like an index that lags behind a delete.
    gone = ("observation", fx.exact)
    for vectors in (False, True):
        assert gone not in fx.ids("parse_config_value", vectors=vectors, limit=100)
        assert gone not in fx.ids("", vectors=vectors, limit=100)
        assert ("summary", fx.summary) in fx.ids("parse_config_value", vectors=vectors)


def test_private_prompts_never_show_up(fx: Fixture) -> None:
    assert fx.ids("secret") == []
    assert all(h.title for h in fx.searcher().search("", kinds=("prompt",)).hits)


# --- timeline ------------------------------------------------------------------------------


def test_timeline_around_an_observation(fx: Fixture) -> None:
    timeline = fx.searcher().timeline(("observation", fx.retry), before=2, after=2)
    assert timeline is not None
    labels = [h.label for h in timeline.items]
    assert labels == [f"#P{fx.prompt}", f"#{fx.exact}", f"#{fx.retry}", f"#{fx.loader}",
                      f"#S{fx.summary}"]  # fmt: skip
    assert timeline.items[timeline.anchor_index or 0].id == fx.retry
    assert timeline.anchor_index == 2
    # The window stays in the anchor's project unless told otherwise.
    assert fx.elsewhere not in [h.id for h in timeline.items]
    text = timeline_text(timeline, "anchor 2")
    assert "<- **ANCHOR**" in text
    assert "2 before -> 2 after" in text


def test_timeline_ordering_is_chronological(fx: Fixture) -> None:
    timeline = fx.searcher().timeline(("summary", fx.summary), before=10, after=10)
    assert timeline is not None
    keys = [(h.time, h.kind) for h in timeline.items]
    assert [k[0] for k in keys] == sorted(k[0] for k in keys)
    assert timeline.items[-1].kind == "summary"
    assert [h.kind for h in timeline.items].count("prompt") == 1  # the private one is left out


def test_timeline_anchors(fx: Fixture) -> None:
    searcher = fx.searcher()
    assert searcher.timeline(("observation", 999_999)) is None
    assert searcher.timeline(("session", 999_999)) is None
    by_session = searcher.timeline(("session", fx.s2), before=0, after=3)
    assert by_session is not None
    assert by_session.anchor_index is None
    assert [h.id for h in by_session.items] == [fx.elsewhere]
    by_time = searcher.timeline(("time", T0 + 2500), SearchFilters(projects=("proj",)), after=1)
    assert by_time is not None
    assert [h.id for h in by_time.items][-1] == fx.loader
    zero = searcher.timeline(("observation", fx.exact), before=0, after=0)
    assert zero is not None
    assert [h.id for h in zero.items] == [fx.exact]


@pytest.mark.parametrize(
    ("text", "anchor"),
    [
        ("12", ("observation", 12)),
        ("#12", ("observation", 12)),
        ("S7", ("summary", 7)),
        ("#s7", ("summary", 7)),
        ("P3", ("prompt", 3)),
        ("T1700000000000", ("time", 1_700_000_000_000)),
        ("2023-11-14T22:13:20Z", ("time", 1_700_000_000_000)),
    ],
)
def test_parse_anchor(text: str, anchor: tuple[str, int]) -> None:
    assert parse_anchor(text) == anchor


@pytest.mark.parametrize("text", ["", "#", "S", "abc", "S-1", "12.5", "1" * 40])
def test_bad_anchor(text: str) -> None:
    with pytest.raises(ValueError, match="anchor"):
        parse_anchor(text)


# --- rendering -----------------------------------------------------------------------------


def test_index_text(fx: Fixture) -> None:
    result = fx.searcher().search("config")
    text = index_text("config", result)
    assert text.startswith(f'Found {len(result.hits)} results for "config" (full text only)')
    assert (f"| #{fx.exact} | 2023-11-14 22:13 | bugfix | Fix parse_config_value crash on empty"
            " env | src/conf/loader.py |") in text  # fmt: skip
    assert f"#S{fx.summary}" in text
    assert index_text("zzz", fx.searcher().search("zzz")).startswith('No results for "zzz"')


def test_index_text_is_one_table_in_ranked_order_with_dates_and_files(fx: Fixture) -> None:
    """Hits from several days: one header, the rows in the ranking's order (not grouped by
    day), each with its date and the files it touched."""
    result = fx.searcher().search("config")
    days = {time.strftime("%Y-%m-%d", time.gmtime(hit.time / 1000)) for hit in result.hits}
    assert len(days) > 1
    lines = index_text("config", result).splitlines()
    assert [line for line in lines if line.startswith("| ID |")] == [
        "| ID | Date (UTC) | Type | Title | Files | Tokens |"
    ]
    assert not [line for line in lines if line.startswith("#")]
    rows = [line for line in lines if line.startswith("| #")]
    assert [row.split(" | ")[0] for row in rows] == [f"| {hit.label}" for hit in result.hits]
    for row, hit in zip(rows, result.hits, strict=True):
        cells = row.split(" | ")
        assert cells[1] == time.strftime("%Y-%m-%d %H:%M", time.gmtime(hit.time / 1000))
        assert cells[4] == (", ".join(hit.files) or "-")
    assert "lib/conf/loader.py" in "\n".join(lines)  # the other project's hit, days later


def test_index_text_names_a_teammates_author_and_a_team_servers_ids(fx: Fixture) -> None:
    """An Author column appears once a hit is a teammate's; a team server's hits are `T12`,
    the id `claude-mem show` opens, never `#12` (which names a record of this memory)."""
    result = fx.searcher().search("config")
    first, *rest = result.hits
    theirs = replace(result, hits=[replace(first, author="alice"), *rest])
    lines = index_text("config", theirs).splitlines()
    assert "| ID | Date (UTC) | Type | Title | Author | Files | Tokens |" in lines
    row = next(line for line in lines if line.startswith(f"| {first.label} |"))
    assert row.split(" | ")[4] == "alice"
    assert all(line.split(" | ")[4] == "-" for line in lines if line.startswith("| #")
               and line is not row)  # fmt: skip
    team = index_text("config", theirs, team=True).splitlines()
    assert [line.split(" | ")[0] for line in team if line.startswith("| T")] == [
        f"| T{hit.id}" for hit in result.hits
    ]
    assert not [line for line in team if line.startswith("| #")]
    assert "claude-mem show T12" in team[-1]
    solo = index_text("config", result).splitlines()
    assert "| ID | Date (UTC) | Type | Title | Files | Tokens |" in solo


LONG_REQUEST = " ".join(["Investigate why the nightly config loader rejects values"] * 6)
LONG_PROMPT = "Please look into " + "the flaky upload retries again " * 12


def test_long_summary_and_prompt_titles_end_at_a_word_with_an_ellipsis(fx: Fixture) -> None:
    with fx.db.write() as conn:
        insert_summary(
            conn, Summary(session_id=fx.s1, project="proj", request=LONG_REQUEST, created_at=T0 + 9)
        )
        add_prompt(conn, fx.s1, LONG_PROMPT, now=T0 + 8)
    hits = fx.searcher().search("", limit=50).hits
    titles = {h.kind: h.title for h in hits if h.title.startswith(("Investigate", "Please"))}
    for kind, full in (("summary", LONG_REQUEST), ("prompt", " ".join(LONG_PROMPT.split()))):
        title = titles[kind]
        assert len(title) <= TITLE_CHARS
        assert title.endswith("…")
        kept = title.removesuffix("…")
        assert full.startswith(kept)
        assert full[len(kept)] == " "  # cut between words, never inside one
    text = index_text("", fx.searcher().search("", limit=50))
    assert f"| {titles['summary']} |" in text  # the agent's index shows the very same title


def test_shorten() -> None:
    assert shorten("short  and\nsweet", 40) == "short and sweet"
    assert shorten("hello wonderful world", 16) == "hello wonderful…"
    assert shorten("a wonderful world", 15) == "a wonderful…"
    assert shorten("hello wonderful world", 15) == "hello wonderfu…"  # not just "hello…"
    assert shorten("src/very/long/path/without/spaces.py", 12) == "src/very/lo…"
    assert shorten("x" * 10_000, 10) == "xxxxxxxxx…"
    huge = "word " * 100_000
    assert shorten(huge, 20) == shorten(huge[: 4 * 20 + 1], 20) == "word word word word…"


# --- hostile input -------------------------------------------------------------------------

HOSTILE = ["src/a-b/c.py", "foo.bar()", '"', "a AND OR NOT b", "NEAR(a b)", "*", "-x", "\x00",
           "\ud800", "col:umn", "^start", "💥 émoji", "' OR 1=1 --", "a" * 5000]  # fmt: skip


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_error(fx: Fixture, query: str) -> None:
    for vectors in (False, True):
        assert isinstance(fx.searcher(vectors).search(query).hits, list)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=120), value=st.text(max_size=30), vectors=st.booleans())
def test_any_unicode_query_and_filter_never_errors(
    fx: Fixture, query: str, value: str, vectors: bool
) -> None:
    filters = build_filters(projects=[value], types=[value], files=[value], concepts=[value])
    for f in (SearchFilters(), filters):
        result = fx.searcher(vectors).search(query, f, limit=5)
        assert len(result.hits) <= 5


def _decided(db: Database, sid: int, title: str, at: int, narrative: str = "") -> int:
    return observation(db, sid, type="decision", title=title, narrative=narrative,
                       concepts=["decision"], created_at=at)  # fmt: skip


def test_superseded_rows_rank_below_current_ones_and_name_their_successor(
    data_dir: Path,
) -> None:
    from claude_mem.store.supersede import settle

    db = Database()
    s1, s2 = session(db, "s-1"), session(db, "s-2")
    # The stale rule matches the query best by full text (it says "retry" twice).
    old = _decided(db, s1, "Timeouts: retry twice, retry never more", T0,
                   "retry the request twice on a timeout, then retry nothing")  # fmt: skip
    other = _decided(db, s1, "Retry the upload when the server answers 503", T0 + 1)
    new = _decided(db, s2, "Timeouts: retry three times", T0 + 2)
    with db.write() as conn:
        for obs_id in (old, other, new):
            settle(conn, obs_id)
    searcher = HybridSearcher(db)
    fulltext = sq_fulltext(db, "retry")
    assert fulltext[0] == old  # without the demotion the stale rule would come first
    result = searcher.search("retry")
    ids = [h.id for h in result.hits if h.kind == "observation"]
    assert ids == [new, other, old]  # still found, last
    stale = next(h for h in result.hits if h.id == old)
    assert stale.superseded_by == new
    assert all(h.superseded_by is None for h in result.hits if h.id != old)
    assert f"Timeouts: retry twice, retry never more (superseded by #{new})" in index_text(
        "retry", result
    )
    # Listing without a query keeps time order and the label.
    recent = searcher.search("")
    assert [h.superseded_by for h in recent.hits if h.id == old] == [new]


def sq_fulltext(db: Database, query: str) -> list[int]:
    from claude_mem.store.search_queries import fulltext_matches

    return [i for i, _ in fulltext_matches(db.read(), "observation", query, SearchFilters()).ranked]


def test_filters_after_an_exact_ranking_give_the_filtered_ranking(data_dir: Path) -> None:
    """With exact scores a filter applies to the whole index's best, and the answer is the one
    ranking only the allowed rows gives: also when the best are all filtered out (then the
    allowed rows are ranked alone), and for the cwd's project holding most of the store."""
    import numpy as np

    from claude_mem.search.hybrid import MIN_SIMILARITY
    from claude_mem.search.vectors import VectorIndex

    db = Database()
    mine, theirs = session(db, "s-1", project="proj"), session(db, "s-2", project="other")
    rng = np.random.default_rng(7)
    rows = {}
    for n in range(60):
        sid, project = (mine, "proj") if n < 50 else (theirs, "other")
        record = observation(db, sid, project=project, title=f"note {n}", created_at=T0 + n)
        rows[record] = (project, rng.standard_normal(8).astype(np.float32))
    index = VectorIndex()
    index.replace(list(rows), np.stack([v / np.linalg.norm(v) for _, v in rows.values()]))
    query = rng.standard_normal(8).astype(np.float32)
    query /= np.linalg.norm(query)
    others = {"summary": FakeIndex({}), "prompt": FakeIndex({})}
    vectors = FakeEmbedding({"zzqx": tuple(query.tolist())}, {"observation": index, **others})
    for candidates in (3, 200):
        for project in ("proj", "other"):
            filters = SearchFilters(projects=(project,))
            searcher = HybridSearcher(db, vectors, candidates=candidates)
            found = searcher.search("zzqx", filters, kinds=["observation"], limit=50)
            scored = sorted(
                ((-float(v @ query / np.linalg.norm(v)), record) for record, (p, v) in
                 rows.items() if p == project),
            )  # fmt: skip
            wanted = [r for s, r in scored if -s >= MIN_SIMILARITY][:candidates]
            assert [hit.id for hit in found.hits] == wanted, (candidates, project)
            assert wanted, "the query reaches no row: the test shows nothing"
