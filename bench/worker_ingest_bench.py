"""Enqueue latency and throughput against a real worker process, and its memory.

    .venv/bin/python bench/worker_ingest_bench.py [--events 10000]

Starts `python -m claude_mem.worker run` on a free port in a temporary data dir, posts
realistic PostToolUse events through the same stdlib client the hooks use (one connection
per event, as a hook does), sequentially and from 8 concurrent clients, then reads RSS.
Floors (worker issue): enqueue p50 ≤ 2 ms, ≥ 1000 events/s, RSS idle ≤ 80 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from claude_mem.worker.client import request


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def event(n: int) -> bytes:
    return json.dumps(
        {
            "host_session_id": f"bench-{n % 8}",
            "cwd": "/home/dev/project",
            "tool_name": "Bash",
            "tool_use_id": f"toolu_{n:08d}",
            "tool_input": {"command": f"pytest tests/test_mod_{n % 50}.py -q"},
            "tool_response": {
                "stdout": "collected 12 items\n" + "." * 12 + f"\n12 passed in 0.{n % 9}s\n" * 20,
                "stderr": "",
                "interrupted": False,
            },
        }
    ).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        env = {**os.environ, "CLAUDE_MEM_DATA_DIR": tmp, "CLAUDE_MEM_WORKER_PORT": str(port)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "claude_mem.worker", "run"], env=env, stdout=subprocess.DEVNULL
        )
        try:
            token = ""
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                try:
                    if request("GET", "/api/readiness", port=port).status == 200:
                        token = (Path(tmp) / "worker.token").read_text().strip()
                        break
                except OSError:
                    pass
                time.sleep(0.02)
            time.sleep(1)
            idle = rss_mib(proc.pid)

            bodies = [event(n) for n in range(args.events)]  # a hook builds its own body

            def post(n: int) -> float:
                body = bodies[n]
                start = time.perf_counter()
                response = request(
                    "POST", "/api/sessions/observations", port=port, body=body, token=token
                )
                elapsed = time.perf_counter() - start
                assert response.status == 200, response.body
                return elapsed

            half = args.events // 2
            start = time.perf_counter()
            sequential = [post(n) for n in range(half)]
            seq_rate = half / (time.perf_counter() - start)

            per_thread = (args.events - half) // 8
            lat: list[float] = []
            lock = threading.Lock()

            def worker(t: int) -> None:
                mine = [post(half + t * per_thread + i) for i in range(per_thread)]
                with lock:
                    lat.extend(mine)

            start = time.perf_counter()
            threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            conc_rate = per_thread * 8 / (time.perf_counter() - start)
            after = rss_mib(proc.pid)
            stats = request("GET", "/api/stats", port=port, token=token).json()
        finally:
            proc.terminate()
            proc.wait(20)

    def ms(values: list[float], q: float) -> str:
        ordered = sorted(values)
        return f"{ordered[int(q * (len(ordered) - 1))] * 1000:.2f}"

    print("| figure | value |\n|---|---|")
    print(
        f"| enqueue latency, sequential ({half:,}) | p50 {ms(sequential, 0.5)} ms, "
        f"p95 {ms(sequential, 0.95)} ms, p99 {ms(sequential, 0.99)} ms |"
    )
    print(f"| throughput, sequential | {seq_rate:,.0f} events/s |")
    print(
        f"| throughput, 8 concurrent clients | {conc_rate:,.0f} events/s "
        f"(p50 {statistics.median(lat) * 1000:.2f} ms) |"
    )
    print(f"| worker RSS idle | {idle:.1f} MiB |")
    print(f"| worker RSS after {args.events:,} events | {after:.1f} MiB |")
    print(f"| events stored (sanity) | {stats['counts']['tool_uses']:,} |")


if __name__ == "__main__":
    main()
