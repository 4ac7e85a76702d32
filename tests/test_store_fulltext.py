from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claude_mem.records import Observation
from claude_mem.store import Database
from claude_mem.store.fulltext import (
    MAX_TOKENS,
    QUERY_CHARS,
    clip_query,
    match_expression,
    match_expressions,
    search_observations,
)
from claude_mem.store.observations import insert_observation
from claude_mem.store.search_queries import SearchFilters, fulltext_matches
from tests.store_helpers import observation, session


@pytest.fixture
def db(data_dir: Path) -> Database:
    database = Database()
    sid = session(database)
    observation(database, sid, title="Fixed path bug in src/a-b/c.py", project="p1")
    observation(database, sid, title="Call foo.bar() before init", project="p1")
    observation(database, sid, title="Renamed scheduler AND queue", narrative="NEAR miss")
    observation(database, sid, title="Résumé parsing handles accents", project="p2")
    return database


@pytest.mark.parametrize(
    ("query", "title_part"),
    [
        ("src/a-b/c.py", "src/a-b/c.py"),
        ("foo.bar()", "foo.bar()"),
        ('"scheduler AND queue"', "AND queue"),
        ("NEAR", "AND queue"),
        ('"scheduler', "AND queue"),
        ("resume", "Résumé"),
        ("path bug", "path bug"),
    ],
)
def test_user_text_is_searched_literally(db: Database, query: str, title_part: str) -> None:
    hits = search_observations(db.read(), query)
    assert hits
    assert title_part in hits[0]["title"]


@pytest.mark.parametrize(
    "query", ["", "   ", "***", "()", '"', "-", "\x00", "NOT", "AND", "the and of it"]
)
def test_queries_without_words_or_unmatched_return_empty(db: Database, query: str) -> None:
    assert search_observations(db.read(), query) == []


@pytest.mark.parametrize(
    "query",
    ['NEAR("a" "b", 2)', '"unterminated AND path', "* OR - NOT ^", '"" "" ""', 'a"b"c',
     "title: path", "^path", "{title}: bug", "path\x01\x7f bug", "(path OR", "path\" bug",
     "bug " * 3000, ('"' + "x " * 40) * 50],
)  # fmt: skip
def test_hostile_queries_are_searched_as_text(db: Database, query: str) -> None:
    hits = {h["id"] for h in search_observations(db.read(), query)}
    assert hits == {
        i for i, _ in fulltext_matches(db.read(), "observation", query, SearchFilters()).ranked
    }


def test_any_term_ranks_and_project_filter(db: Database) -> None:
    assert [h["title"] for h in search_observations(db.read(), "path zebra")] == [
        "Fixed path bug in src/a-b/c.py"
    ]
    assert search_observations(db.read(), "zebra") == []
    assert len(search_observations(db.read(), "parsing", projects=("p2",))) == 1
    assert search_observations(db.read(), "parsing", projects=("p1",)) == []


def test_a_words_other_forms_match(db: Database) -> None:
    """The Porter stemmer: a question in other forms of a memory's words finds it."""
    assert [h["title"] for h in search_observations(db.read(), "renaming schedulers")] == [
        "Renamed scheduler AND queue"
    ]
    assert [h["title"] for h in search_observations(db.read(), "parse")] == [
        "Résumé parsing handles accents"
    ]


def test_match_expressions_quote_every_part() -> None:
    assert match_expressions('say "hi" now') == (
        '"hi" AND ("hi" OR "say")',
        '"hi" AND ("hi" AND "say")',
    )
    assert match_expressions("NEAR* OR b*") == ('("NEAR")',)
    assert match_expression('fix src/a-b/c.py "x y"') == (
        '"x y" AND ("src/a-b/c.py") AND ("x y" OR "src/a-b/c.py" OR "fix")'
    )
    assert match_expression('x"foo.py') == '("x""foo.py")'
    assert match_expressions('"a b" src/c.py') == (
        '"a b" AND ("src/c.py")',
        '("a b" AND "src/c.py")',
    )
    assert match_expressions("The Of AND it") == ()


