"""Time hybrid search (full text + vectors) over 10k and 100k synthetic observations.

    .venv/bin/python bench/search_bench.py [--sizes 10000 100000] [--rounds 10]

Prints a Markdown table per size; the latest figures are kept in bench/RESULTS.md.

Corpus. `bench/synthetic.py` with a wider vocabulary (set here, for this bench only): 160
module names (`invoice_service`, `webhook_parser`…) instead of 17 and 48 problem phrases
instead of 8, so a one-word query matches hundreds to a few thousand of 100k rows instead of a
third of them, closer to a real project's memory. The store bench keeps the narrow vocabulary.

Vectors. Embedding 100k rows with the real model takes ~80 min at ~21 texts/s, so:
- throughput is measured by embedding `--sample` (300) distinct observation texts for real;
- those same 300 real embeddings are the templates of the full index: row i gets template
  (i mod 300) plus Gaussian noise (σ = 0.02 per dimension, ~0.4 in norm before re-normalising
  → cosine to its template ≈ 0.93), so the index has realistic clusters and no exact ties.
  The vectors are written to the `vectors` table as float32 blobs, as the worker does.
- Queries are embedded for real on every search (no query cache), through `HybridSearcher`
  with a VectorIndex per kind holding the vectors loaded back from SQLite.

Index build = `store.vectors.load` + `VectorIndex.replace` for all 100k rows (what the worker
does at start-up). RSS is this process's, with the model loaded and every index built.

Through the worker. Then the same store (a copy, through SQLite's backup) is searched through a
real worker's `GET /api/search` (`python -m claude_mem.worker run` on a loopback port, top 20):
the hook-style raw socket client (`claude_mem.worker.client.request`), a new connection per
request, timed from connect to the last body byte. Hybrid with embeddings on; full text in a
second worker with `CLAUDE_MEM_EMBEDDING_MODEL=none`. Measured queries never repeat: each is one
of the 15 with its own lead of function words (`so`, `and the`…), which full text drops and the
model embeds, so no query's embedding is cached; a separate row repeats the plain 15 (the
worker's query-embedding cache answers them). Then full text for `BUG_REPORT`, a pasted 60-word
bug report (a function and a file of the corpus among common words), each search new the same
way. Floors, printed ok/✗: at 10k hybrid p50 ≤ 8 ms and full text p50 ≤ 5 ms; at 100k hybrid
p95 ≤ 15 ms and the bug report's p95 ≤ 30 ms. Beside the distinct-query rows, the
worker's CPU per search (its every thread, from /proc): on a loaded machine the timings wait
for the cores, this figure much less, so it is what an A/B of two versions compares there.

    .venv/bin/python bench/search_bench.py --route-only --baseline DIR [--sizes 10000]

An A/B in one sitting: DIR holds another tree's `src` (`git archive main src | tar -x -C DIR`);
a worker of each serves its own copy of the store side by side and the distinct-query rounds
alternate between them (full text, the bug report, then hybrid), so both see the same load.
Prints each one's p50, p95 and CPU per search, and their ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import itertools
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).parent))

import claude_mem.search  # noqa: F401 - first: numpy's thread default, as in the worker

# isort: split
import numpy as np

import synthetic
from claude_mem.search.embed import load_embedder
from claude_mem.search.hybrid import HybridSearcher
from claude_mem.search.vectors import VectorIndex
from claude_mem.store import Database
from claude_mem.store import vectors as vector_store
from claude_mem.store.fulltext import match_expression
from claude_mem.store.observations import insert_observation
from claude_mem.store.search_queries import FTS_WINDOW, KINDS, SearchFilters, fulltext_matches
from claude_mem.store.sessions import ensure_session
from claude_mem.worker.client import request
from stats import percentile
from worker_start_bench import worker_on

_NOUNS = [
    "invoice", "user", "token", "job", "report", "webhook", "email", "upload", "search",
    "session", "payment", "audit", "schema", "metrics", "feature_flag", "rate_limit",
    "notification", "export", "tenant", "scheduler",
]  # fmt: skip
_ROLES = ["service", "store", "client", "handler", "worker", "parser", "router", "cache"]
WIDE_MODULES = [f"{noun}_{role}" for noun in _NOUNS for role in _ROLES]  # 160
WIDE_PROBLEMS = [
    *synthetic.PROBLEMS,
    "timezone offset dropped when serialising timestamps",
    "N+1 queries when listing invoices",
    "webhook signature checked against the parsed body",
    "connection pool exhausted under load",
    "memory leak from an unbounded LRU",
    "CSV export truncating multibyte characters",
    "feature flag evaluated before the tenant is known",
    "rate limiter counting retries twice",
    "JWT audience claim not validated",
    "migration locking the users table for minutes",
    "flaky test depending on dict ordering",
    "stack overflow on deeply nested JSON",
    "email template escaping HTML twice",
    "upload chunk size not aligned with the multipart boundary",
    "scheduler firing jobs twice after daylight saving change",
    "audit log missing the acting user",
    "search index not updated after bulk edits",
    "session cookie missing SameSite attribute",
    "payment retries charging the card twice",
    "metrics histogram buckets too coarse for latency",
    "config reload ignoring environment overrides",
    "graceful shutdown dropping in-flight requests",
    "integer overflow in the byte counter",
    "locale-dependent float parsing",
    "symlinked paths resolved twice",
    "HTTP 304 responses cached without ETag",
    "background worker swallowing exceptions",
    "schema validation skipped for optional fields",
    "websocket heartbeat timing out behind the proxy",
    "slow regex backtracking on long lines",
    "sorting unstable across pages",
    "permission check using the wrong tenant id",
    "report generation blocking the event loop",
    "dead letter queue never drained",
    "notification batching losing the last item",
    "test fixtures leaking temporary files",
    "case-insensitive email comparison missing",
    "gzip responses double-compressed by the proxy",
    "cron expression parsed in local time",
    "cache stampede when a hot key expires",
]  # 48

QUERIES = [
    "cache",  # very frequent words
    "race condition",
    "scheduler",
    "Fixed",
    "src/core/invoice_service_3.py",  # a path
    "token_client_sync()",  # an identifier
    "deadlock checkpoint",
    "timezone offset",
    "retry backoff API",
    "webhook signature",
    "jobs picked up twice by concurrent workers",  # paraphrases: vectors' job
    "why did the login token expire too early",
    "database migration took a lock for a long time",
    "memory keeps growing in the cache",
    "kubernetes helm chart",  # matches nothing in full text
]
# A pasted bug report (60 words): a function and a file of the corpus among words that most of
# its rows hold, and words none holds. Full text ranks every match of its rare terms.
BUG_REPORT = (
    "Since yesterday's big deploy invoice_service_sync() raises a timeout when two workers claim "
    "the same job: the scheduler retries without backoff and the payment is charged twice. The "
    "traceback points at src/core/invoice_service_12.py line 214, right after the stale cache "
    "entry is read. Tests still pass locally but CI fails intermittently, and rolling back the "
    "settings change did not help at all."
)
SIGMA = 0.02
# Words full text drops (text.FUNCTION_WORDS) and the model embeds: leads that make a query new.
LEADS = ("so", "and", "now", "then", "the", "about", "but", "also", "just", "again", "here")
# Route floors per size: (mode, percentile, ms).
FLOORS: dict[int, list[tuple[str, float, float]]] = {
    10_000: [("hybrid", 0.5, 8.0), ("fulltext", 0.5, 5.0)],
    100_000: [("hybrid", 0.95, 15.0), ("bug report", 0.95, 30.0)],
}
REPORT_ROUNDS = 4  # the bug report is searched this many times per round of the 15 queries


def rss_mib() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


class Source:
    """A VectorSource: the real embedder for every query (no cache) and one index per kind."""

    def __init__(self, embedder, indexes: dict[str, VectorIndex]) -> None:
        self.embedder, self.indexes = embedder, indexes

    def query_vector(self, text: str):
        return self.embedder.embed([text])[0]

    def index(self, kind: str) -> VectorIndex:
        return self.indexes[kind]


def timed(fn, queries: list[str], rounds: int) -> list[float]:
    for query in queries:  # warm-up: page cache, statement cache
        fn(query)
    timings: list[float] = []
    for _ in range(rounds):
        for query in queries:
            t0 = time.perf_counter()
            fn(query)
            timings.append((time.perf_counter() - t0) * 1000)
    return timings


def row(label: str, values: list[float]) -> str:
    return (
        f"| {label} ({len(values)} queries) | p50 {statistics.median(values):.2f} ms,"
        f" p95 {percentile(values, 0.95):.2f} ms, max {max(values):.1f} ms |"
    )


def build(count: int, embedder, templates: np.ndarray, path: Path) -> float:
    """Write `count` observations and their vectors to a new database; returns insert seconds."""
    db = Database(path)
    with db.write() as conn:
        sid = ensure_session(conn, platform="bench", host_session_id="b", project="p")
    start = time.perf_counter()
    rows = list(synthetic.observations(count, sid))
    for offset in range(0, len(rows), 1000):
        with db.write() as conn:
            for obs in rows[offset : offset + 1000]:
                insert_observation(conn, obs)
    insert_s = time.perf_counter() - start
    del rows

    rng = np.random.default_rng(11)
    with db.write() as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM observations ORDER BY id")]
        for offset in range(0, len(ids), 10_000):
            chunk = ids[offset : offset + 10_000]
            base = templates[np.arange(offset, offset + len(chunk)) % len(templates)]
            noisy = base + rng.normal(0, SIGMA, base.shape).astype(np.float32)
            noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
            conn.executemany(
                """INSERT INTO vectors (kind, row_id, model, dim, vector, created_at)
                   VALUES ('observation', ?, ?, ?, ?, 0)""",
                [
                    (i, embedder.model_id, embedder.dim, v.astype("<f4").tobytes())
                    for i, v in zip(chunk, noisy, strict=True)
                ],
            )
    db.close()
    return insert_s


def recall(conn, embedder, index: VectorIndex) -> tuple[float, float]:
    """Share of the exact float32 top 20 and top 200 that the index returns, over QUERIES
    (int8 rows and, at this size, the sign-code shortlist both approximate)."""
    ids, matrix = vector_store.load(conn, "observation", embedder.model_id)
    ids = np.asarray(ids)
    found = {20: [], 200: []}
    for query in QUERIES:
        vector = embedder.embed([query])[0]
        exact = ids[np.argsort(-(matrix @ vector), kind="stable")[:200]]
        got = [row_id for row_id, _ in index.query(vector, 200)]
        for k, shares in found.items():
            shares.append(len(set(exact[:k].tolist()) & set(got[:k])) / k)
    return statistics.mean(found[20]), statistics.mean(found[200])


def bm25_kept(conn) -> tuple[float, float]:
    """(mean, lowest) over QUERIES of the top 20's BM25 sum under the window, as a share of the
    top 20's when every match is scored: what the window costs in full-text ranking."""
    shares = []
    for query in QUERIES:
        every = fulltext_matches(
            conn, "observation", query, SearchFilters(), 20, window=10**9
        ).ranked
        windowed = fulltext_matches(conn, "observation", query, SearchFilters(), 20).ranked
        if every:
            shares.append(sum(s for _, s in windowed) / sum(s for _, s in every))
    return statistics.mean(shares), min(shares)


