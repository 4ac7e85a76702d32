"""What the background embedder embeds for a commit, and identical texts embedded once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from claude_mem.search import embedding_task
from claude_mem.search.embed import Embedder
from claude_mem.search.embedding_task import Embedding
from claude_mem.store import Database
from claude_mem.store import vectors as store
from tests.store_helpers import CountingEmbedder, observation, session

MODEL = "minilm-l6-int8"


def commit(db: Database, sid: int, project: str, subject: str, body: str = "") -> int:
    return observation(
        db,
        sid,
        project=project,
        type="change",
        title=subject,
        subtitle="commit a1b2c3d · 2023-04-02 · Alice Doe",
        narrative=body,
        facts=["commit " + "a1b2c3d4" * 5, "changed src/x.py (+3 -1)"],
        concepts=["history"],
        source="git",
    )


def drain(task: Embedding) -> int:
    steps = 0
    while task.step():
        steps += 1
    return steps


def started(db: Database, counting: CountingEmbedder) -> Embedding:
    task = Embedding(db, MODEL, loader=lambda _: counting)
    task._prepare(counting)
    return task


def test_a_commit_embeds_its_subject_and_its_bodys_first_paragraph(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        body = "The gateway bans clients.\n\nSee the outage notes of March."
        with_body = commit(db, sid, "p", "Keep the retry count at 3", body)
        subject_only = commit(db, sid, "p", "Bump the parser to 2.1")
        hooks = observation(
            db, sid, title="T", subtitle="S", narrative="N", facts=["F1"], source="hooks"
        )
        texts = dict(store.missing(db.read(), "observation", "m", 10))
    assert texts[with_body] == "Keep the retry count at 3\nThe gateway bans clients."
    assert texts[subject_only] == "Bump the parser to 2.1"
    assert texts[hooks] == "T\nS\nN\nF1"  # other observations keep their text


def test_identical_texts_are_embedded_once_and_share_the_vector(
    data_dir: Path, embedder: Embedder
) -> None:
    with Database() as db:
        origin, clone = session(db, "git-origin", "origin"), session(db, "git-clone", "clone")
        history = [
            (f"Fix the retry loop number {i}", "Backoff doubles." * (i % 2)) for i in range(5)
        ]
        first = [commit(db, origin, "origin", s, b) for s, b in history]
        second = [commit(db, clone, "clone", s, b) for s, b in history]
        counting = CountingEmbedder(embedder)
        task = started(db, counting)
        drain(task)
        assert sorted(counting.texts) == sorted(
            {t for _, t in store.missing(db.read(), "observation", "-", 99)}
        )
        assert len(counting.texts) == len(history)
        ids, matrix = store.load(db.read(), "observation", embedder.model_id)
        rows = dict(zip(ids, matrix, strict=True))
        for a, b in zip(first, second, strict=True):
            assert np.array_equal(rows[a], rows[b])
        assert task.index("observation").size == 10

        # A third clone later: its rows are copied from the stored vectors, the model not run.
        third = session(db, "git-third", "third")
        later = [commit(db, third, "third", s, b) for s, b in history]
        task.notify()
        drain(task)
        assert len(counting.texts) == len(history)
        ids, matrix = store.load(db.read(), "observation", embedder.model_id)
        rows = dict(zip(ids, matrix, strict=True))
        assert all(np.array_equal(rows[c], rows[a]) for a, c in zip(first, later, strict=True))
        hashes = db.read().execute("SELECT count(DISTINCT text_hash) FROM vectors").fetchone()[0]
        assert hashes == len(history)


def test_vectors_without_a_hash_still_load_but_are_not_shared(
    data_dir: Path, embedder: Embedder
) -> None:
    with Database() as db:
        sid = session(db)
        old = commit(db, sid, "p", "Keep the retry count at 3")
        with db.write() as conn:  # as written before migration 0014: no text hash
            store.upsert(conn, "observation", old, embedder.model_id, embedder.embed(["x"])[0])
        twin = commit(db, session(db, "s-2", "q"), "q", "Keep the retry count at 3")
        counting = CountingEmbedder(embedder)
        task = started(db, counting)
        assert task.index("observation").ids() == [old]
        drain(task)
        assert counting.texts == ["Keep the retry count at 3"]  # embedded, not copied
        assert sorted(task.index("observation").ids()) == sorted([old, twin])
        hashes = dict(db.read().execute("SELECT row_id, text_hash FROM vectors").fetchall())
        assert hashes[old] is None
        assert hashes[twin] == store.text_hash("Keep the retry count at 3")


def test_rows_deleted_while_their_batch_embeds_get_no_vector(
    data_dir: Path, embedder: Embedder
) -> None:
    with Database() as db:
        sid = session(db)
        ids = [commit(db, sid, "p", f"Change number {i}") for i in range(4)]

        def delete_one() -> None:
            with db.write() as conn:
                conn.execute("DELETE FROM observations WHERE id = ?", (ids[1],))

        counting = CountingEmbedder(embedder, during=delete_one)
        task = started(db, counting)
        drain(task)
        assert sorted(task.index("observation").ids()) == sorted(set(ids) - {ids[1]})
        assert sorted(store.ids(db.read(), "observation", embedder.model_id)) == sorted(
            set(ids) - {ids[1]}
        )
        assert task.status()["pending"] == 0


def test_an_interrupted_backlog_resumes_and_new_rows_come_first(
    data_dir: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding_task, "BATCH_ROWS", 2)
    with Database() as db:
        sid = session(db)
        ids = [commit(db, sid, "p", f"Change number {i}") for i in range(7)]
        counting = CountingEmbedder(embedder)
        task = started(db, counting)
        assert task.step()
        assert task.step()
        assert sorted(task.index("observation").ids()) == sorted(ids[3:])  # newest first

        # A new row while the walk is halfway: with notify it is next, then the walk goes on.
        fresh = commit(db, sid, "p", "A change made meanwhile")
        task.notify()
        assert task.step()
        assert fresh in task.index("observation").ids()

        # The worker stops; the next one carries on from what is stored.
        resumed = started(db, counting)
        drain(resumed)
        assert sorted(resumed.index("observation").ids()) == sorted([*ids, fresh])
        assert sorted(counting.texts) == sorted(
            [f"Change number {i}" for i in range(7)] + ["A change made meanwhile"]
        )


def test_a_row_made_behind_the_walk_is_found_when_it_wraps(
    data_dir: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding_task, "BATCH_ROWS", 2)
    with Database() as db:
        sid = session(db)
        ids = [commit(db, sid, "p", f"Change number {i}") for i in range(5)]
        task = started(db, CountingEmbedder(embedder))
        assert task.step()
        fresh = commit(db, sid, "p", "Made without a notify")  # above the walk
        drain(task)
        assert sorted(task.index("observation").ids()) == sorted([*ids, fresh])
        assert task.status()["pending"] == 0
