"""The search routes on a live worker: shapes, filters, timelines, semantic context, 400s."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claude_mem.records import Summary
from claude_mem.store.fulltext import QUERY_CHARS
from claude_mem.store.observations import delete_observation
from claude_mem.store.summaries import insert_summary
from tests.polling import wait_until
from tests.store_helpers import observation, session
from tests.test_store_fulltext import STACK_TRACE
from tests.worker_fixtures import RunningWorker, running_worker

T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningWorker]:
    mp = pytest.MonkeyPatch()
    mp.setenv("CLAUDE_MEM_DATA_DIR", str(tmp_path_factory.mktemp("data")))
    mp.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")  # full text only: exact expectations
    try:
        with running_worker() as running:
            db = running.state.db
            assert db is not None
            sid = session(db, "s-1", project="proj")
            other = session(db, "s-2", project="other", platform="codex")
            for i in range(30):
                files = [f"src/cache/m{i}.py"]
                observation(db, sid, title=f"Cache warmup step {i}", type="feature",
                            files_modified=files, created_at=T0 + i * 1000)  # fmt: skip
            observation(db, sid, type="bugfix", title="Fix parse_config_value crash",
                        narrative="An empty env var crashed the loader " * 20,
                        files_modified=["src/conf/loader.py"], created_at=T0 + 40_000)  # fmt: skip
            observation(db, other, project="other", title="Cache in the other project",
                        created_at=T0 + 50_000)  # fmt: skip
            with db.write() as conn:
                insert_summary(conn, Summary(session_id=sid, project="proj",
                                             request="Speed up cache warmup",
                                             created_at=T0 + 45_000))  # fmt: skip
            yield running
    finally:
        mp.undo()


def get(worker: RunningWorker, path: str, **params: Any) -> dict:
    response = worker.client.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_search_index_shape(worker: RunningWorker) -> None:
    body = get(worker, "/api/search", query="parse_config_value")
    assert body["mode"] == "fulltext"  # vectors are off in this worker
    assert body["has_more"] is False
    [hit] = body["hits"]
    assert set(hit) == {"id", "kind", "time", "type", "title", "project", "session_id", "files",
                        "token_cost", "score", "superseded_by", "source", "commit", "author",
                        "origin_id"}  # fmt: skip
    assert (hit["source"], hit["commit"]) == ("hooks", None)  # a session's, not history
    assert (hit["author"], hit["origin_id"]) == (None, None)  # the user's own, not a team's
    assert hit["kind"] == "observation"
    assert hit["type"] == "bugfix"
    assert hit["files"] == ["src/conf/loader.py"]
    assert hit["token_cost"] > 150  # the narrative counts, though the index doesn't carry it
    assert body["text"] is None


def test_search_filters_paging_and_text(worker: RunningWorker) -> None:
    page = get(worker, "/api/search", query="cache", project="proj", limit=5, offset=5)
    assert len(page["hits"]) == 5
    assert page["has_more"] is True
    assert all(h["project"] == "proj" for h in page["hits"])
    assert (
        get(worker, "/api/search", query="cache", project="other")["hits"][0]["project"] == "other"
    )
    assert (
        get(worker, "/api/search", query="cache", platform="codex")["hits"][0]["project"] == "other"
    )
    typed = get(worker, "/api/search", query="cache", type=["bugfix", "decision"])
    assert typed["hits"] == []
    unknown = worker.client.get(
        "/api/search", params={"query": "cache", "type": ["bugfix", "nope"]}
    )
    assert unknown.status_code == 400
    assert unknown.json()["error"] == (
        "unknown type 'nope': the types are bugfix, feature, refactor, change, discovery, decision"
    )
    by_file = get(worker, "/api/search", file="src/cache", limit=100)
    assert by_file["mode"] == "recent"
    assert len(by_file["hits"]) == 30
    summaries = get(worker, "/api/search", query="cache", kind="summary")
    assert [h["kind"] for h in summaries["hits"]] == ["summary"]
    late = get(worker, "/api/search", query="cache", since=str(T0 + 45_000), until="2030-01-01")
    assert {h["kind"] for h in late["hits"]} == {"summary", "observation"}
    text = get(worker, "/api/search", query="parse_config_value", format="text")["text"]
    assert text.startswith('Found 1 result for "parse_config_value"')


def test_timeline_by_anchor_session_and_query(worker: RunningWorker) -> None:
    hit = get(worker, "/api/search", query="parse_config_value")["hits"][0]
    around = get(worker, "/api/timeline", anchor=str(hit["id"]), depth_before=2, depth_after=1)
    assert around["anchor"]["id"] == hit["id"]
    assert around["anchor_index"] == 2
    assert [i["kind"] for i in around["items"]] == ["observation", "observation", "observation",
                                                    "summary"]  # fmt: skip
    by_query = get(worker, "/api/timeline", query="parse_config_value", format="text")
    assert by_query["anchor"]["id"] == hit["id"]
    assert "<- **ANCHOR**" in by_query["text"]
    summary = get(worker, "/api/timeline", anchor="S1", depth_before=0, depth_after=0)
    assert summary["items"][0]["kind"] == "summary"
    session = get(worker, "/api/timeline", session=1, depth_after=3)
    assert session["anchor"] is None
    assert len(session["items"]) == 3


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"limit": 0}, 400),
        ({"limit": 101}, 400),
        ({"offset": -1}, 400),
        ({"since": "yesterday"}, 400),
        ({"since": "2024-02-01", "until": "2024-01-01"}, 400),
        ({"kind": "memory"}, 400),
        ({"session_id": "x"}, 400),
    ],
)
def test_search_rejects_bad_parameters(worker: RunningWorker, params: dict, status: int) -> None:
    response = worker.client.get("/api/search", params=params)
    assert response.status_code == status
    assert response.json()["code"] == "invalid_query"
    assert "$." not in response.json()["error"]  # no validator notation


def test_long_queries_are_clipped_not_rejected(worker: RunningWorker) -> None:
    body = get(worker, "/api/search", query=STACK_TRACE, format="text")
    assert body["clipped"] is True
    assert len(body["query"]) == QUERY_CHARS
    assert [h["title"] for h in body["hits"]] == ["Fix parse_config_value crash"]
    assert get(worker, "/api/search", query="cache")["clipped"] is False
    semantic = worker.client.post("/api/context/semantic", json={"q": STACK_TRACE})
    assert semantic.status_code == 200
    assert get(worker, "/api/timeline", query=STACK_TRACE)["anchor"]["title"] == (
        "Fix parse_config_value crash"
    )
    bad = worker.client.get("/api/search", params={"limit": 0}).json()["error"]
    assert bad == "limit: expected int >= 1"


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({}, 400),
        ({"anchor": "1", "query": "cache"}, 400),
        ({"anchor": "nonsense"}, 400),
        ({"anchor": "1", "depth_before": 51}, 400),
        ({"anchor": "999999"}, 404),
        ({"anchor": "S999"}, 404),
        ({"session": 999}, 404),
        ({"query": "zzzzqqq"}, 404),
        ({"query": "  "}, 404),
    ],
)
def test_timeline_errors(worker: RunningWorker, params: dict, status: int) -> None:
    assert worker.client.get("/api/timeline", params=params).status_code == status


def test_semantic_context(worker: RunningWorker) -> None:
    post = worker.client.post
    short = post("/api/context/semantic", json={"q": "fix the crash"}).json()
    assert short == {"context": "", "count": 0, "mode": "skipped"}
    prompt = "why did parse_config_value crash again"
    # Full text only (vectors off here): a prompt sharing no word with any record finds none.
    assert post("/api/context/semantic", json={"q": "why did the upload stall"}).json() == {
        "context": "", "count": 0, "mode": "fulltext"
    }  # fmt: skip
    found = post("/api/context/semantic", json={"q": prompt}).json()
    assert found["count"] == 1
    assert found["context"].startswith("## Relevant past work\n- #")
    assert "[bugfix] Fix parse_config_value crash" in found["context"]
    scoped = post("/api/context/semantic", json={"q": prompt, "project": "other"}).json()
    assert scoped["count"] == 0
    assert post("/api/context/semantic", json={"q": "x", "limit": 21}).status_code == 400


def test_deleted_observation_disappears_from_search(worker: RunningWorker) -> None:
    db = worker.state.db
    assert db is not None
    doomed = observation(db, 1, title="Ephemeral quokka note", created_at=T0 + 60_000)
    assert get(worker, "/api/search", query="quokka")["hits"][0]["id"] == doomed
    with db.write() as conn:
        delete_observation(conn, doomed)
    assert get(worker, "/api/search", query="quokka")["hits"] == []
    assert worker.client.get("/api/timeline", params={"anchor": str(doomed)}).status_code == 404


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=80), value=st.text(max_size=20))
def test_any_unicode_never_errors_over_http(worker: RunningWorker, query: str, value: str) -> None:
    params = {"query": query, "project": value, "file": value, "concept": value}
    assert worker.client.get("/api/search", params=params).status_code == 200
    timeline = worker.client.get("/api/timeline", params={"query": query, "anchor": value})
    assert timeline.status_code in (400, 404)
    semantic = worker.client.post("/api/context/semantic", json={"q": query, "cwd": value})
    assert semantic.status_code == 200


def test_hybrid_with_the_real_model(data_dir: Path) -> None:
    """End to end with the bundled model: a paraphrase finds its record once embedded."""

    with running_worker() as worker:
        db, embedding = worker.state.db, worker.state.embedding
        assert db is not None
        assert embedding is not None
        sid = session(db, "s-1", project="proj")
        narrative = "Transient network failures no longer abort a sync."
        target = observation(db, sid, title="Uploads retry with backoff", narrative=narrative)
        observation(db, sid, title="Renamed the settings page", narrative="Copy changes only.")
        assert embedding.wait_loaded(60)
        embedding.notify()
        wait_until(lambda: not embedding.status()["pending"], timeout=60)
        body = get(worker, "/api/search", query="make network requests try again when they fail")
        assert body["mode"] == "hybrid"
        assert body["hits"][0]["id"] == target
        semantic = worker.client.post(
            "/api/context/semantic",
            json={"q": "how do we handle flaky network calls during sync?", "project": "proj"},
        ).json()
        assert semantic["mode"] == "hybrid"
        assert f"#{target} " in semantic["context"]


def test_a_record_with_the_rare_word_is_never_buried_under_vector_neighbours(
    data_dir: Path,
) -> None:
    """40 records the model finds close to the query, and one holding the query's rare word
    without a vector (a teammate's record not embedded yet): it ranks first, as in full text."""
    with running_worker() as worker:
        db, embedding = worker.state.db, worker.state.embedding
        assert db is not None
        assert embedding is not None
        sid = session(db, "s-1", project="proj")
        target = observation(
            db, sid, title="Quetzal adapter drops the idempotency header",
            narrative="Retries through the Quetzal adapter lost the key, so cards were charged "
            "twice.",
        )  # fmt: skip
        gateway = "The checkout request to the payment gateway timed out under load; raised"
        close = [
            observation(
                db,
                sid,
                title=f"Checkout times out at the payment gateway ({i})",
                narrative=f"{gateway} the timeout and added a retry (case {i}).",
            )
            for i in range(40)
        ]
        assert embedding.wait_loaded(60)
        embedding.notify()
        wait_until(lambda: not embedding.status()["pending"], timeout=60)
        assert embedding.index("observation").remove([target]) == 1
        query = "checkout payment gateway timeouts with quetzal"
        body = get(worker, "/api/search", query=query, limit=30)
        assert body["mode"] == "hybrid"
        ids = [hit["id"] for hit in body["hits"]]
        assert ids[0] == target
        assert set(ids[1:]) <= set(close)
