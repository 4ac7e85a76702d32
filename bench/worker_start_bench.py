"""Worker cold start (spawn → /api/health, spawn → /api/readiness 200), idle RSS, and RSS with
the embedding model loaded.

.venv/bin/python bench/worker_start_bench.py [--runs 10] [--vectors 10000]

Each run spawns `python -m claude_mem.worker run` on a free loopback port in a fresh temporary
data dir (so "ready" includes creating and migrating the database), then stops it with SIGTERM.
Bytecode is cached under a temporary prefix, as an installed package would have it, even when
PYTHONDONTWRITEBYTECODE is set; --no-bytecode shows the uncached figure.

The loaded figure: a data dir with `--vectors` synthetic observations, all but BACKLOG of them
with a stored vector (unit-length noise under the real model's id, so the worker keeps them),
and a worker with embeddings on. It loads the model, indexes the vectors, embeds the backlog
with the real model (the background path), then answers hybrid searches through
/api/search (the query path); RSS is read a second after the last one, with the peak
(VmHWM) and the RSS of any child process beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

from claude_mem.worker.client import WorkerUnavailable, request

COLD_START_FLOOR_MS = 1000
RSS_FLOOR_MIB = 60
LOADED_RSS_FLOOR_MIB = 160
BACKLOG = 512  # rows the worker embeds itself: the background path runs
SEARCHES = ["cache stampede", "fixed a bug in the scheduler", "timezone offset", "webhook retry"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def status(path: str, port: int) -> int | None:
    try:
        return request("GET", path, port=port, timeout=1.0).status
    except WorkerUnavailable:
        return None


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field}")


def children_rss_mib(pid: int) -> float:
    """Summed RSS of the process's children (none unless embedding moves out of process)."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                total += rss_mib(int(child))
    return total