def test_rows_with_more_of_the_terms_rank_higher(data_dir: Path) -> None:
    database = Database()
    sid = session(database)
    one = observation(database, sid, title="Retry the upload once")
    two = observation(database, sid, title="Webhook retry skipped")
    every = observation(database, sid, title="Webhook retry backoff doubles the delay")
    observation(database, sid, title="Unrelated cache note")
    query = "webhook retry backoff delay"
    assert [h["id"] for h in search_observations(database.read(), query)] == [every, two, one]
    ranked = fulltext_matches(database.read(), "observation", query, SearchFilters()).ranked
    assert [i for i, _ in ranked] == [every, two, one]
    assert ranked[0][1] > ranked[1][1] > ranked[2][1]


def test_stop_words_do_not_count(data_dir: Path) -> None:
    database = Database()
    sid = session(database)
    observation(database, sid, title="The cache and the queue are in it")
    target = observation(database, sid, title="Stampede when a hot key expires")
    conn = database.read()
    assert search_observations(conn, "the and of it is in") == []
    assert fulltext_matches(conn, "observation", "What is the", SearchFilters()).ranked == []
    # Only the word that counts matches: the stop words find no other row.
    assert [h["id"] for h in search_observations(conn, "what is the stampede")] == [target]
    # Inside a quoted phrase they are kept.
    assert len(search_observations(conn, '"the queue"')) == 1


def test_a_quoted_phrase_is_still_required(data_dir: Path) -> None:
    database = Database()
    sid = session(database)
    phrase = observation(database, sid, title="Cache stampede fixed with a lock")
    apart = observation(database, sid, title="Stampede of requests misses the cache, fixed")
    conn = database.read()
    assert [h["id"] for h in search_observations(conn, '"cache stampede"')] == [phrase]
    assert [h["id"] for h in search_observations(conn, '"cache stampede" fixed requests')] == [
        phrase
    ]
    assert {h["id"] for h in search_observations(conn, "cache stampede")} == {phrase, apart}


def test_paths_and_identifiers_still_match_exactly(data_dir: Path) -> None:
    database = Database()
    sid = session(database)
    path = observation(database, sid, title="Fix loader", files_modified=["src/a.py"])
    observation(database, sid, title="A note on src layout: a py project", narrative="loader")
    observation(database, sid, title="Fix loader again", files_modified=["src/b.py"])
    snake = observation(database, sid, title="Call parse_config_value once")
    observation(database, sid, title="Parse the config value lazily")
    conn = database.read()
    assert [h["id"] for h in search_observations(conn, "src/a.py")] == [path]
    assert [h["id"] for h in search_observations(conn, "loader src/a.py")] == [path]
    assert [h["id"] for h in search_observations(conn, "why parse_config_value")] == [snake]
    # Two exact parts: a row needs one of them, the row with more terms ranks first.
    both = search_observations(conn, "parse_config_value src/a.py loader")
    assert [h["id"] for h in both] == [path, snake]


def test_a_frequent_term_never_pushes_out_a_row_with_every_term(data_dir: Path) -> None:
    database = Database()
    sid = session(database)
    old = observation(database, sid, title="Cache stampede when a hot key expires")
    for i in range(10):
        observation(database, sid, title=f"cache note {i}")
    # Both terms frequent (in more than `rare` records): scored in windows.
    ranked = fulltext_matches(
        database.read(), "observation", "cache stampede", SearchFilters(), 3, window=5, rare=0
    ).ranked
    assert ranked[0][0] == old
    assert len(ranked) == 3


def test_rows_with_every_term_are_scored_beyond_the_first_window(data_dir: Path) -> None:
    database = Database()
    sid = session(database)
    title = "Cache stampede when a hot key expires"
    old = [observation(database, sid, title=f"{title} ({i})") for i in range(6)]
    for i in range(3):
        observation(database, sid, title=f"cache note {i}")
    new = [observation(database, sid, title=f"{title} again ({i})") for i in range(2)]
    ranked = fulltext_matches(
        database.read(), "observation", "cache stampede", SearchFilters(), 5, window=5, rare=0
    ).ranked
    # Both terms frequent, so scored in windows: the newest five matches (`new`, the notes),
    # then the five newest holding both terms older than those; the shorter `old` titles
    # rank first, newest first.
    assert [i for i, _ in ranked] == old[:0:-1]
    assert new[0] not in dict(ranked)


