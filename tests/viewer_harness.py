"""A real worker process with a seeded memory, and the system Chromium, for the viewer's
browser tests and bench/viewer_bench.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx2
from bench.synthetic import observations

from claude_mem.store import Database
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
CLI = Path(sys.executable).with_name("claude-mem")
MISSING_CHROMIUM = (
    f"{CHROMIUM} is missing: the viewer's browser tests drive Debian's Chromium. Install it "
    "with `sudo apt-get install chromium` (./scripts/test.sh says so too; CI installs it)."
)
LINK = re.compile(r"http://127\.0\.0\.1:\d+/auth\?code=[\w-]+")


def launch(playwright: Any) -> Any:
    """Headless Chromium from the system package; never a downloaded browser."""
    if not CHROMIUM.exists():
        raise FileNotFoundError(MISSING_CHROMIUM)
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def seed_bulk(data_dir: Path, count: int, project: str = "bulk") -> None:
    """`count` synthetic observations (bench/synthetic.py, dated 2023) in one session."""
    db = Database(data_dir / "claude-mem.db")
    try:
        with db.write() as conn:
            sid = ensure_session(
                conn, platform="claude-code", host_session_id="bulk-1", project=project
            )
            for draft in observations(count, sid):
                insert_observation(conn, replace(draft, project=project))
    finally:
        db.close()


@dataclass
class Worker:
    """The worker `claude-mem viewer` started for a data dir; `link()` signs a browser in."""

    env: dict[str, str]
    port: int
    token: str

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self) -> httpx2.Client:
        return httpx2.Client(
            base_url=self.base, headers={"x-claude-mem-token": self.token}, timeout=10
        )

    def link(self) -> str:
        done = subprocess.run(
            [str(CLI), "viewer"], env=self.env, capture_output=True, text=True, timeout=60,
            check=False,
        )  # fmt: skip
        found = LINK.search(done.stdout)
        assert done.returncode == 0, (done.stdout, done.stderr)
        assert found, done.stdout
        return found.group(0)

    def stop(self) -> None:
        subprocess.run(
            [str(CLI), "worker", "stop"], env=self.env, capture_output=True, timeout=30,
            check=False,
        )  # fmt: skip


def worker_env(data_dir: Path, port: int, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_MEM_")}
    env.update(
        CLAUDE_MEM_DATA_DIR=str(data_dir),
        CLAUDE_MEM_WORKER_PORT=str(port),
        CLAUDE_MEM_EMBEDDING_MODEL="none",
        HOME=str(home),
    )
    return env


def start_worker(env: dict[str, str]) -> tuple[Worker, str]:
    """Start the worker through `claude-mem viewer` (as a person would) and wait until its
    store is open; the link it printed comes back unused."""
    worker = Worker(env, int(env["CLAUDE_MEM_WORKER_PORT"]), "")
    link = worker.link()
    worker.token = (Path(env["CLAUDE_MEM_DATA_DIR"]) / "worker.token").read_text().strip()
    with worker.client() as client:
        deadline = time.monotonic() + 30
        while client.get("/api/readiness").status_code != 200:
            assert time.monotonic() < deadline, "the worker's store never opened"
            time.sleep(0.05)
    return worker, link


def first_cards_ms(page: Any) -> float:
    """When the feed's first cards were on screen, in ms since navigation started."""
    page.wait_for_function("() => performance.getEntriesByName('first-cards').length > 0")
    return float(page.evaluate("performance.getEntriesByName('first-cards')[0].startTime"))
