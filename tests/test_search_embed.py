"""The real embedding model, offline, and the worker's background embedder."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from claude_mem.search.embed import Embedder, load_embedder
from claude_mem.search.embedding_task import Embedding, embed_batch
from claude_mem.store import Database
from claude_mem.store import vectors as store
from claude_mem.store.db import open_database
from tests.polling import wait_until
from tests.store_helpers import observation, session

MODEL = "minilm-l6-int8"


class RenamedEmbedder(Embedder):
    """The same vectors under another model id: what a model upgrade looks like to the store."""

    def __init__(self, inner: Embedder, model_id: str) -> None:
        self._inner = inner
        self.model_id = model_id
        self.dim = inner.dim

    def embed_until(
        self, texts: list[str], stop: threading.Event | None
    ) -> tuple[np.ndarray, np.ndarray]:
        return self._inner.embed_until(texts, stop)


def test_similar_texts_score_higher_and_rows_are_unit_length(embedder: Embedder) -> None:
    vectors = embedder.embed(
        [
            "fixed the login token expiry bug",
            "token expiry check corrected in auth",
            "added CSV export",
        ]
    )
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert embedder.dim == 384
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    assert embedder.model_id.startswith("minilm-l6-int8@")
    assert len(embedder.model_id) > 20
    assert load_embedder(MODEL) is embedder  # cached per process
    assert load_embedder("none") is None


def test_batching_keeps_order_and_long_texts_are_truncated(embedder: Embedder) -> None:
    texts = ["short", "a much longer text about database migrations " * 80, "", "mid length text"]
    together = embedder.embed(texts)
    alone = np.stack([embedder.embed([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-4)
    assert embedder.embed([]).shape == (0, 384)
    many = embedder.embed([f"note number {i}" for i in range(19)])
    assert many.shape == (19, 384)


def test_runs_offline_with_network_blocked(tmp_path: Path) -> None:
    script = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from claude_mem.search.embed import load_embedder\n"
        "e = load_embedder('minilm-l6-int8')\n"
        "print(e.embed(['offline check']).shape)\n"
    )
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env |= {"HF_HUB_OFFLINE": "1", "HOME": str(tmp_path), "TMPDIR": str(scratch)}
    command = [sys.executable, "-c", script]
    done = subprocess.run(command, check=False, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(1, 384)"
    # onnxruntime's usage telemetry stays off: it would leave `.ses` in TMPDIR.
    assert list(scratch.iterdir()) == []


def test_embedding_task_records_model_and_reembeds_on_model_change(
    data_dir: Path, embedder: Embedder
) -> None:
    with Database() as db:
        sid = session(db)
        ids = [observation(db, sid, title=f"change {i}", narrative="fixed a bug") for i in range(3)]
        task = Embedding(db, MODEL, loader=lambda _: embedder)
        task._prepare(embedder)
        while task.step():
            pass
        conn = db.read()
        assert store.count(conn, "observation", embedder.model_id) == 3
        assert task.status()["pending"] == 0
        assert task.index("observation").size == 3
        models = conn.execute("SELECT DISTINCT model FROM vectors").fetchall()
        assert [m[0] for m in models] == [embedder.model_id]

        # A new model: the old vectors are dropped and everything is embedded again.
        other = RenamedEmbedder(embedder, "other-model@1")
        upgraded = Embedding(db, MODEL, loader=lambda _: other)
        upgraded._prepare(other)
        assert store.count(db.read(), "observation", embedder.model_id) == 0
        assert upgraded.status()["pending"] == 3
        assert upgraded.index("observation").size == 0
        while upgraded.step():
            pass
        assert store.models(db.read()) == {"other-model@1": 3}
        assert sorted(upgraded.index("observation").ids()) == sorted(ids)

        # Deleting a row deletes its vector; resync drops it from the in-memory index.
        with db.write() as w:
            w.execute("DELETE FROM observations WHERE id = ?", (ids[0],))
        assert store.count(db.read(), "observation", "other-model@1") == 2
        upgraded.resync()
        assert sorted(upgraded.index("observation").ids()) == sorted(ids[1:])
        query = upgraded.query_vector("fixed a bug")
        assert query is not None
        assert query.shape == (384,)
        assert upgraded.query_vector("fixed a bug") is query  # cached


class StopDuringBatch(threading.Event):
    """A stop asked for while a batch embeds: set once the model has asked `runs` times
    whether to go on (each of its runs asks first)."""

    def __init__(self, runs: int) -> None:
        super().__init__()
        self._left = runs
        self._counting = threading.Lock()

    def is_set(self) -> bool:
        with self._counting:
            self._left -= 1
            if self._left < 0:
                self.set()
        return super().is_set()


def test_a_stop_during_a_batch_keeps_what_the_model_made(
    data_dir: Path, embedder: Embedder
) -> None:
    with Database() as db:
        sid = session(db)
        for i in range(64):
            observation(db, sid, title=f"change {i}", narrative=f"fixed parser bug number {i}")
        texts = dict(store.missing(db.read(), "observation", embedder.model_id, 99))
        batch = embed_batch(db, embedder, "observation", stop=StopDuringBatch(runs=2))
        assert batch is not None
        kept, matrix = store.load(db.read(), "observation", embedder.model_id)
        # The model stopped between its runs: the rows it made are stored, the rest are not.
        assert 0 < len(kept) < len(texts)
        assert sorted(batch.ids) == kept
        assert np.allclose(matrix, embedder.embed([texts[i] for i in kept]), atol=1e-4)
        left = dict(store.missing(db.read(), "observation", embedder.model_id, 99))
        assert sorted(left) == sorted(set(texts) - set(kept))
        # The next run embeds only what was left, and then nothing is missing.
        rest = embed_batch(db, embedder, "observation")
        assert rest is not None
        assert sorted(rest.ids) == sorted(left)
        assert store.count(db.read(), "observation", embedder.model_id) == len(texts)


def test_worker_embeds_rows_inserted_after_start(embedder: Embedder) -> None:
    from tests.worker_fixtures import running_worker

    with running_worker() as worker:
        embedding = worker.state.embedding
        assert embedding is not None
        # An empty store needs no model: the worker stays small until there is something.
        assert not embedding.wait_loaded(0.5)
        assert embedding.status()["loaded"] is False
        db = worker.state.db
        assert db is not None
        sid = session(db)
        new = [observation(db, sid, title=f"worker saw change {i}") for i in range(3)]
        embedding.notify()
        assert embedding.wait_loaded(30)
        wait_until(
            lambda: (
                embedding.status()["pending"] == 0
                and embedding.status()["embedded"]["observation"] == 3
            ),
            timeout=30,
        )
        status = embedding.status()
        assert status["loaded"]
        assert status["model_id"] == embedder.model_id
        assert status["embedded"]["observation"] == 3
        assert status["pending"] == 0
        query = embedding.query_vector("worker saw change 1")
        assert query is not None
        hits = embedding.index("observation").query(query, 1)
        assert hits[0][0] == new[1]
        assert hits[0][1] > 0.99


def test_doctor_reports_the_model_and_records_waiting_for_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from claude_mem.commands.doctor import checks

    with open_database() as db:
        observation(db, session(db), title="waiting for its vector")
    found = {c["check"]: c for c in checks()}
    assert found["embeddings"]["status"] == "ok"
    assert "checksum ok" in found["embeddings"]["detail"]
    assert "1 record not embedded yet" in found["embeddings"]["detail"]

    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    found = {c["check"]: c for c in checks()}
    assert found["embeddings"]["detail"].startswith("off")


def test_pipeline_wakes_the_embedder_and_stats_report_it(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_mem.search import embedding_task
    from tests.worker_fixtures import running_worker

    monkeypatch.setattr(embedding_task, "POLL_S", 60.0)  # only a notify can beat the deadline
    with running_worker() as worker:
        embedding = worker.state.embedding
        assert embedding is not None
        client = worker.client
        client.post(
            "/api/sessions/init",
            json={"host_session_id": "e1", "cwd": "/w/proj", "prompt": "fix the parser"},
        ).raise_for_status()
        client.post("/api/sessions/observations", json={
            "host_session_id": "e1", "cwd": "/w/proj", "tool_name": "Edit", "tool_use_id": "e1-t",
            "tool_input": {"file_path": "/w/proj/src/parse.py", "old_string": "a",
                           "new_string": "b"}, "tool_response": {"success": True},
        }).raise_for_status()  # fmt: skip

        def embedding_stats() -> dict:
            return client.get("/api/stats").json()["embedding"]

        # The model loads on that first notify, then embeds.
        wait_until(lambda: embedding_stats()["embedded"]["observation"] >= 1, timeout=30)
        vectors = embedding_stats()
        assert vectors["loaded"] is True
        assert vectors["model_id"] == embedder.model_id
        assert vectors["embedded"]["observation"] >= 1
        assert vectors["error"] is None


def test_a_search_on_an_empty_store_loads_the_model(embedder: Embedder) -> None:
    from tests.worker_fixtures import running_worker

    with running_worker() as worker:
        embedding = worker.state.embedding
        assert embedding is not None
        assert not embedding.wait_loaded(0.3)
        assert embedding.query_vector("anything") is None  # full text meanwhile
        assert embedding.wait_loaded(30)
        assert embedding.query_vector("anything") is not None


def _ops(model: bytes) -> Counter[str]:
    from claude_mem.search.onnx_wire import graph_of

    return Counter(node.op for node in graph_of(model).nodes.values())


def _sessions(*models: bytes) -> list[Any]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    return [ort.InferenceSession(m, options, providers=["CPUExecutionProvider"]) for m in models]


def _feeds(text: str) -> dict[str, np.ndarray]:
    import tokenizers

    from claude_mem.search.embed import TOKENIZER_PATH

    tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_padding()  # as the embedder: the file pads to 128 tokens
    ids = np.array([tokenizer.encode(text).ids])
    return {"input_ids": ids, "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids)}  # fmt: skip


def test_the_lookup_tables_stay_int8_and_the_output_is_unchanged() -> None:
    """The session runs the rewritten graph (int8_lookup); the file's own graph, run as it
    is, gives the same numbers bit for bit."""
    from claude_mem.search.embed import locate
    from claude_mem.search.int8_lookup import int8_lookups

    path, _ = locate(MODEL)
    original = path.read_bytes()
    rewritten = int8_lookups(original)
    assert b"inner.embeddings.word_embeddings.weight/rows" in rewritten
    assert b"inner.embeddings.word_embeddings.weight/rows" not in original
    assert int8_lookups(rewritten) == rewritten  # nothing left to rewrite
    sessions = _sessions(original, rewritten)
    for text in ["fixed a bug", "the worker holds the model and ten thousand vectors " * 3]:
        before, after = (session.run(None, _feeds(text))[0] for session in sessions)
        assert np.array_equal(before, after)


def test_the_weight_products_become_int8_and_the_vectors_stay_close(embedder: Embedder) -> None:
    """int8_matmul: each of the file's 36 dequantized weight products becomes an 8-bit
    MatMulNBits (the 12 attention products between activations stay MatMul), a text's pooled
    vector stays within cosine 0.999 of the file's own graph's, and the embedder runs it."""
    from claude_mem.search.embed import locate
    from claude_mem.search.int8_lookup import int8_lookups
    from claude_mem.search.int8_matmul import int8_products

    path, _ = locate(MODEL)
    original = int8_lookups(path.read_bytes())
    rewritten = int8_products(original)
    before, after = _ops(original), _ops(rewritten)
    assert (before["MatMul"], before["MatMulNBits"]) == (48, 0)
    assert (after["MatMul"], after["MatMulNBits"]) == (12, 36)
    assert after["Cast"] == before["Cast"] - 36
    assert after["Mul"] == before["Mul"] - 36
    assert int8_products(rewritten) == rewritten  # nothing left to rewrite
    sessions = _sessions(original, rewritten)
    texts = ["fixed a bug", "the worker holds the model and ten thousand vectors " * 3,
             "def parse_anchor(text: str) -> tuple[str, int] | None: ..."]  # fmt: skip
    for text in texts:
        pooled = [session.run(None, _feeds(text))[0][0].mean(axis=0) for session in sessions]
        unit = [v / np.linalg.norm(v) for v in pooled]
        assert 0.999 < float(unit[0] @ unit[1]) < 1.0  # close, and computed another way
        assert np.allclose(embedder.embed([text])[0], unit[1], atol=1e-5)  # what it runs


SESSION_RSS = """
import sys, onnxruntime as ort
from claude_mem.search.embed import locate
from claude_mem.search.int8_lookup import int8_lookups
from claude_mem.search.int8_matmul import int8_products
def rss():
    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS'))