def measure(path: Path, rounds: int) -> list[str]:
    """Run in a fresh process (like a worker): load the model, build the index, search."""
    embedder = load_embedder("minilm-l6-int8")
    db = Database(path)
    conn = db.read()
    start = time.perf_counter()
    indexes = {kind: VectorIndex() for kind in KINDS}
    for kind in KINDS:
        kind_ids, matrix = vector_store.load(conn, kind, embedder.model_id)
        indexes[kind].replace(kind_ids, matrix)
        del matrix
    build_s = time.perf_counter() - start
    gc.collect()

    fulltext = HybridSearcher(db)
    hybrid = HybridSearcher(db, Source(embedder, indexes))
    project = SearchFilters(projects=("project-3",))
    results = [
        row("hybrid search, top 20", timed(hybrid.search, QUERIES, rounds)),
        row("FTS-only search, top 20", timed(fulltext.search, QUERIES, rounds)),
        row(
            "FTS-only search, a pasted 60-word bug report",
            timed(fulltext.search, [BUG_REPORT], REPORT_ROUNDS * rounds),
        ),
        row(
            "hybrid + project filter",
            timed(lambda q: hybrid.search(q, project), QUERIES, rounds),
        ),
        row(
            "FTS-only + project filter",
            timed(lambda q: fulltext.search(q, project), QUERIES, rounds),
        ),
        row(
            "query embedding alone",
            timed(lambda q: embedder.embed([q]), QUERIES, rounds),
        ),
    ]
    vec = np.asarray(embedder.embed(["cache stampede"])[0])
    results.append(
        row(
            "vector index query alone (100 k=200)",
            timed(lambda _q: indexes["observation"].query(vec, 200), ["x"] * 10, rounds),
        )
    )
    matches = {
        q: conn.execute(
            "SELECT count(*) FROM observations_fts WHERE observations_fts MATCH ?",
            (match_expression(q),),
        ).fetchone()[0]
        for q in ("cache", "scheduler", "Fixed", "timezone offset")
    }
    current, peak = rss_mib()
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # return the load's freed heap (see the table)
    trimmed, _ = rss_mib()
    at_20, at_200 = recall(conn, embedder, indexes["observation"])
    kept, lowest = bm25_kept(conn)
    db.close()
    return [
        f"| vectors indexed | {indexes['observation'].size:,} × {embedder.dim}"
        f" {'int8 + row scale' if indexes['observation'].quantized else 'float32'} |",
        f"| index build (load from SQLite + VectorIndex) | {build_s * 1000:.0f} ms |",
        *results,
        f"| full-text matches of {', '.join(matches)} |"
        f" {', '.join(str(n) for n in matches.values())} |",
        f"| index recall vs exact float32 scan (top 20 / top 200) | {at_20:.3f} / {at_200:.3f} |",
        f"| full-text top 20, BM25 kept vs scoring every match (window {FTS_WINDOW}; mean,"
        f" lowest) | {kept:.3f}, {lowest:.3f} |",
        f"| process RSS, model loaded + vectors indexed | {current:.0f} MiB; after malloc_trim"
        f" {trimmed:.0f} MiB (peak while loading {peak:.0f}) |",
    ]


