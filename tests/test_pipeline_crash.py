"""Kill -9 the worker at random moments while 8 sessions stream events: after restarts,
every accepted event is processed exactly once."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from claude_mem import paths
from claude_mem.pipeline.consumer import _observation
from claude_mem.pipeline.providers.base import SessionContext, ToolEvent
from claude_mem.pipeline.providers.local import LocalProvider
from claude_mem.store.observations import content_hash
from claude_mem.worker import lifecycle
from claude_mem.worker.client import WorkerUnavailable, request
from tests.net import free_port

CLI = Path(sys.executable).with_name("claude-mem")
SESSIONS = 8
EVENTS_PER_SESSION = 100
KILLS = 3


def event(session: int, n: int) -> dict[str, object]:
    return {
        "host_session_id": f"crash-{session}",
        "cwd": "/home/dev/proj",
        "tool_name": "Edit",
        "tool_use_id": f"toolu_{session}_{n}",
        "tool_input": {
            "file_path": f"/home/dev/proj/src/s{session}/m{n}.py",
            "old_string": "return a",
            "new_string": f"return a + {n}",
        },
        "tool_response": {"filePath": f"/home/dev/proj/src/s{session}/m{n}.py"},
    }


def start(env: dict[str, str]) -> None:
    subprocess.run([str(CLI), "worker", "start"], env=env, capture_output=True, timeout=60,
                   check=True)  # fmt: skip


@pytest.mark.slow
def test_sigkill_during_streaming_loses_and_duplicates_nothing(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(port))
    env = dict(os.environ)
    start(env)
    token = (paths.data_dir() / "worker.token").read_text().strip()
    accepted: set[str] = set()
    lock = threading.Lock()
    done = threading.Event()

    def stream(session: int) -> None:
        for n in range(EVENTS_PER_SESSION):
            body = json.dumps(event(session, n)).encode()
            while True:  # a hook would give up; the test retries to know what was accepted
                try:
                    response = request("POST", "/api/sessions/observations", port=port,
                                       body=body, token=token, timeout=5)  # fmt: skip
                except WorkerUnavailable:
                    time.sleep(0.05)
                    continue
                if response.status == 200:
                    with lock:
                        accepted.add(f"toolu_{session}_{n}")
                    break
                time.sleep(0.05)  # 503 while the restarted worker opens the store

    kills_mid_stream = []

    def killer() -> None:
        rng = random.Random(7)
        for _ in range(KILLS):
            time.sleep(rng.uniform(0.05, 0.3))
            info = lifecycle.read_pid_info()
            if info is not None:
                os.kill(info["pid"], signal.SIGKILL)
                with lock:
                    kills_mid_stream.append(len(accepted) < SESSIONS * EVENTS_PER_SESSION)
            start(env)
        done.set()

    threads = [threading.Thread(target=stream, args=(s,)) for s in range(SESSIONS)]
    chaos = threading.Thread(target=killer)
    for thread in [*threads, chaos]:
        thread.start()
    for thread in [*threads, chaos]:
        thread.join(240)
    assert done.is_set()
    assert sum(kills_mid_stream) >= 2, "the kills must land while events are streaming"
    start(env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        stats = request("GET", "/api/stats", port=port, token=token).json()
        assert isinstance(stats, dict)
        if stats["queue"]["pending"] == 0 and stats["queue"]["processing"] == 0:
            break
        time.sleep(0.1)
    subprocess.run([str(CLI), "worker", "stop"], env=env, capture_output=True, timeout=60,
                   check=True)  # fmt: skip

    assert len(accepted) == SESSIONS * EVENTS_PER_SESSION
    conn = sqlite3.connect(paths.db_path())
    stored = {row[0] for row in conn.execute("SELECT tool_use_id FROM tool_uses")}
    assert stored == accepted
    assert conn.execute("SELECT count(*) FROM queue").fetchone()[0] == 0
    unlinked = "SELECT count(*) FROM tool_uses WHERE observation_id IS NULL"
    assert conn.execute(unlinked).fetchone()[0] == 0
    hashes = sorted(row[0] for row in conn.execute("SELECT content_hash FROM observations"))
    sessions = dict(conn.execute("SELECT host_session_id, id FROM sessions").fetchall())
    conn.close()

    expected = []
    provider = LocalProvider()
    for s in range(SESSIONS):
        sid = sessions[f"crash-{s}"]
        ctx = SessionContext(session_id=sid, project="proj", platform="claude-code",
                             cwd="/home/dev/proj")  # fmt: skip
        for n in range(EVENTS_PER_SESSION):
            raw = event(s, n)
            one = ToolEvent(tool_use_row_id=n, tool_name="Edit", tool_input=raw["tool_input"],
                            tool_response=raw["tool_response"], cwd="/home/dev/proj")  # fmt: skip
            (draft,) = asyncio.run(provider.compress([one], ctx)).observations
            expected.append(content_hash(_observation(ctx, draft, [one], 0, "local")))
    assert hashes == sorted(expected)
