"""A real worker process with a seeded memory, and the system Chromium, for the viewer's
browser tests and bench/viewer_bench.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from bench.synthetic import observations
from msgspec.structs import replace

from claude_mem.store import Database
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session
from tests.agent_hooks import AGENT_HOOKS, read_capture

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
ENTRY = Path(__file__).resolve().parents[1] / "src" / "claude_mem" / "hooks" / "entry.py"
CAPTURE = AGENT_HOOKS / "claude-code-2.1.332.jsonl"
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


def run_hook(env: dict[str, str], cwd: Path, event: str, payload: dict[str, Any]) -> None:
    """One Claude Code hook as the host runs it (`python -I -S entry.py claude-code EVENT`)."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(ENTRY), "claude-code", event],
        input=json.dumps(payload).encode(), env=env, cwd=cwd,
        capture_output=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def captured(project_dir: Path, session: str) -> dict[str, dict[str, Any]]:
    """The recorded Claude Code payloads by event, moved into `project_dir` and `session`."""
    payloads: dict[str, dict[str, Any]] = {}
    for event, sent in read_capture(CAPTURE):
        payload = {**sent, "session_id": session, "cwd": str(project_dir)}
        payloads.setdefault(event, payload)
    return payloads


def tool_use_round(env: dict[str, str], project_dir: Path, session: str, n: int) -> None:
    """A prompt, a Bash PostToolUse, then the Stop that ends the turn (memory is made of
    whole turns), through the hook command, as Claude Code sends them."""
    payloads = captured(project_dir, session)
    prompt = {**payloads["UserPromptSubmit"], "prompt": f"List the files, round {n}"}
    run_hook(env, project_dir, "UserPromptSubmit", prompt)
    tool = payloads["PostToolUse"]
    tool = {**tool, "tool_use_id": f"toolu_viewer_{session}_{n}",
            "tool_input": {**tool["tool_input"], "command": f"ls -la src{n}"}}  # fmt: skip
    run_hook(env, project_dir, "PostToolUse", tool)
    stop = {**payloads["Stop"], "last_assistant_message": f"Listed src{n}: it holds the code."}
    run_hook(env, project_dir, "Stop", stop)
