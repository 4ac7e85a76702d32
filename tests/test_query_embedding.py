"""A query's embedding: cached (bounded, least recently used out first, per model), and never
queued behind the background embedder's batch."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from claude_mem.search import embedding_task
from claude_mem.search.embed import Embedder
from claude_mem.search.embedding_task import Embedding
from claude_mem.search.query_cache import QueryCache
from claude_mem.store import Database
from tests.store_helpers import CountingEmbedder, observation, session

MODEL = "minilm-l6-int8"


def vector(value: float) -> np.ndarray:
    return np.full(4, value, dtype=np.float32)


def test_the_cache_counts_hits_and_drops_the_least_recently_used() -> None:
    cache = QueryCache(2)
    assert cache.get("m", "a") is None
    cache.put("m", "a", vector(1))
    cache.put("m", "b", vector(2))
    hit = cache.get("m", "a")  # "a" is now the most recently used
    assert hit is not None
    assert hit[0] == 1
    assert not hit.flags.writeable  # shared by every hit
    cache.put("m", "c", vector(3))  # over the bound: "b" goes
    assert len(cache) == 2
    assert cache.get("m", "b") is None
    assert [cache.get("m", q) is not None for q in ("a", "c")] == [True, True]
    assert (cache.hits, cache.misses) == (3, 2)
    assert cache.get("m", "a ") is None  # the exact text is the key


def test_another_models_query_empties_the_cache() -> None:
    cache = QueryCache(8)
    cache.put("old@1", "fixed a bug", vector(1))
    assert cache.get("new@2", "fixed a bug") is None
    assert len(cache) == 0
    cache.put("new@2", "fixed a bug", vector(2))
    assert cache.get("old@1", "fixed a bug") is None  # never another model's vector


def test_a_repeated_query_is_embedded_once(
    data_dir: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding_task, "QUERY_CACHE", 3)
    counting = CountingEmbedder(embedder)
    with Database() as db:
        observation(db, session(db), title="fixed a bug")
        task = Embedding(db, MODEL, loader=lambda _: counting)
        task._prepare(counting)
        first = task.query_vector("fixed a bug")
        again = task.query_vector("fixed a bug")
        assert first is not None
        assert again is first
        assert counting.calls == 1
        assert (task.query_cache.hits, task.query_cache.misses) == (1, 1)
        for n in range(5):
            task.query_vector(f"query {n}")
        assert len(task.query_cache) == 3  # bounded
        assert task.query_vector("fixed a bug") is not first  # evicted: embedded again
        assert counting.calls == 7
        embedded_again = task.query_vector("fixed a bug")
        assert embedded_again is not None
        assert np.array_equal(embedded_again, first)


class RecordingSession:
    """The embedder's ONNX session, recording which thread's runs start and end, in order."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.events: list[str] = []
        self.background_running = threading.Event()
        self._lock = threading.Lock()

    def _note(self, event: str) -> None:
        with self._lock:
            self.events.append(event)

    def run(self, *args: Any) -> Any:
        who = "query" if threading.current_thread() is threading.main_thread() else "batch"
        self._note(f"{who} run starts")
        if who == "batch":
            self.background_running.set()
        try:
            return self._inner.run(*args)
        finally:
            self._note(f"{who} run ends")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_query_is_embedded_while_a_background_batch_runs(
    data_dir: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The query, asked once the batch's first run started, is answered before the batch
    ends: it waits for no lock and no run of the batch."""
    recording = RecordingSession(embedder._session)
    monkeypatch.setattr(embedder, "_session", recording)
    with Database() as db:
        sid = session(db)
        for n in range(embedding_task.BATCH_ROWS):
            observation(db, sid, title=f"change {n} to the retry loop of the gateway client")
        task = Embedding(db, MODEL, loader=lambda _: embedder)
        task._prepare(embedder)

        def background() -> None:  # as the embedder thread runs it: niced, one batch
            os.setpriority(
                os.PRIO_PROCESS, threading.get_native_id(), embedding_task.BACKGROUND_NICE
            )
            assert task.step()
            recording._note("batch stored")

        thread = threading.Thread(target=background)
        thread.start()
        try:
            assert recording.background_running.wait(60)
            query = task.query_vector("why does the gateway client retry")
            recording._note("query answered")
        finally:
            thread.join()
    assert query is not None
    events = recording.events
    assert events.count("query run starts") == 1
    answered, stored = events.index("query answered"), events.index("batch stored")
    assert answered < stored
    # Batch runs ended after the query was answered: the batch was still being embedded.
    assert "batch run ends" in events[answered:stored]
    assert task.index("observation").size == embedding_task.BATCH_ROWS
