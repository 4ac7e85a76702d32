"""A real worker process started through the CLI, for tests that need one outside pytest."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_mem import log
from claude_mem.worker import lifecycle
from tests.net import free_port, worker_pids

CLI = Path(sys.executable).with_name("claude-mem")


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`claude-mem ARGS` as a user runs it, with `env` over this process's environment."""
    return subprocess.run(
        [str(CLI), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )


class Env:
    """One test's worker environment: data dir, port and the env every subprocess gets."""

    def __init__(self, data_dir: Path, port: int) -> None:
        self.data_dir, self.port = data_dir, port
        self.vars = dict(os.environ)

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(CLI), *args],
            env=self.vars,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def start(self) -> int:
        done = self.cli("worker", "start")
        assert done.returncode == 0, done.stderr
        match = re.search(r"pid (\d+), port (\d+)", done.stdout)
        assert match, done.stdout
        assert int(match.group(2)) == self.port
        return int(match.group(1))

    def health(self) -> dict[str, object] | None:
        return lifecycle.probe(self.port, timeout=2.0)

    def log_text(self) -> str:
        return "".join(path.read_text() for path in log.log_files())


def worker_env(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    """A fresh port; afterwards the worker is stopped and any survivor is a failure."""
    port = free_port()
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(port))
    env = Env(data_dir, port)
    yield env
    env.cli("worker", "stop", timeout=30)
    leaked = worker_pids(data_dir)
    for pid in leaked:
        os.kill(pid, signal.SIGKILL)
    assert not leaked, f"worker processes leaked: {leaked}"