def distinct(queries: list[str], count: int) -> list[list[str]]:
    """`count` rounds of `queries`, every text new: each gets a lead of function words."""
    leads = itertools.chain(
        ([a] for a in LEADS), ([a, b] for a, b in itertools.permutations(LEADS, 2))
    )
    return [[" ".join([*lead, q]) for q in queries] for lead in itertools.islice(leads, count)]


def route_search(port: int, token: str, query: str) -> tuple[float, str]:
    """(ms from connect to the last body byte, mode) of one GET /api/search."""
    path = "/api/search?" + urlencode({"query": query, "limit": 20})
    t0 = time.perf_counter()
    response = request("GET", path, port=port, token=token, timeout=30)
    elapsed = (time.perf_counter() - t0) * 1000
    if response.status != 200:
        raise RuntimeError(f"/api/search answered {response.status}: {response.body[:200]!r}")
    body = response.json()
    assert isinstance(body, dict)
    return elapsed, str(body["mode"])


def cpu_ms(pid: int) -> float:
    """CPU time (user + system, every thread) process `pid` has used, in ms."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def worker_searching(
    path: Path, mode: str, src: Path | None = None
) -> Iterator[tuple[int, str, int]]:
    """(port, token, pid) of a worker on a copy of `path` once its searches answer in `mode`;
    the worker runs `src`'s code when given (an A/B's other tree)."""
    with tempfile.TemporaryDirectory(prefix="cm-search-bench-") as data:
        with sqlite3.connect(path) as source, sqlite3.connect(Path(data, "claude-mem.db")) as copy:
            source.backup(copy)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_MEM_")}
        env["CLAUDE_MEM_EMBEDDING_MODEL"] = "minilm-l6-int8" if mode == "hybrid" else "none"
        if src is not None:
            env["PYTHONPATH"] = str(src)
        with worker_on(data, env) as (proc, port):
            token_file = Path(data, "worker.token")
            deadline = time.monotonic() + 180
            while True:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the worker never searched in {mode} mode")
                try:
                    token = token_file.read_text().strip()
                    if token and route_search(port, token, "warm up")[1] == mode:
                        break
                except (OSError, RuntimeError):
                    pass  # not listening, no token or not ready yet
                time.sleep(0.2)
            time.sleep(1.0)  # let start-up work (history refresh, embedder checks) settle
            yield port, token, proc.pid


def route_rows(path: Path, count: int, rounds: int) -> list[str]:
    """The figures through a real worker's /api/search, with their floors at this size."""
    floors = FLOORS.get(count, [])

    def figure(label: str, mode: str, values: list[float]) -> str:
        verdicts = [
            f"p{round(q * 100)} ≤ {ms:g} ms {'ok' if percentile(values, q) <= ms else '✗'}"
            for floor_mode, q, ms in floors
            if floor_mode == mode and not label.endswith("repeated")
        ]
        return row(label, values).removesuffix(" |") + "".join(f" · {v}" for v in verdicts) + " |"

    def cpu_row(label: str, pid: int, run: Callable[[], list[float]]) -> tuple[list[float], str]:
        """`run`'s timings, and the worker's CPU per search meanwhile: its threads' work,
        which a loaded machine's waits do not inflate the way they inflate the timings."""
        before = cpu_ms(pid)
        timings = run()
        per_search = (cpu_ms(pid) - before) / len(timings)
        return timings, f"| {label}, worker CPU per search | {per_search:.2f} ms |"

    batches = distinct(QUERIES, rounds + 1)
    results = []
    with worker_searching(path, "hybrid") as (port, token, pid):
        timed_route(port, token, batches[:1])  # warm-up: page cache, statements, code paths
        fresh, fresh_cpu = cpu_row(
            "/api/search hybrid, distinct queries",
            pid,
            lambda: timed_route(port, token, batches[1:]),
        )
        repeated = timed_route(port, token, [QUERIES] * (rounds + 1))[len(QUERIES) :]
        results += [
            figure("/api/search hybrid, distinct queries", "hybrid", fresh),
            figure("/api/search hybrid, repeated", "hybrid", repeated),
            fresh_cpu,
        ]
    reports = distinct([BUG_REPORT], REPORT_ROUNDS * rounds + 1)
    with worker_searching(path, "fulltext") as (port, token, pid):
        timed_route(port, token, batches[:1])
        full, full_cpu = cpu_row(
            "/api/search full text", pid, lambda: timed_route(port, token, batches[1:])
        )
        timed_route(port, token, reports[:1])
        label = "/api/search full text, a pasted 60-word bug report"
        report, report_cpu = cpu_row(label, pid, lambda: timed_route(port, token, reports[1:]))
        results += [
            figure("/api/search full text", "fulltext", full),
            full_cpu,
            figure(label, "bug report", report),
            report_cpu,
        ]
    return results


