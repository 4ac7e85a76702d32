"""What search does after fusion, on a real store and through a real worker: a current
decision ranks above the older records of its subject (`search.rules_first`), and a page
never shows the same text twice (`search.distinct`)."""

from __future__ import annotations

from pathlib import Path

from claude_mem.records import Summary
from claude_mem.search.hybrid import HybridSearcher
from claude_mem.store import Database
from claude_mem.store.search_queries import SearchFilters, fulltext_matches
from claude_mem.store.sessions import add_prompt
from claude_mem.store.summaries import insert_summary
from claude_mem.store.supersede import settle
from tests.store_helpers import observation, session
from tests.worker_fixtures import RunningWorker

T0 = 1_700_000_000_000
DAY = 86_400_000
QUESTION = "when an invoice has no line items, what does the CSV export write?"
OLD_RULE = (
    "The CSV export of an invoice with no line items writes nothing: to_csv returns an empty "
    "string for an invoice without items, no header and no TOTAL row."
)
NEW_RULE = (
    "The CSV export always writes the header row, even for an invoice without items, then a "
    "TOTAL row of zero: to_csv never returns an empty string."
)


def _filler(db: Database) -> None:
    """Unrelated work, so that BM25 weighs the question's words as a real store does."""
    sid = session(db, "s-filler")
    for i in range(20):
        observation(db, sid, type="change", title=f"Cache warmup step {i}",
                    narrative=f"The warmup of shard {i} runs before the first request.",
                    created_at=T0 - DAY + i)  # fmt: skip
        with db.write() as conn:
            insert_summary(conn, Summary(session_id=sid, project="proj",
                                         request=f"Warm shard {i} up", learned="Warmups run first.",
                                         created_at=T0 - DAY + i))  # fmt: skip


def _amended(db: Database) -> dict[str, int]:
    """Last month's session stated the old rule in its summary and its unit; this month's
    session amended it with a decision. The store links no decision to decision: the old
    session has none."""
    _filler(db)
    old, new = session(db, "s-old"), session(db, "s-new")
    unit = observation(db, old, type="feature", title="Empty invoices export nothing",
                       narrative=OLD_RULE, files_modified=["src/invoicer/export.py"],
                       created_at=T0)  # fmt: skip
    decision = observation(db, new, type="decision", title="Export keeps the header row",
                           narrative=NEW_RULE, concepts=["decision"],
                           created_at=T0 + 30 * DAY)  # fmt: skip
    other = observation(db, new, type="decision", title="Invoice numbers never reset",
                        narrative="Invoice numbers are one continuous sequence across years.",
                        concepts=["decision"], created_at=T0 + 30 * DAY + 1)  # fmt: skip
    with db.write() as conn:
        settle(conn, decision)
        settle(conn, other)
        summary = insert_summary(conn, Summary(
            session_id=old, project="proj", request="Empty invoices: what should export do?",
            learned=OLD_RULE, completed="An invoice with no line items exports nothing.",
            created_at=T0 + 1))  # fmt: skip
    return {"unit": unit, "decision": decision, "other": other, "summary": summary}


def test_a_decision_ranks_above_the_older_session_that_restates_the_stale_rule(
    data_dir: Path,
) -> None:
    db = Database()
    ids = _amended(db)
    conn = db.read()
    # By its words the stale session answers best: its summary and unit outscore the rule.
    best = {
        kind: fulltext_matches(conn, kind, QUESTION, SearchFilters()).ranked[0][1]
        for kind in ("observation", "summary")
    }
    by_obs = dict(fulltext_matches(conn, "observation", QUESTION, SearchFilters()).ranked)
    assert best["summary"] > by_obs[ids["decision"]]
    assert by_obs[ids["unit"]] > by_obs[ids["decision"]]
    hits = HybridSearcher(db).search(QUESTION).hits
    order = [(h.kind, h.id) for h in hits]
    assert order[0] == ("observation", ids["decision"])
    # The stale records are still found, right after it; the unrelated decision is not lifted.
    assert {("summary", ids["summary"]), ("observation", ids["unit"])} <= set(order[1:3])
    assert order.index(("observation", ids["other"])) > 2
    # As of a date before the amendment, the old rule answers alone.
    then = HybridSearcher(db).search(QUESTION, SearchFilters(as_of=T0 + DAY)).hits
    assert ("observation", ids["decision"]) not in [(h.kind, h.id) for h in then]
    assert (then[0].kind, then[0].id) in {("summary", ids["summary"]), ("observation", ids["unit"])}


def test_a_decision_is_not_lifted_over_its_own_session_or_newer_records(data_dir: Path) -> None:
    db = Database()
    _filler(db)
    s1, s2 = session(db, "s-1"), session(db, "s-2")
    decision = observation(db, s1, type="decision", title="Export keeps the header row",
                           narrative=NEW_RULE, created_at=T0)  # fmt: skip
    mine = observation(db, s1, type="feature", title="Empty invoices export nothing",
                       narrative=OLD_RULE, created_at=T0 + 1)  # fmt: skip
    later = observation(db, s2, type="discovery", title="Empty invoices export nothing",
                        narrative="The CSV export of an invoice with no line items still writes "
                        "an empty file.", created_at=T0 + DAY)  # fmt: skip
    order = [h.id for h in HybridSearcher(db).search(QUESTION).hits]
    assert order.index(decision) > order.index(mine)
    assert order.index(decision) > order.index(later)


