"""Team sync through the real `team.sync.TeamSync`: push, pull and worker-to-worker propagation.

    .venv/bin/python bench/team_sync_bench.py [--count 20000] [--tries 20]

Server. `claude_mem.team.embedded` (what `claude-mem team serve --embedded` starts) in a
temporary folder; `team.admin.init` and `add_member` make the team and two members, as
`claude-mem team init` and `team add-member` do (row-level security on for both).

Push. A real local store (`claude_mem.store.Database` in a temporary data dir) holds `--count`
observations from `bench/synthetic.py` (real-shaped text, 12 projects), each with a vector. The
server's HNSW index costs more per insert for vectors without structure, so by default they are
shaped like real ones, as in search_bench: 300 observation texts embedded by the local model are
templates, row i gets template (i mod 300) plus Gaussian noise (σ = 0.02), normalised;
`--vectors unit` gives plain synthetic unit vectors (Gaussian, normalised, no model), a harder
case for the index. `store.team.share`
queues every project (records, then their vectors), then `TeamSync.sync_once()` is timed until
the outbox is empty: read the outbox, clean every record again, one server transaction per
batch, acknowledge locally, then the pull of the round (our own rows only move the cursor).

Pull. A second member with a fresh store and data dir (another machine id): `sync_once()`
timed until every observation is in its store (written with its author, full text indexed).

Propagation. Two real workers (processes started by `claude-mem worker start`, each its own
data dir and member, `CLAUDE_MEM_TEAM_SYNC_S` at its default): `POST /api/memory` on worker A,
then `/api/search` on worker B polled every 20 ms until it finds it; p50/p95 over `--tries`.

Floors, printed ok/✗: push ≥ 1,000 observations/s; a teammate finds a shared observation in
search within 5 s (p95).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).parent))

import claude_mem.search  # noqa: F401 - first: numpy's thread default, as in the worker

# isort: split
import httpx2
import numpy as np
from tests.test_team_sync import worker_process

import synthetic
from claude_mem.search.embed import load_embedder
from claude_mem.store import Database
from claude_mem.store import team as team_store
from claude_mem.store import vectors as vector_store
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session
from claude_mem.team import admin, embedded, pg
from claude_mem.team.schema import DIMENSIONS
from claude_mem.team.sync import TeamSync
from search_bench import SIGMA
from stats import percentile

PUSH_FLOOR = 1000.0  # observations/s
PROPAGATION_FLOOR_S = 5.0  # p95
TEAM, DATABASE = "bench", "team_sync_bench"
PROJECTS = [f"project-{n}" for n in range(12)]  # synthetic's


def use_data_dir(path: Path) -> None:
    """The data dir (and so the machine id) of what is made next in this process."""
    path.mkdir(parents=True, exist_ok=True)
    os.environ["CLAUDE_MEM_DATA_DIR"] = str(path)


def templates(kind: str) -> np.ndarray | None:
    """Real embeddings of 300 observation texts (None for plain unit vectors)."""
    if kind == "unit":
        return None
    embedder = load_embedder("minilm-l6-int8")
    assert embedder is not None
    texts = [f"{o.title}\n{o.narrative}" for o in synthetic.observations(300, 1, seed=123)]
    return np.asarray(embedder.embed(texts), dtype=np.float32)


def unit_vectors(start: int, count: int, shapes: np.ndarray | None) -> np.ndarray:
    rng = np.random.default_rng(start + 1)
    if shapes is None:
        vectors = rng.normal(size=(count, DIMENSIONS)).astype(np.float32)
    else:
        base = shapes[np.arange(start, start + count) % len(shapes)]
        vectors = base + rng.normal(0, SIGMA, base.shape).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def store_with_observations(path: Path, count: int, shapes: np.ndarray | None) -> Database:
    """A store of `count` observations with vectors, every project shared."""
    use_data_dir(path)
    db = Database(path / "claude-mem.db")
    with db.write() as conn:
        sid = ensure_session(conn, platform="bench", host_session_id="b", project=PROJECTS[0])
    rows = list(synthetic.observations(count, sid))
    for offset in range(0, count, 1000):
        chunk = rows[offset : offset + 1000]
        units = unit_vectors(offset, len(chunk), shapes)
        with db.write() as conn:
            for obs, unit in zip(chunk, units, strict=True):
                obs_id, _ = insert_observation(conn, obs)
                vector_store.upsert(conn, "observation", obs_id, "bench", unit)
    with db.write() as conn:
        for project in PROJECTS:
            team_store.share(conn, project)
    return db


def synced(db: Database, url: str, done: Callable[[], bool]) -> tuple[float, int]:
    """Seconds of `sync_once` rounds until `done()`, and the rounds it took."""
    sync = TeamSync(db, url)
    start, rounds = time.perf_counter(), 0
    try:
        while not done():
            sync.sync_once()
            rounds += 1
        return time.perf_counter() - start, rounds
    finally:
        sync.stop()


def observation_count(db: Database) -> int:
    return int(db.read().execute("SELECT count(*) FROM observations").fetchone()[0])


def found(client: httpx2.Client, word: str) -> bool:
    answer = client.get("/api/search", params={"query": word, "project": "shared"})
    return answer.status_code == 200 and word in answer.text


def propagation(tmp: Path, a_url: str, b_url: str, tries: int) -> list[float]:
    """Seconds from `POST /api/memory` on worker A to worker B's search finding it."""
    seconds: list[float] = []
    with worker_process(tmp / "worker-a", a_url) as a, worker_process(tmp / "worker-b", b_url) as b:
        for client in (a, b):
            assert client.post("/api/team/share", json={"project": "shared"}).status_code == 200
        for n in range(tries):
            word = f"propagationmark{n}x{os.getpid()}"
            start = time.perf_counter()
            answer = a.post(
                "/api/memory", json={"project": "shared", "title": word, "text": f"{word} body"}
            )
            assert answer.status_code == 200, answer.text
            while not found(b, word):
                if time.perf_counter() - start > 60:
                    raise SystemExit(f"worker B never found {word}")
                time.sleep(0.02)
            seconds.append(time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--vectors", choices=("real", "unit"), default="real")
    args = parser.parse_args()
    shapes = templates(args.vectors)

    with tempfile.TemporaryDirectory(prefix="team-sync-bench-") as name:
        tmp = Path(name)
        server = embedded.start(tmp, create_user=True)
        try:
            with pg.connect(server.url(), autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {DATABASE}")
            owner = server.url(DATABASE)
            admin.init(owner, TEAM)
            urls = [admin.add_member(owner, f"bench_{n}", TEAM) for n in "abcd"]

            pusher = store_with_observations(tmp / "pusher", args.count, shapes)
            push_s, push_rounds = synced(
                pusher, urls[0], lambda: team_store.outbox_size(pusher.read()) == 0
            )
            with pg.connect(owner) as conn:
                row = conn.execute(
                    "SELECT count(*), count(embedding) FROM claude_mem.records"
                ).fetchone()
            assert row is not None
            on_server, embedded_rows = int(row[0]), int(row[1])
            pusher.close()

            use_data_dir(tmp / "puller")
            puller = Database(tmp / "puller" / "claude-mem.db")
            pull_s, pull_rounds = synced(
                puller, urls[1], lambda: observation_count(puller) >= args.count
            )
            pulled = observation_count(puller)
            puller.close()

            seconds = propagation(tmp, urls[2], urls[3], args.tries)
        finally:
            server.stop()

    push_rate, pull_rate = args.count / push_s, pulled / pull_s
    p50, p95 = percentile(seconds, 0.5), percentile(seconds, 0.95)
    shape = "real-shaped" if shapes is not None else "unit"
    print(f"\n### {args.count:,} observations, {shape} vectors\n")
    print("| figure | value |\n|---|---|")
    ok = "ok" if push_rate >= PUSH_FLOOR else "✗"
    print(
        f"| push (`sync_once` until the outbox is empty, {push_rounds} round(s)) |"
        f" {push_rate:,.0f} observations/s ({push_s:.1f} s) {ok} |"
    )
    print(f"| on the server after the push | {on_server:,} rows, {embedded_rows:,} with vectors |")
    print(
        f"| pull into a fresh store ({pull_rounds} round(s)) |"
        f" {pull_rate:,.0f} observations/s ({pulled:,} in {pull_s:.1f} s) |"
    )
    ok = "ok" if p95 <= PROPAGATION_FLOOR_S else "✗"
    print(
        f"| worker A `POST /api/memory` → found by worker B's `/api/search`, {len(seconds)} tries |"
        f" p50 {p50:.2f} s, p95 {p95:.2f} s (floor p95 ≤ {PROPAGATION_FLOOR_S:.0f} s) {ok} |"
    )


if __name__ == "__main__":
    main()