def test_a_row_with_every_exact_part_is_found_past_the_window(data_dir: Path) -> None:
    database = Database()
    sid = session(database)
    old = observation(database, sid, title="Moved parse_config_value into src/conf/loader.py")
    newer = [observation(database, sid, title=f"parse_config_value note {i}") for i in range(6)]
    query = "parse_config_value src/conf/loader.py"
    conn = database.read()
    ranked = fulltext_matches(conn, "observation", query, SearchFilters(), 4, window=4).ranked
    # Scored by the pass over rows with both parts, on the same scale as the newest matches.
    assert [i for i, _ in ranked] == [old, *reversed(newer[-3:])]
    unbounded = dict(
        fulltext_matches(conn, "observation", query, SearchFilters(), 10, window=10).ranked
    )
    assert all(score == pytest.approx(unbounded[i]) for i, score in ranked)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=200))
def test_any_unicode_query_never_errors(db: Database, query: str) -> None:
    results = search_observations(db.read(), query)
    assert isinstance(results, list)


def test_a_query_of_frequent_terms_alone_ranks_the_most_recent_matches(data_dir: Path) -> None:
    database = Database()
    sid = session(database)
    ids = [
        observation(database, sid, title=f"cache note {i}", project=f"p{i % 2}") for i in range(40)
    ]
    observation(database, sid, title="unrelated")
    conn = database.read()

    def ranked(
        query: str, limit: int, window: int, filters: SearchFilters | None = None
    ) -> list[int]:
        # rare=0: every term counts as frequent (in more than 0 records).
        filters = filters or SearchFilters()
        found = fulltext_matches(
            conn, "observation", query, filters, limit, window=window, rare=0
        ).ranked
        return [i for i, _ in found]

    assert sorted(ranked("cache", 100, 100)) == ids
    # Only the newest `window` matches are scored; the best `limit` of them come back.
    recent = ranked("cache", 3, 5)
    assert len(recent) == 3
    assert set(recent) <= set(ids[-5:])
    # Filtered, the window counts matches that pass the filters: p1's newest four.
    assert sorted(ranked("cache", 4, 4, SearchFilters(projects=("p1",)))) == ids[-8:][1::2]
    # The window never cuts below the limit asked for.
    assert len(ranked("cache", 30, 5)) == 30
    # A row with every term is scored though older than the window, and ranks first.
    assert ranked("cache note 7", 6, 5) == [ids[7], *reversed(ids[-5:])]


def test_a_rare_term_ranks_every_match_and_the_frequent_ones_follow(data_dir: Path) -> None:
    database = Database()
    sid = session(database)
    ids = [observation(database, sid, title=f"cache note {i}") for i in range(40)]
    conn = database.read()
    # `7` is in one record, `cache` and `note` in more than `rare`: the rare term's record
    # ranks first, the frequent terms' newest matches follow it unscored.
    found = fulltext_matches(
        conn, "observation", "cache note 7", SearchFilters(), 6, rare=10
    ).ranked
    assert found[0][0] == ids[7]
    assert found[0][1] > 0
    assert found[1:] == [(i, 0.0) for i in reversed(ids[-5:])]
    # Everything rare (a small store): BM25 over every match of every term, as FTS5 ranks it.
    every = fulltext_matches(conn, "observation", "cache note 7", SearchFilters(), 40).ranked
    assert every[0][0] == ids[7]
    assert sorted(i for i, _ in every) == ids