def timed_route(port: int, token: str, batches: list[list[str]]) -> list[float]:
    return [route_search(port, token, query)[0] for batch in batches for query in batch]


def alternate(path: Path, baseline: Path, rounds: int) -> list[str]:
    """This tree's worker and `baseline`'s on copies of `path`, their rounds alternated."""
    trees = {"this tree": Path(__file__).resolve().parent.parent / "src",
             "baseline": baseline.resolve() / "src"}  # fmt: skip
    lines = []
    for mode, label, queries, count in (
        ("fulltext", "full text", QUERIES, 2 * rounds + 1),
        ("fulltext", "full text, a pasted 60-word bug report", [BUG_REPORT], 8 * rounds + 1),
        ("hybrid", "hybrid, distinct queries", QUERIES, 2 * rounds + 1),
    ):
        batches = distinct(queries, count)
        with contextlib.ExitStack() as stack:
            workers = {name: stack.enter_context(worker_searching(path, mode, src))
                       for name, src in trees.items()}  # fmt: skip
            for port, token, _ in workers.values():
                timed_route(port, token, batches[:1])  # warm-up
            times: dict[str, list[float]] = {name: [] for name in workers}
            cpu = dict.fromkeys(workers, 0.0)
            for turn, batch in enumerate(batches[1:]):
                for name in list(workers) if turn % 2 else list(workers)[::-1]:
                    port, token, pid = workers[name]
                    before = cpu_ms(pid)
                    times[name] += timed_route(port, token, [batch])
                    cpu[name] += cpu_ms(pid) - before
        for name, values in times.items():
            figures = row(f"/api/search {label}, {name}", values).removesuffix(" |")
            lines.append(f"{figures} · worker CPU per search {cpu[name] / len(values):.2f} ms |")
        p50 = statistics.median(times["this tree"]) / statistics.median(times["baseline"])
        per = {name: cpu[name] / len(times[name]) for name in workers}
        lines.append(f"| {label}: this tree / baseline | p50 {p50:.2f}, worker CPU per search"
                     f" {per['this tree'] / per['baseline']:.2f} (load average"
                     f" {os.getloadavg()[0]:.1f}) |")  # fmt: skip
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--keep", type=Path, help="keep databases here, reuse them")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--route-only", action="store_true", help="only the /api/search rows")
    parser.add_argument(
        "--baseline", type=Path, help="another tree's src/ to A/B against (with --route-only)"
    )
    args = parser.parse_args()
    if args.measure:
        print("\n".join(measure(args.measure, args.rounds)))
        return
    synthetic.MODULES[:] = WIDE_MODULES
    synthetic.PROBLEMS[:] = WIDE_PROBLEMS

    start = time.perf_counter()
    embedder = load_embedder("minilm-l6-int8")
    load_s = time.perf_counter() - start
    sample = list(synthetic.observations(args.sample, 1, seed=123))
    texts = [f"{o.title}\n{o.subtitle}\n{o.narrative}\n" + "\n".join(o.facts) for o in sample]
    start = time.perf_counter()
    templates = embedder.embed(texts)
    embed_s = time.perf_counter() - start

    print(f"model load {load_s:.2f} s")
    print(
        f"embedding throughput: {len(texts) / embed_s:.1f} texts/s"
        f" ({len(texts)} observation texts, {embed_s:.1f} s)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for count in args.sizes:
            path = folder / f"search-{count}.db"
            print(f"\n### {count:,} observations\n\n| figure | value |\n|---|---|")
            print(f"| embedding throughput | {len(texts) / embed_s:.1f} texts/s |")
            if not path.exists():
                insert_s = build(count, embedder, templates, path)
                print(f"| observations | {count:,} (inserted in {insert_s:.1f} s) |", flush=True)
            if not args.route_only:
                command = [sys.executable, __file__, "--measure", str(path), "--rounds"]
                command.append(str(args.rounds))
                subprocess.run(command, check=True)
            rows = (
                alternate(path, args.baseline, args.rounds)
                if args.baseline is not None
                else route_rows(path, count, args.rounds)
            )
            print("\n".join(rows), flush=True)


if __name__ == "__main__":
    main()
