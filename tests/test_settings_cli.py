"""Settings as a user meets them: the CLI's messages and a real worker's log."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.polling import wait_until
from tests.worker_process import Env, worker_env

BIN = Path(sys.executable).with_name("claude-mem")
INSTALLED = "anthropic, claude-agent-sdk, gemini, local, openai-compatible"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )


@pytest.fixture
def real(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    yield from worker_env(data_dir, monkeypatch)


@pytest.mark.parametrize("name", ["openai", "bogus-provider"])
def test_set_unknown_provider_says_which_exist(data_dir: Path, name: str) -> None:
    out = run("settings", "set", "CLAUDE_MEM_PROVIDER", name)
    assert out.returncode == 2
    assert out.stderr == (
        f"error: CLAUDE_MEM_PROVIDER: unknown provider '{name}'; installed: {INSTALLED}\n"
    )
    fallback = run("settings", "set", "CLAUDE_MEM_FALLBACK_PROVIDERS", f"local,{name}")
    assert fallback.returncode == 2
    assert f"unknown provider '{name}'; installed: {INSTALLED}" in fallback.stderr
    assert run("settings", "set", "CLAUDE_MEM_PROVIDER", "anthropic").returncode == 0


def test_worker_logs_unknown_provider_from_env(real: Env) -> None:
    real.vars["CLAUDE_MEM_PROVIDER"] = "openai"
    real.start()
    expected = "CLAUDE_MEM_PROVIDER: unknown provider 'openai'; installed:"
    assert wait_until(lambda: expected in real.log_text())