@contextlib.contextmanager
def worker_on(data: str, env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A worker process for the data dir `data` on a free port; stopped afterwards."""
    port = free_port()
    env = {**env, "CLAUDE_MEM_DATA_DIR": data, "CLAUDE_MEM_WORKER_PORT": str(port)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mem.worker", "run"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield proc, port
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


@contextlib.contextmanager
def fresh_worker(env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A worker process on a free port with a new data dir; stopped and removed afterwards."""
    data = tempfile.mkdtemp(prefix="cm-bench-")
    try:
        with worker_on(data, env) as started:
            yield started
    finally:
        shutil.rmtree(data, ignore_errors=True)


def wait_for(path: str, port: int, proc: subprocess.Popen[bytes], start: float) -> float:
    """perf_counter() when `path` first answers 200 (polling every 2 ms, 30 s at most)."""
    while status(path, port) != 200:
        if proc.poll() is not None or time.perf_counter() - start > 30:
            raise RuntimeError(f"worker never answered {path}")
        time.sleep(0.002)
    return time.perf_counter()


def probe_latency(env: dict[str, str], calls: int = 200) -> list[float]:
    """Round trips of the hook client's GET /api/health against an idle, ready worker (ms)."""
    with fresh_worker(env) as (proc, port):
        wait_for("/api/readiness", port, proc, time.perf_counter())
        timings = []
        for _ in range(calls):
            began = time.perf_counter()
            request("GET", "/api/health", port=port).json()
            timings.append((time.perf_counter() - began) * 1000)
        return timings


def one_run(env: dict[str, str], measure_rss: bool) -> tuple[float, float, float | None]:
    """(ms to health, ms to readiness, idle RSS MiB or None) for one fresh worker."""
    start = time.perf_counter()
    with fresh_worker(env) as (proc, port):
        healthy = wait_for("/api/health", port, proc, start)
        ready = wait_for("/api/readiness", port, proc, start)
        rss = None
        if measure_rss:
            time.sleep(1.0)
            rss = rss_mib(proc.pid)
        return (healthy - start) * 1000, (ready - start) * 1000, rss


def store_vectors(data: str, count: int) -> None:
    """`count` observations, all but BACKLOG with a vector under the real model's id."""
    sys.path.insert(0, str(Path(__file__).parent))
    import numpy as np  # noqa: PLC0415 - only for this figure

    import synthetic  # noqa: PLC0415
    from claude_mem.search import embed  # noqa: PLC0415
    from claude_mem.store import Database  # noqa: PLC0415
    from claude_mem.store import vectors as store  # noqa: PLC0415
    from claude_mem.store.observations import insert_observation  # noqa: PLC0415
    from claude_mem.store.sessions import ensure_session  # noqa: PLC0415

    model = embed.model_id("minilm-l6-int8", embed.locate("minilm-l6-int8")[1])
    rng = np.random.default_rng(5)
    with Database(Path(data) / "claude-mem.db") as db, db.write() as conn:
        session = ensure_session(conn, platform="claude-code", host_session_id="s", project="p")
        for n, obs in enumerate(synthetic.observations(count, session)):
            row, _ = insert_observation(conn, obs)
            if n >= BACKLOG:
                vector = rng.standard_normal(384).astype(np.float32)
                store.upsert(conn, "observation", row, model, vector / np.linalg.norm(vector))


def loaded_rss(env: dict[str, str], count: int) -> tuple[float, float, float]:
    """(RSS, peak RSS, children's RSS) in MiB of a worker holding the model and `count`
    vectors, after embedding its backlog and answering searches."""
    data = tempfile.mkdtemp(prefix="cm-bench-")
    try:
        store_vectors(data, count)
        env = {**env, "CLAUDE_MEM_EMBEDDING_MODEL": "minilm-l6-int8"}
        with worker_on(data, env) as (proc, port):
            wait_for("/api/readiness", port, proc, time.perf_counter())
            token = Path(data, "worker.token").read_text().strip()
            while True:
                stats = request("GET", "/api/stats", port=port, token=token, timeout=10).json()
                if stats["embedding"].get("pending") == 0:
                    break
                time.sleep(0.25)
            for query in SEARCHES * 5:
                path = "/api/search?" + urllib.parse.urlencode({"query": query})
                answer = request("GET", path, port=port, token=token, timeout=10)
                if answer.json().get("mode") != "hybrid":
                    raise RuntimeError(f"search was not hybrid: {answer.json()}")
            time.sleep(1.0)
            return rss_mib(proc.pid), rss_mib(proc.pid, "VmHWM"), children_rss_mib(proc.pid)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--vectors", type=int, default=10_000, help="0: no loaded figure")
    parser.add_argument("--no-bytecode", action="store_true", help="don't cache .pyc files")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_MEM_")}
    cache = None
    if not args.no_bytecode:
        cache = tempfile.mkdtemp(prefix="cm-bench-pyc-")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    try:
        one_run(env, measure_rss=False)  # warm the page cache (and the bytecode cache)
        runs = [one_run(env, measure_rss=True) for _ in range(args.runs)]
        latency = probe_latency(env)
        loaded = loaded_rss(env, args.vectors) if args.vectors else None
    finally:
        if cache:
            shutil.rmtree(cache, ignore_errors=True)
    health = [r[0] for r in runs]
    ready = [r[1] for r in runs]
    rss = [r[2] for r in runs if r[2] is not None]
    mode = "no .pyc" if args.no_bytecode else ".pyc cached"
    n = args.runs

    def row(label: str, values: list[float], unit: str, floor: float) -> str:
        median = statistics.median(values)
        verdict = "ok" if median <= floor else "✗"
        return (
            f"| {label} ({n} runs, {mode}) | median {median:.0f} {unit}, min {min(values):.0f},"
            f" max {max(values):.0f} | ≤ {floor:.0f} {unit} | {verdict} |"
        )

    print("| measure | result | floor | |")
    print("|---|---|---|---|")
    print(row("worker cold start → /api/health 200", health, "ms", COLD_START_FLOOR_MS))
    print(row("worker cold start → /api/readiness 200", ready, "ms", COLD_START_FLOOR_MS))
    print(row("worker RSS, ready and idle 1 s", rss, "MiB", RSS_FLOOR_MIB))
    if loaded is not None:
        rss_now, peak, children = loaded
        verdict = "ok" if rss_now + children <= LOADED_RSS_FLOOR_MIB else "✗"
        print(
            f"| worker RSS, model loaded + {args.vectors:,} vectors, after embedding and"
            f" searches | {rss_now:.0f} MiB (peak {peak:.0f}); child processes {children:.0f}"
            f" MiB | ≤ {LOADED_RSS_FLOOR_MIB} MiB | {verdict} |"
        )
    print(
        f"| hook client GET /api/health round trip ({len(latency)} calls) |"
        f" median {statistics.median(latency):.2f} ms, max {max(latency):.2f} | — | |"
    )


if __name__ == "__main__":
    main()