model = int8_lookups(locate('minilm-l6-int8')[0].read_bytes())
model = int8_products(model) if sys.argv[1] == 'products' else model
with open(sys.argv[2], 'wb') as out:
    out.write(model)
del model
options = ort.SessionOptions()
options.enable_cpu_mem_arena = False
options.log_severity_level = 3
before = rss()
session = ort.InferenceSession(sys.argv[2], options, providers=['CPUExecutionProvider'])
print(rss() - before)
"""


def test_a_session_of_int8_products_holds_tens_of_mib_less(tmp_path: Path) -> None:
    """What the rewrite is for: ONNX Runtime no longer folds the weights to float32."""
    grown = {
        kind: int(
            subprocess.run(
                [sys.executable, "-c", SESSION_RSS, kind, str(tmp_path / f"{kind}.onnx")],
                capture_output=True, text=True, check=True,
            ).stdout
        )
        for kind in ("lookups", "products")
    }  # fmt: skip
    assert grown["lookups"] - grown["products"] > 20 * 1024  # KiB: the float32 copies, ~40 MiB


def test_a_model_that_does_not_parse_is_left_to_onnx_runtime() -> None:
    from claude_mem.search.embed import locate
    from claude_mem.search.int8_lookup import int8_lookups
    from claude_mem.search.int8_matmul import int8_products

    whole = locate(MODEL)[0].read_bytes()
    for broken in (b"", b"not a model", b"\x0f\xff", whole[: len(whole) // 2]):
        assert int8_products(broken) == broken
        assert int8_lookups(broken) == broken
