"""Time inserting observations and full-text queries over them.

    .venv/bin/python bench/store_bench.py [--count 100000]

Prints a Markdown table; the latest figures are kept in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from claude_mem.store import Database
from claude_mem.store.fulltext import search_observations
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session
from stats import percentile
from synthetic import observations

QUERIES = [
    "scheduler",
    "race condition",
    "src/core/auth_3.py",
    "token expiry",
    "billing_sync()",
    "deadlock checkpoint",
    "unicode path",
    "missing index",
    "retry backoff API",
    "Refactored cache",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "bench.db")
        with db.write() as conn:
            sid = ensure_session(conn, platform="bench", host_session_id="b", project="p")

        rows = list(observations(args.count, sid))
        start = time.perf_counter()
        for offset in range(0, len(rows), args.batch):
            with db.write() as conn:
                for obs in rows[offset : offset + args.batch]:
                    insert_observation(conn, obs)
        bulk = time.perf_counter() - start

        single = list(observations(2000, sid, seed=99))
        start = time.perf_counter()
        for obs in single:
            with db.write() as conn:
                insert_observation(conn, obs)
        per_tx = (time.perf_counter() - start) / len(single)

        conn = db.read()
        timings: list[float] = []
        hits = 0
        for _ in range(20):
            for query in QUERIES:
                t0 = time.perf_counter()
                hits += len(search_observations(conn, query, limit=20))
                timings.append((time.perf_counter() - t0) * 1000)
        projected: list[float] = []
        for _ in range(20):
            for query in QUERIES:
                t0 = time.perf_counter()
                search_observations(conn, query, projects=("project-3",), limit=20)
                projected.append((time.perf_counter() - t0) * 1000)
        size = sum(p.stat().st_size for p in Path(tmp).iterdir()) / 1e6
        db.close()

    print("| figure | value |\n|---|---|")
    print(f"| observations inserted | {args.count:,} (batches of {args.batch}) |")
    print(f"| bulk insert | {bulk:.1f} s ({args.count / bulk:,.0f} rows/s) |")
    print(f"| insert, one transaction per row | {per_tx * 1000:.2f} ms |")
    print(f"| database size | {size:.0f} MB |")
    print(
        f"| FTS query, top 20 ({len(timings)} queries) | p50 {statistics.median(timings):.2f} ms,"
        f" p95 {percentile(timings, 0.95):.2f} ms |"
    )
    print(
        f"| FTS query + project filter | p50 {statistics.median(projected):.2f} ms,"
        f" p95 {percentile(projected, 0.95):.2f} ms |"
    )
    print(f"| hits returned (sanity) | {hits:,} |")


if __name__ == "__main__":
    main()