def test_an_old_record_with_the_rare_words_outranks_a_thousand_newer_common_ones(
    data_dir: Path,
) -> None:
    database = Database()
    sid = session(database)
    old = observation(
        database,
        sid,
        title="Invoice export drops the Zloty sign",
        narrative="The CSV writer encoded the currency column as latin-1, so the sign of the "
        "Polish zloty was dropped; it writes utf-8 with a BOM now.",
    )
    with database.write() as conn:
        for i in range(1200):
            insert_observation(conn, Observation(
                session_id=sid, project="proj", type="bugfix",
                title=f"Invoice export fixed ({i})",
                narrative="The export of the invoice list failed on a currency column; fixed "
                f"the writer and the test (case {i}).",
            ))  # fmt: skip
    report = (
        "Bug report from a customer: when I run the invoice export for our Warsaw office the "
        "CSV file opens in Excel with the currency column broken. Every amount in zloty shows "
        "a question mark instead of the sign, the writer seems to use the wrong encoding and "
        "the export test still passes. Steps: create an invoice in PLN, export the invoice "
        "list, open the file."
    )
    assert len(report.split()) >= 60
    found = fulltext_matches(database.read(), "observation", report, SearchFilters(), 20).ranked
    assert found[0][0] == old
    assert len(found) == 20


def stack_trace(frames: int = 150) -> str:
    """A ~20 KB pasted Python traceback whose last frame is in parse_config_value."""
    lines = ["Traceback (most recent call last):"]
    for i in range(frames):
        lines += [f'  File "/home/dev/proj/src/app/handlers/step_{i}.py", line {i + 10}, in run',
                  "    return next_step(request, context, options)"]  # fmt: skip
    lines += ['  File "/home/dev/proj/src/conf/loader.py", line 42, in parse_config_value',
              "    return int(raw)",
              "ValueError: invalid literal for int() with base 10: ''"]  # fmt: skip
    return "\n".join(lines) + "\n"


STACK_TRACE = stack_trace()


def test_a_pasted_stack_trace_is_clipped_and_finds_its_record(data_dir: Path) -> None:
    assert len(STACK_TRACE) > 15_000
    database = Database()
    sid = session(database)
    target = observation(database, sid, title="Fix parse_config_value crash on empty env var",
                         files_modified=["src/conf/loader.py"])  # fmt: skip
    observation(database, sid, title="Unrelated note about caching")
    clipped = clip_query(STACK_TRACE)
    assert len(clipped) == QUERY_CHARS
    assert clipped.endswith(STACK_TRACE[-200:])  # the error line is kept
    assert clip_query("short query") == "short query"
    expression = match_expression(STACK_TRACE)
    assert expression is not None
    assert expression.count(" OR ") < MAX_TOKENS  # a bounded set of terms
    assert '"parse_config_value"' in expression
    assert [hit["id"] for hit in search_observations(database.read(), STACK_TRACE)] == [target]


def test_the_viewer_clips_queries_like_the_worker() -> None:
    import re

    from claude_mem.store import fulltext

    feed = (Path(fulltext.__file__).parents[1] / "viewer" / "static" / "feed.js").read_text()
    constants = dict(re.findall(r'^const (QUERY_CHARS|HEAD_CHARS|JOIN) = "?(.*?)"?;$', feed, re.M))
    assert constants == {"QUERY_CHARS": str(fulltext.QUERY_CHARS),
                         "HEAD_CHARS": str(fulltext._HEAD_CHARS),
                         "JOIN": fulltext._JOIN}  # fmt: skip


def test_equal_relevance_ranks_the_newer_record_first_across_both_passes(
    data_dir: Path,
) -> None:
    database = Database()
    sid = session(database)
    # One distinct word each (no two records alike), the same length: the same BM25 score.
    both = [observation(database, sid, title=f"cache stampede v{i}") for i in range(4)]
    newest = [observation(database, sid, title=f"cache stampede w{i}") for i in range(3)]
    ranked = fulltext_matches(
        database.read(), "observation", "cache stampede", SearchFilters(), 10, window=3
    ).ranked
    # The window holds the newest three, the all-terms pass the older four: all score the
    # same, so the order is the records' own, newest first, whichever pass scored them.
    assert [i for i, _ in ranked] == [*reversed(newest), *reversed(both)]
    assert len({score for _, score in ranked}) == 1