def _repeated(db: Database) -> dict[str, int]:
    """A prompt asked twice, the summary whose request repeats it, and distinct work."""
    sid, other = session(db, "s-1"), session(db, "s-2")
    asked = "Why does the nightly zebra import fail on empty files?"
    with db.write() as conn:
        first = add_prompt(conn, sid, asked, now=T0).prompt_id
        again = add_prompt(conn, other, asked, now=T0 + DAY).prompt_id
        summary = insert_summary(
            conn,
            Summary(session_id=other, project="proj", request=asked + " ", created_at=T0 + DAY + 1),
        )
    unit = observation(db, other, type="bugfix", title="Zebra import skips empty files",
                       narrative="An empty file made the zebra import raise; it is skipped now.",
                       created_at=T0 + DAY + 2)  # fmt: skip
    assert first is not None
    assert again is not None
    return {"first": first, "again": again, "summary": summary, "unit": unit}


def test_near_identical_hits_collapse_to_the_best_and_pages_stay_full(data_dir: Path) -> None:
    db = Database()
    ids = _repeated(db)
    searcher = HybridSearcher(db)
    result = searcher.search("zebra import empty files")
    found = [(h.kind, h.id) for h in result.hits]
    repeats = {("prompt", ids["first"]), ("prompt", ids["again"]), ("summary", ids["summary"])}
    assert len(set(found) & repeats) == 1  # one of the three says it, the best-ranked
    assert ("observation", ids["unit"]) in found
    assert len(found) == 2
    assert not result.has_more
    # A page of one still holds a distinct record after it: the copies leave no hole.
    first, second = (
        searcher.search("zebra import", limit=1),
        searcher.search("zebra import", limit=1, offset=1),
    )
    assert first.has_more
    assert len(second.hits) == 1
    assert {(h.kind, h.id) for h in [*first.hits, *second.hits]} == set(found)


def test_a_superseded_record_is_never_collapsed_into_its_successor(data_dir: Path) -> None:
    db = Database()
    s1, s2 = session(db, "s-1"), session(db, "s-2")
    long_rule = " ".join(f"word{i}" for i in range(30))
    old = observation(db, s1, type="decision", title="Zebra retries", concepts=["decision"],
                      narrative=f"{long_rule} retried twice", created_at=T0)  # fmt: skip
    new = observation(db, s2, type="decision", title="Zebra retries", concepts=["decision"],
                      narrative=f"{long_rule} retried thrice", created_at=T0 + DAY)  # fmt: skip
    with db.write() as conn:
        settle(conn, new)
    hits = HybridSearcher(db).search("zebra retries").hits
    assert [h.id for h in hits] == [new, old]
    assert hits[1].superseded_by == new


def test_api_search_never_shows_the_same_text_twice(worker: RunningWorker) -> None:
    db = worker.state.db
    assert db is not None
    ids = _repeated(db)
    response = worker.client.get("/api/search", params={"query": "zebra import empty files"})
    assert response.status_code == 200, response.text
    hits = response.json()["hits"]
    kinds = sorted(hit["kind"] for hit in hits)
    assert len(hits) == 2
    assert "observation" in kinds
    assert {hit["id"] for hit in hits if hit["kind"] == "observation"} == {ids["unit"]}


def test_the_same_words_about_two_files_read_as_one_hit(data_dir: Path) -> None:
    db = Database()
    s1, s2 = session(db, "s-1"), session(db, "s-2")
    for sid, name in ((s1, "cache"), (s2, "upload")):
        observation(db, sid, type="refactor", title="Moved 86400 into `SECONDS_PER_DAY`.",
                    subtitle=f"in src/{name}.py", files_modified=[f"src/{name}.py"],
                    facts=[f"Edited src/{name}.py"], created_at=T0 + len(name))  # fmt: skip
    hits = HybridSearcher(db).search("SECONDS_PER_DAY").hits
    assert len(hits) == 1
    assert hits[0].files == ["src/upload.py"]  # the newer of two equal matches


def test_a_session_left_out_hides_no_copy_of_another(data_dir: Path) -> None:
    db = Database()
    ids = _repeated(db)
    asking = session(db, "s-now")
    with db.write() as conn:  # the question asked again, now: the newest, best copy of all
        request = "Why does the nightly zebra import fail on empty files?"
        insert_summary(conn, Summary(session_id=asking, project="proj", request=request,
                                     created_at=T0 + 2 * DAY))  # fmt: skip
    query = "nightly zebra import fail on empty files"
    everyone = HybridSearcher(db).search(query).hits
    assert [h.session_id for h in everyone if h.kind != "observation"] == [asking]
    others = HybridSearcher(db).search(query, besides=asking).hits
    assert asking not in {h.session_id for h in others}
    copies = {("prompt", ids["first"]), ("prompt", ids["again"]), ("summary", ids["summary"])}
    assert len({(h.kind, h.id) for h in others} & copies) == 1
