"""VectorIndex against a brute-force reference, and the vectors table's store rules."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from claude_mem.records import Summary
from claude_mem.search.vectors import VectorIndex
from claude_mem.store import Database
from claude_mem.store import vectors as store
from tests.store_helpers import observation, session


def unit_rows(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def reference(
    ids: list[int], rows: np.ndarray, q: np.ndarray, k: int, allowed: set[int] | None = None
) -> list[int]:
    scored = [(float(rows[i] @ q), row_id) for i, row_id in enumerate(ids)]
    scored = [s for s in scored if allowed is None or s[1] in allowed]
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [row_id for _, row_id in scored[:k]]


def test_query_matches_brute_force_with_and_without_filter() -> None:
    rows = unit_rows(3000)
    ids = list(range(10, 3010))
    index = VectorIndex()
    index.add(ids[:1500], rows[:1500])
    index.add(ids[1500:], rows[1500:])  # grows past the initial capacity
    assert index.size == 3000
    rng = np.random.default_rng(1)
    for q in unit_rows(20, seed=2):
        hits = index.query(q, 10)
        assert [i for i, _ in hits] == reference(ids, rows, q, 10)
        assert hits[0][1] == pytest.approx(float(max(rows @ q)), abs=1e-5)
        small = {int(x) for x in rng.choice(ids, 40, replace=False)}
        assert [i for i, _ in index.query(q, 10, small)] == reference(ids, rows, q, 10, small)
        big = {int(x) for x in rng.choice(ids, 5000 // 1, replace=True)} | {10**9}
        assert [i for i, _ in index.query(q, 7, big)] == reference(ids, rows, q, 7, big)


def test_allowed_filters_before_ranking_and_edge_cases() -> None:
    rows = unit_rows(50)
    index = VectorIndex()
    index.replace(list(range(50)), rows)
    q = rows[0]
    # The single allowed id is far down the unfiltered ranking, yet it is returned.
    worst = reference(list(range(50)), rows, q, 50)[-1]
    approx_score = pytest.approx(float(rows[worst] @ q))
    assert index.query(q, 5, {worst}) == [(worst, approx_score)]  # type: ignore[comparison-overlap]  # approx == float
    assert index.query(q, 5, set()) == []
    assert index.query(q, 5, {999}) == []
    assert index.query(q, 0) == []
    assert len(index.query(q, 500)) == 50
    assert VectorIndex().query(q, 5) == []
    with pytest.raises(ValueError, match="dimension"):
        index.query(np.ones(3, dtype=np.float32), 1)


def test_remove_and_replace_keep_results_exact() -> None:
    rows = unit_rows(200)
    ids = list(range(200))
    index = VectorIndex()
    index.add(ids, rows)
    gone = set(range(0, 200, 3))
    assert index.remove([*gone, 12345]) == len(gone)
    kept = [i for i in ids if i not in gone]
    assert index.size == len(kept)
    assert sorted(index.ids()) == kept
    for q in unit_rows(5, seed=9):
        assert [i for i, _ in index.query(q, 15)] == reference(kept, rows[kept], q, 15)
    # Re-adding an id replaces its vector instead of duplicating it.
    index.add([1], -rows[1:2])
    assert index.size == len(kept)
    assert index.query(-rows[1], 1)[0][0] == 1
    index.replace([7, 8], rows[[7, 8]])
    assert sorted(index.ids()) == [7, 8]


def test_concurrent_adds_and_queries() -> None:
    rows = unit_rows(2000)
    index = VectorIndex()
    errors: list[BaseException] = []

    def writer() -> None:
        for start in range(0, 2000, 8):
            index.add(list(range(start, start + 8)), rows[start : start + 8])

    def reader() -> None:
        try:
            for q in unit_rows(200, seed=3):
                for row_id, score in index.query(q, 5):
                    assert score == pytest.approx(float(rows[row_id] @ q), abs=1e-5)
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=writer),
        *(threading.Thread(target=reader) for _ in range(3)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert index.size == 2000


def test_store_roundtrip_model_recorded_and_deletes_propagate(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        first = observation(db, sid, title="one", narrative="n1", facts=["f1", "f2"])
        second = observation(db, sid, title="two")
        rows = unit_rows(2, dim=4)
        with db.write() as conn:
            assert store.upsert(conn, "observation", first, "m@1", rows[0])
            assert store.upsert(conn, "observation", second, "m@1", rows[1].tobytes())
            assert not store.upsert(conn, "observation", 999, "m@1", rows[0])  # no such row
        conn = db.read()
        ids, matrix = store.load(conn, "observation", "m@1")
        assert ids == [first, second]
        assert matrix.dtype == np.float32
        assert np.allclose(matrix, rows)
        dims = conn.execute("SELECT DISTINCT model, dim FROM vectors").fetchall()
        assert [tuple(r) for r in dims] == [("m@1", 4)]
        assert store.missing(conn, "observation", "m@1", 10) == []
        assert [r for r, _ in store.missing(conn, "observation", "m@2", 10)] == [second, first]
        with db.write() as w:
            w.execute("DELETE FROM observations WHERE id = ?", (first,))
        assert store.count(db.read(), "observation", "m@1") == 1
        # Editing the embedded text drops the stale vector, so it is embedded again.
        with db.write() as w:
            w.execute("UPDATE observations SET title = 'two, revised' WHERE id = ?", (second,))
        assert store.count(db.read(), "observation", "m@1") == 0
        assert store.missing(db.read(), "observation", "m@1", 5)[0][1].startswith("two, revised")


def test_missing_texts_per_kind_and_private_prompts_skipped(data_dir: Path) -> None:
    from claude_mem.store.sessions import add_prompt
    from claude_mem.store.summaries import insert_summary

    with Database() as db:
        sid = session(db)
        obs = observation(db, sid, title="T", subtitle="S", narrative="N", facts=["F1", "F2"])
        with db.write() as conn:
            summary = insert_summary(
                conn,
                Summary(
                    session_id=sid,
                    project="proj",
                    request="R",
                    learned="L",
                    completed="C",
                    next_steps="X",
                ),
            )
            public = add_prompt(conn, sid, "fix the flaky test").prompt_id
            add_prompt(conn, sid, "<private>secret plan</private>")
        conn = db.read()
        assert store.missing(conn, "observation", "m", 5) == [(obs, "T\nS\nN\nF1\nF2")]
        assert store.missing(conn, "summary", "m", 5) == [(summary, "R\nL\nC\nX")]
        assert store.missing(conn, "prompt", "m", 5) == [(public, "fix the flaky test")]
        assert store.count_missing(conn, "prompt", "m") == 1
        with db.write() as w:
            w.execute("DELETE FROM sessions WHERE id = ?", (sid,))  # cascades fire the triggers
            for kind, row_id in (("observation", obs), ("summary", summary), ("prompt", public)):
                store.upsert(w, kind, row_id, "m", np.ones(2))  # rows gone: nothing written
        assert store.models(db.read()) == {}


def test_delete_other_models_and_delete_model(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        a, b = observation(db, sid, title="a"), observation(db, sid, title="b")
        with db.write() as conn:
            store.upsert(conn, "observation", a, "old@1", np.ones(3))
            store.upsert(conn, "observation", b, "new@1", np.ones(4))
            assert store.delete_other_models(conn, "new@1") == 1
            assert store.models(conn) == {"new@1": 1}
            assert store.delete_model(conn, "new@1", "observation") == 1
        with pytest.raises(ValueError, match="unknown vector kind"):
            store.count(db.read(), "nope", "m")


def test_large_index_is_quantised_and_close_to_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    from claude_mem.search import vectors

    monkeypatch.setattr(vectors, "QUANTIZE_ABOVE", 500)
    monkeypatch.setattr(vectors, "_CHUNK", 64)
    rows = unit_rows(1200, dim=64, seed=3)
    ids = list(range(1, 1201))
    grown = VectorIndex()
    grown.add(ids[:400], rows[:400])
    assert not grown.quantized
    grown.add(ids[400:], rows[400:])  # crosses the threshold: converted in place
    loaded = VectorIndex()
    loaded.replace(ids, rows)
    assert grown.quantized
    assert loaded.quantized
    assert grown.remove([5, 6]) == 2
    for seed in range(5):
        q = unit_rows(1, dim=64, seed=100 + seed)[0]
        exact = reference(ids, rows, q, 50)
        for index in (grown, loaded):
            allowed = set(ids[::3])
            for hits, want in (
                (index.query(q, 50), exact),
                (index.query(q, 50, allowed), reference(ids, rows, q, 50, allowed)),
            ):
                for row_id, score in hits:
                    assert score == pytest.approx(float(rows[row_id - 1] @ q), abs=0.02)
                kept = [i for i in want if i not in (5, 6) or index is loaded]
                assert len({i for i, _ in hits} & set(kept)) >= 0.9 * min(50, len(kept))
        assert loaded.query(rows[9], 1)[0][0] == 10


def test_sign_code_shortlist_keeps_nearest_rows_through_adds_and_removes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from claude_mem.search import vectors

    monkeypatch.setattr(vectors, "QUANTIZE_ABOVE", 500)
    rows = unit_rows(3000, dim=96, seed=5)  # 96 dims: codes padded to two 64-bit words
    ids = list(range(1, 3001))
    index = VectorIndex()
    index.add(ids[:1000], rows[:1000])
    index.add(ids[1000:], rows[1000:])  # grows and quantises: codes must follow every row
    assert index.quantized
    removed = set(range(1, 3001, 7))
    assert index.remove(removed) == len(removed)  # the last rows move into the holes
    alive = [i for i in ids if i not in removed]
    signs = rows > 0
    k = 5  # 3000 rows > 2 × SHORTLIST × k: the shortlist is used
    for row_id in alive[::97]:
        hits = index.query(rows[row_id - 1], k)
        assert hits[0][0] == row_id  # its own code is at distance 0: always shortlisted
        assert not {i for i, _ in hits} & removed
        # The shortlist is exactly the rows nearest in Hamming distance, cut at the first
        # distance that reaches SHORTLIST × k rows (ties kept).
        q = unit_rows(1, dim=96, seed=row_id)[0]
        distance = {i: int((signs[i - 1] != (q > 0)).sum()) for i in alive}
        ordered = sorted(distance.values())
        cutoff = ordered[vectors.SHORTLIST * k - 1]
        want = {i for i, d in distance.items() if d <= cutoff}
        with index._lock:
            got = {int(index._ids[p]) for p in index._shortlist(None, index.size, q, 100)}
        assert got == want
        assert {i for i, _ in index.query(q, k)} <= want
    allowed = set(alive[::2])
    for row_id in sorted(allowed)[:10]:
        hits = index.query(rows[row_id - 1], k, allowed)
        assert hits[0][0] == row_id
        assert {i for i, _ in hits} <= allowed


def test_clear_empties_the_index_and_it_fills_again() -> None:
    index = VectorIndex()
    rows = np.eye(4, dtype=np.float32)
    index.add([1, 2, 3, 4], rows)
    index.clear()
    assert index.size == 0
    assert index.ids() == []
    assert index.query(rows[0], 2) == []
    index.add([7], rows[:1])
    assert index.query(rows[0], 1) == [(7, pytest.approx(1.0))]  # type: ignore[comparison-overlap]  # approx == float


def test_equal_scores_rank_in_id_order_as_python_numbers() -> None:
    basis = np.eye(16, dtype=np.float32)  # exact products: ties are ties
    ids = [40, 7, 19, 3, 25, 11]
    index = VectorIndex()
    index.replace(ids, basis[[0, 1, 0, 2, 1, 3]])
    hits = index.query(basis[0], 6)
    # 40 and 19 score 1, the others 0: each score's ids in id order.
    assert hits == [(19, 1.0), (40, 1.0), (3, 0.0), (7, 0.0), (11, 0.0), (25, 0.0)]
    assert all(type(i) is int and type(s) is float for i, s in hits)
    assert index.query(basis[1], 2) == [(7, 1.0), (25, 1.0)]
