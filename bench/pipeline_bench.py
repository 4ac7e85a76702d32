"""Compression throughput and enqueue → stored latency with the default offline compressor.

    .venv/bin/python bench/pipeline_bench.py

Floors (pipeline issue): ≥ 500 events/s through `local`, p50 ≤ 50 ms from enqueue to stored.
"""

from __future__ import annotations

import asyncio
import contextlib
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

import httpx2
import msgspec

from claude_mem.pipeline.consumer import Pipeline
from claude_mem.pipeline.providers.base import SessionContext, ToolEvent
from claude_mem.pipeline.providers.local import LocalProvider
from claude_mem.settings import load
from claude_mem.store import Database
from claude_mem.worker.ingest import Ingest
from claude_mem.worker.ingest import ToolEvent as HookEvent
from claude_mem.worker.stream import Broadcaster

sys.path.insert(0, str(Path(__file__).parent))
from worker_ingest_bench import event


def edit(n: int) -> dict[str, object]:
    return {
        "host_session_id": f"lat-{n % 4}",
        "cwd": "/home/dev/project",
        "tool_name": "Edit",
        "tool_use_id": f"edit_{n:06d}",
        "tool_input": {"file_path": f"/home/dev/project/src/mod_{n}.py",
                       "old_string": "def load(path):", "new_string": "def load(path, *, strict):"},
        "tool_response": {"filePath": f"/home/dev/project/src/mod_{n}.py"},
    }  # fmt: skip


def compressor_rate(count: int = 4000) -> float:
    provider = LocalProvider()
    ctx = SessionContext(session_id=1, project="p", platform="claude-code", cwd="/home/dev/project")
    events = []
    for n in range(count):
        raw = json.loads(event(n)) if n % 2 else edit(n)
        events.append(ToolEvent(n, str(raw["tool_name"]), raw["tool_input"], raw["tool_response"],
                                cwd="/home/dev/project"))  # fmt: skip
    start = time.perf_counter()
    for offset in range(0, count, 8):
        asyncio.run(provider.compress(events[offset : offset + 8], ctx))
    return count / (time.perf_counter() - start)


def drain_rate(count: int = 5000) -> float:
    """The worker's consumer alone: a queue of `count` events, timed until it is empty."""

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CLAUDE_MEM_DATA_DIR"] = tmp
        settings = load()
        db = Database()
        ingest = Ingest(db, lambda: settings, Broadcaster())
        for n in range(count):
            ingest.observation(msgspec.json.decode(event(n), type=HookEvent))

        async def run() -> float:
            start = time.perf_counter()
            pipeline = Pipeline(db, lambda: settings, Broadcaster())
            assert await pipeline.drained(timeout=600)
            elapsed = time.perf_counter() - start
            await pipeline.stop()
            return elapsed

        elapsed = asyncio.run(run())
        db.close()
        del os.environ["CLAUDE_MEM_DATA_DIR"]
    return count / elapsed


def main() -> None:
    rate = compressor_rate()
    drain = drain_rate()
    with tempfile.TemporaryDirectory() as tmp:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        env = {**os.environ, "CLAUDE_MEM_DATA_DIR": tmp, "CLAUDE_MEM_WORKER_PORT": str(port)}
        proc = subprocess.Popen([sys.executable, "-m", "claude_mem.worker", "run"], env=env)
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    if httpx2.get(f"{base}/api/readiness").status_code == 200:
                        break
                except httpx2.TransportError:
                    pass
                time.sleep(0.02)
            token = (Path(tmp) / "worker.token").read_text().strip()
            client = httpx2.Client(base_url=base, headers={"x-claude-mem-token": token})
            seen: dict[str, float] = {}
            ready = threading.Event()

            def listen() -> None:
                with (
                    contextlib.suppress(httpx2.TransportError),
                    client.stream("GET", "/api/stream", timeout=None) as response,
                ):
                    for line in response.iter_lines():
                        if not line.startswith("data: "):
                            continue
                        data = json.loads(line[6:])
                        if data["type"] == "connected":
                            ready.set()
                        if data["type"] == "new_observation":
                            seen[data["observation"]["title"]] = time.perf_counter()

            threading.Thread(target=listen, daemon=True).start()
            ready.wait(10)
            latencies = []
            for n in range(200):
                body = edit(n)
                sent = time.perf_counter()
                client.post("/api/sessions/observations", json=body).raise_for_status()
                while not any(f"mod_{n}.py" in title for title in list(seen)):
                    time.sleep(0.0005)
                done = next(t for title, t in seen.items() if f"mod_{n}.py" in title)
                latencies.append((done - sent) * 1000)
                time.sleep(0.01)

            bodies = [event(n) for n in range(10_000, 15_000)]
            start = time.perf_counter()
            for body in bodies:
                client.post("/api/sessions/observations", content=body,
                            headers={"content-type": "application/json"})  # fmt: skip
            while True:
                queue = client.get("/api/stats").json()["queue"]
                if queue["pending"] == 0 and queue["processing"] == 0:
                    break
                time.sleep(0.02)
            end = time.perf_counter()
            drained = len(bodies) / (end - start)
        finally:
            proc.terminate()
            proc.wait(20)

    ordered = sorted(latencies)
    print("| figure | value |\n|---|---|")
    print(f"| `local` compressor alone (batches of 8) | {rate:,.0f} events/s |")
    print(
        f"| worker consumer draining a 5,000-event queue (store included) | {drain:,.0f} events/s |"
    )
    print(f"| enqueue → stored → SSE (200 events) | p50 {statistics.median(ordered):.1f} ms, "
          f"p95 {ordered[int(0.95 * len(ordered))]:.1f} ms |")  # fmt: skip
    print(f"| 5,000 events posted by one client, then drained | {drained:,.0f} events/s |")


if __name__ == "__main__":
    main()
