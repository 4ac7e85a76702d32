"""The real Claude Code CLI for tests: a pinned npm install, cached, plus an offline env.

    from tests.claude_code import claude_binary, claude_env

    with anthropic_mock() as api:
        env = claude_env(api.url, home=tmp_path / "home")
        subprocess.run([str(claude_binary()), "-p", "--output-format", "json", ...],
                       input=prompt, env=env, cwd=project_dir, text=True, timeout=120)

`claude_binary()` installs `@anthropic-ai/claude-code@2.1.332` on first use into
`${XDG_CACHE_HOME:-~/.cache}/claude-mem-py-tests/claude-code-2.1.332` (`npm install --prefix`,
seconds to minutes on a fresh machine) and reuses it afterwards. A file lock makes concurrent test
processes install it once; a `.installed` marker written last means a half-finished install is
redone, never trusted. Missing npm is a test failure, never a skip: CI must run these tests.

Running the CLI offline against a loopback mock (what `claude_env` sets up):
- `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT` (no `/v1`; the CLI appends `/v1/messages?beta=true`)
  and a dummy `ANTHROPIC_API_KEY`: in `-p` mode the CLI uses the key without asking.
- `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` (no telemetry, error reports, update checks) and
  `DISABLE_AUTOUPDATER=1`; together with the base URL nothing leaves the machine.
- A temp `HOME` (the CLI writes `~/.claude.json` and `~/.claude/` there); every inherited
  `ANTHROPIC_*`, `CLAUDE_CODE_*`, `CLAUDE_CONFIG_DIR` and proxy variable is dropped so the
  developer's own login and settings never leak in.
- Never `--dangerously-skip-permissions`: the CLI refuses it as root (CI runs as root). Use
  `--permission-mode` / `--allowedTools` / `--settings FILE` instead.
- Give the prompt on stdin or as the argument after `-p`; either way give stdin an end
  (`input=...` or `stdin=DEVNULL`), never an open terminal or pipe.
- `CLAUDE_CODE_MAX_RETRIES=0`: by default the CLI retries 401/429/5xx with backoff for minutes;
  with 0 an error reply ends the run at once (exit 1, JSON `is_error: true`,
  `api_error_status`). A 400 is still sent three times.

What the CLI sends (2.1.332): only `POST /v1/messages?beta=true`, always `"stream": true` (the
mock streams SSE), `--model haiku` resolved to a full model id, a large default system prompt
and tool list unless `--system-prompt` / `--tools` say otherwise. An empty model reply makes
it ask again ("no visible output"), so script a non-empty answer per turn. Each run writes
`~/.claude.json` and `~/.claude/` under HOME (and a transcript under `~/.claude/projects/`
unless `--no-session-persistence`). User hooks in `$HOME/.claude/settings.json` (or
`--settings FILE`) fire; `--setting-sources ""` turns them off. The package asks for node 22
but ships a native binary, so npm's engine warning on older node is harmless.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

__all__ = [
    "CLAUDE_CODE_PACKAGE",
    "CLAUDE_CODE_VERSION",
    "INSTALL_TIMEOUT_S",
    "cache_dir",
    "claude_binary",
    "claude_env",
]

CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_CODE_VERSION = "2.1.332"
INSTALL_TIMEOUT_S = 900.0  # a fresh machine downloads the package (and its native binary)
_MARKER = ".installed"

# Inherited variables that would point the CLI at a real account, proxy or config.
_DROP_PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_", "CLAUDECODE", "CLAUDE_CONFIG_DIR", "AWS_BEARER_")
_DROP_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def cache_dir() -> Path:
    """Where the pinned CLI is installed: `${XDG_CACHE_HOME:-~/.cache}/claude-mem-py-tests/…`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "claude-mem-py-tests" / f"claude-code-{CLAUDE_CODE_VERSION}"


def _bin_path(prefix: Path) -> Path:
    return prefix / "node_modules" / ".bin" / "claude"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _installed(prefix: Path) -> bool:
    return (prefix / _MARKER).is_file() and os.access(_bin_path(prefix), os.X_OK)


def _install(prefix: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(
            f"npm is needed to install {CLAUDE_CODE_PACKAGE}@{CLAUDE_CODE_VERSION} for the "
            "Claude Code tests; install Node.js and npm (apt-get install nodejs npm)",
            pytrace=False,
        )
    shutil.rmtree(prefix, ignore_errors=True)  # a leftover of an interrupted install
    prefix.mkdir(parents=True)
    env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_loglevel": "error"}
    command = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
               "--no-save", f"{CLAUDE_CODE_PACKAGE}@{CLAUDE_CODE_VERSION}"]  # fmt: skip
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"npm install of {CLAUDE_CODE_PACKAGE} took over {INSTALL_TIMEOUT_S:.0f} s",
                    pytrace=False)  # fmt: skip
    if done.returncode != 0 or not os.access(_bin_path(prefix), os.X_OK):
        tail = (done.stderr or done.stdout)[-2000:]
        pytest.fail(f"npm install of {CLAUDE_CODE_PACKAGE}@{CLAUDE_CODE_VERSION} failed "
                    f"(exit {done.returncode}):\n{tail}", pytrace=False)  # fmt: skip
    seconds = time.monotonic() - started
    (prefix / _MARKER).write_text(f"installed in {seconds:.1f} s\n")


def claude_binary() -> Path:
    """The pinned `claude` executable, installed on first use (slow once, then instant)."""
    prefix = cache_dir()
    if not _installed(prefix):
        with _locked(prefix.with_name(prefix.name + ".lock")):
            if not _installed(prefix):  # another process may have finished meanwhile
                _install(prefix)
    return _bin_path(prefix)


def claude_env(
    base_url: str,
    home: Path,
    extra: Mapping[str, str] | None = None,
    *,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """An environment that runs the CLI offline against the mock at `base_url`.

    Starts from `base` (default: this process's environment, so PATH and the test's
    CLAUDE_MEM_DATA_DIR reach hooks), drops any real Anthropic/Claude Code account, config or
    proxy setting, and points HOME at `home` (created). `extra` is applied last.
    """
    home.mkdir(parents=True, exist_ok=True)
    env = {
        key: value
        for key, value in (os.environ if base is None else base).items()
        if not key.startswith(_DROP_PREFIXES) and key not in _DROP_NAMES
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="sk-ant-test-dummy-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        CLAUDE_CODE_MAX_RETRIES="0",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        NO_PROXY="127.0.0.1,localhost,::1",
        no_proxy="127.0.0.1,localhost,::1",
    )
    env.update(extra or {})
    return env
