"""The vector half's similarity floor on real embeddings, in a live worker with the bundled model.

Related queries, in other words than their record's, pass `MIN_SIMILARITY` and find their
record; unrelated and nonsense queries get no vector hit at all, so `claude-mem search
qqzzxxvv` answers with nothing. The memories and queries are tests/fixtures/vector-floor/,
the set bench/vector_floor.py calibrates the floor on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_mem.records import Summary
from claude_mem.search.hybrid import MIN_SIMILARITY, similar
from claude_mem.store.search_queries import KINDS, Kind
from claude_mem.store.sessions import add_prompt
from claude_mem.store.summaries import insert_summary
from tests.polling import wait_until
from tests.store_helpers import observation, session
from tests.worker_fixtures import RunningWorker, running_worker
from tests.worker_process import run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "vector-floor" / "memories.json"
MEMORIES: dict[str, Any] = json.loads(FIXTURE.read_text("utf-8"))
TOP = 5  # a related query's record must be among this many vector hits of its kind


class Stored:
    """A worker holding every fixture record, embedded; `related` is (kind, id, query)."""

    def __init__(self, worker: RunningWorker, data: Path) -> None:
        self.worker = worker
        self.related: list[tuple[Kind, int, str]] = []
        # What the CLI needs to find this worker; a test sets it again over its own data_dir,
        # since this in-process worker reads the data dir from the environment too.
        self.env = {"CLAUDE_MEM_DATA_DIR": str(data), "CLAUDE_MEM_WORKER_PORT": str(worker.port)}

    def vector_hits(self, kind: Kind, query: str) -> list[tuple[int, float]]:
        embedding = self.worker.state.embedding
        assert embedding is not None
        vector = embedding.query_vector(query)
        assert vector is not None
        return similar(embedding.index(kind), vector, TOP)

    def search(self, query: str) -> dict[str, Any]:
        response = self.worker.client.get("/api/search", params={"query": query})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stored]:
    mp = pytest.MonkeyPatch()
    data = tmp_path_factory.mktemp("data")
    mp.setenv("CLAUDE_MEM_DATA_DIR", str(data))
    mp.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "minilm-l6-int8")
    try:
        with running_worker() as worker:
            yield _store(Stored(worker, data))
    finally:
        mp.undo()


def _store(stored: Stored) -> Stored:
    db, embedding = stored.worker.state.db, stored.worker.state.embedding
    assert db is not None
    assert embedding is not None
    sid = session(db, "s-1", project="proj")
    for item in MEMORIES["observations"]:
        obs = observation(db, sid, title=item["title"], narrative=item["narrative"])
        stored.related += [("observation", obs, q) for q in item["queries"]]
    with db.write() as conn:
        for item in MEMORIES["summaries"]:
            fields = {k: item[k] for k in ("request", "learned", "completed")}
            summary = insert_summary(conn, Summary(session_id=sid, project="proj", **fields))
            stored.related += [("summary", summary, q) for q in item["queries"]]
        for number, item in enumerate(MEMORIES["prompts"]):
            prompt = add_prompt(conn, sid, item["text"], now=number).prompt_id
            stored.related += [("prompt", prompt, q) for q in item["queries"]]
    assert embedding.wait_loaded(60)
    embedding.notify()
    wait_until(lambda: not embedding.status()["pending"], timeout=120)
    total = sum(len(MEMORIES[group]) for group in ("observations", "summaries", "prompts"))
    assert sum(embedding.index(kind).size for kind in KINDS) == total
    return stored


def test_every_related_query_passes_the_floor_and_finds_its_record(stored: Stored) -> None:
    kinds = {kind for kind, _, _ in stored.related}
    assert kinds == set(KINDS)
    assert len(stored.related) >= 30
    missed = []
    for kind, record, query in stored.related:
        hits = stored.vector_hits(kind, query)
        if record not in [i for i, _ in hits]:
            missed.append((kind, record, query, hits))
        assert all(score >= MIN_SIMILARITY for _, score in hits)
    assert missed == []


@pytest.mark.parametrize("query", MEMORIES["unrelated"])
def test_an_unrelated_query_gets_no_vector_hit_of_any_kind(stored: Stored, query: str) -> None:
    for kind in KINDS:
        assert stored.vector_hits(kind, query) == [], kind


def test_nonsense_finds_nothing_while_a_paraphrase_finds_its_record(
    stored: Stored, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in stored.env.items():
        monkeypatch.setenv(key, value)
    for nonsense in ("qqzzxxvv", "zxqv_mrlt_0x3f9"):  # full text has none of these tokens
        nothing = stored.search(nonsense)
        assert nothing["mode"] == "hybrid"  # the vectors were asked, and offered nothing
        assert nothing["hits"] == []
    done = run_cli("search", "qqzzxxvv", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["source"], answer["mode"], answer["hits"]) == ("worker", "hybrid", [])
    # Prompt-time injection (CLAUDE_MEM_SEMANTIC_INJECT) adds nothing to an unrelated prompt.
    semantic = stored.worker.client.post(
        "/api/context/semantic", json={"q": "wibble wobble flumph"}
    ).json()
    assert (semantic["mode"], semantic["count"], semantic["context"]) == ("hybrid", 0, "")
    kind, record, query = next(
        r for r in stored.related if r[2] == "users get logged out hours too soon"
    )
    found = stored.search(query)
    assert found["mode"] == "hybrid"
    assert (found["hits"][0]["kind"], found["hits"][0]["id"]) == (kind, record)
