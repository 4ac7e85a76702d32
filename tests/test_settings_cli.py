"""Settings as a user meets them: the CLI's messages and a real worker's log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_mem import paths, settings
from tests.polling import wait_until
from tests.worker_process import Env, worker_env
from tests.worker_process import run_cli as run

INSTALLED = "anthropic, claude-agent-sdk, gemini, local, openai-compatible"


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


BROKEN = '{\n  "CLAUDE_MEM_CONTEXT_TOKEN_BUDGET": 3000,\n}\n'


def broken_after_3000() -> str:
    """The user set 3000, then a hand edit left a trailing comma; the warning each reader gives."""
    from claude_mem import paths

    assert run("settings", "set", "CLAUDE_MEM_CONTEXT_TOKEN_BUDGET", "3000").returncode == 0
    paths.settings_path().write_text(BROKEN)
    return (
        f"{paths.settings_path()} is not valid JSON (line 3: Expecting property name enclosed "
        "in double quotes); using the last valid settings"
    )


def test_cli_readers_warn_once_and_keep_the_last_valid_value(data_dir: Path) -> None:
    problem = broken_after_3000()
    got = run("settings", "get", "CLAUDE_MEM_CONTEXT_TOKEN_BUDGET")
    assert (got.returncode, got.stdout, got.stderr) == (0, "3000\n", f"warning: {problem}\n")
    status = run("status")
    assert status.returncode == 0, status.stderr
    assert status.stderr == f"warning: {problem}\n"
    listing = run("settings", "list")
    assert "CLAUDE_MEM_CONTEXT_TOKEN_BUDGET=3000  (last-good)" in listing.stdout
    assert listing.stderr == f"warning: {problem}\n"


def test_worker_and_session_start_say_so(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_mem import __version__
    from tests.test_hooks_process import answer, base_env, hook
    from tests.worker_fixtures import running_worker

    problem = broken_after_3000()
    home = tmp_path / "home"
    home.mkdir()
    (data_dir / "install-version").write_text(__version__ + "\n")
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    with running_worker() as worker:
        assert worker.state.settings.get_int("CLAUDE_MEM_CONTEXT_TOKEN_BUDGET") == 3000
        payload = {"session_id": "s1", "cwd": str(tmp_path), "source": "startup",
                   "hook_event_name": "SessionStart"}  # fmt: skip
        done = hook("claude-code", "SessionStart", payload, base_env(data_dir, worker.port, home))
    assert done.returncode == 0
    assert done.stderr == b""
    out = answer(done)
    line = f"⚠ claude-mem: {problem}. Run `claude-mem doctor`."
    shown = str(out["systemMessage"]).splitlines()
    assert shown[0].startswith(f"claude-mem: 0 memories for {tmp_path.name} - viewer: ")
    assert line in shown
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.splitlines()[0] == line
    from claude_mem import log

    logged = [text for path in log.log_files() for text in path.read_text().splitlines()]
    assert sum(problem in text for text in logged) == 1
    assert settings_value_in_hook(data_dir, home) == 3000


def settings_value_in_hook(data_dir: Path, home: Path) -> object:
    """What a hook process (stdlib only, `-I -S`) reads for the budget."""
    from tests.test_hooks_process import ENTRY

    code = (
        f"import sys; sys.path.insert(0, {str(ENTRY.parents[2])!r}); "
        "from claude_mem import settings; "
        "print(settings.load()['CLAUDE_MEM_CONTEXT_TOKEN_BUDGET'])"
    )
    env = {"CLAUDE_MEM_DATA_DIR": str(data_dir), "HOME": str(home), "PATH": os.environ["PATH"]}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], env=env, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    return int(done.stdout)


# --- settings reach a running worker without a restart ---


def context_of(env: Env, project: str) -> str:
    from claude_mem.worker.client import request
    from claude_mem.worker.token import read_token

    answer = request("GET", f"/api/context/inject?project={project}", port=env.port,
                     token=read_token(), timeout=10)  # fmt: skip
    assert answer.status == 200, answer.body
    return answer.body.decode()


def test_settings_set_reaches_the_running_worker(real: Env) -> None:
    from claude_mem.store import Database
    from tests.store_helpers import observation, session

    with Database() as db:
        sid = session(db)
        for n in range(6):
            observation(db, sid, title=f"finding number {n}", created_at=1_700_000_000_000 + n)
    pid = real.start()
    before = context_of(real, "proj")
    assert all(f"finding number {n}" in before for n in range(6))
    done = real.cli("settings", "set", "CLAUDE_MEM_CONTEXT_OBSERVATIONS", "2")
    assert done.returncode == 0, done.stderr
    assert "restart" not in done.stdout + done.stderr
    after = context_of(real, "proj")
    assert "finding number 5" in after
    assert "finding number 4" in after
    assert "finding number 3" not in after
    assert real.health()["pid"] == pid  # type: ignore[index]  # the same worker, not restarted
    assert "settings changed" in real.log_text()


def test_settings_that_need_a_restart_say_so(real: Env) -> None:
    del real.vars["CLAUDE_MEM_EMBEDDING_MODEL"]  # from the file only, this time
    assert real.cli("settings", "set", "CLAUDE_MEM_EMBEDDING_MODEL", "none").returncode == 0
    pid = real.start()
    done = real.cli("settings", "set", "CLAUDE_MEM_EMBEDDING_MODEL", "minilm-l6-int8")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "CLAUDE_MEM_EMBEDDING_MODEL = minilm-l6-int8",
        f"the running worker (pid {pid}) reads CLAUDE_MEM_EMBEDDING_MODEL only when it starts; "
        "restart the worker: claude-mem worker restart",
    ]
    real.cli("worker", "stop")
    quiet = real.cli("settings", "set", "CLAUDE_MEM_EMBEDDING_MODEL", "none")
    assert quiet.stdout == "CLAUDE_MEM_EMBEDDING_MODEL = none\n"


def test_redaction_switch_applies_to_the_open_store(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_mem import settings
    from tests.worker_fixtures import running_worker

    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    with running_worker() as worker:
        assert worker.state.db is not None
        assert worker.state.db.redact_secrets is True
        settings.save({"CLAUDE_MEM_REDACT_SECRETS": False})
        assert worker.state.settings.get_bool("CLAUDE_MEM_REDACT_SECRETS") is False
        assert worker.state.db.redact_secrets is False


# --- words: values as the README writes them, one error style, the port really used ---


def test_booleans_shown_as_the_readme_writes_them(data_dir: Path) -> None:
    assert run("settings", "get", "CLAUDE_MEM_SEMANTIC_INJECT").stdout == "true\n"
    listing = run("settings", "list").stdout.splitlines()
    assert "CLAUDE_MEM_REDACT_SECRETS=true  (default)" in listing
    assert not [line for line in listing if "=True" in line or "=False" in line]
    done = run("settings", "set", "CLAUDE_MEM_SEMANTIC_INJECT", "no")
    assert done.stdout == "CLAUDE_MEM_SEMANTIC_INJECT = false\n"
    assert run("settings", "get", "CLAUDE_MEM_SEMANTIC_INJECT").stdout == "false\n"


def test_get_and_set_refuse_an_unknown_key_alike(data_dir: Path) -> None:
    got = run("settings", "get", "CLAUDE_MEM_NOPE")
    put = run("settings", "set", "CLAUDE_MEM_NOPE", "1")
    assert got.returncode == put.returncode == 2
    assert got.stderr == put.stderr
    # One line naming the closest key, not all of them.
    assert got.stderr == (
        "error: CLAUDE_MEM_NOPE: unknown setting; did you mean CLAUDE_MEM_MODE? "
        "(`claude-mem settings list` shows every setting)\n"
    )
    typo = run("settings", "get", "worker_prot")
    assert typo.returncode == 2
    assert "worker_prot: unknown setting; did you mean CLAUDE_MEM_WORKER_PORT?" in typo.stderr
    nothing_close = run("settings", "set", "xyzzy", "1")
    assert nothing_close.returncode == 2
    assert nothing_close.stderr == (
        "error: xyzzy: unknown setting; `claude-mem settings list` shows every setting\n"
    )
    assert not paths.settings_path().exists()  # nothing was written
    env_only = run("settings", "set", "CLAUDE_MEM_DATA_DIR", "/tmp/x")
    assert env_only.stderr == (
        "error: CLAUDE_MEM_DATA_DIR: not a setting but an environment variable: decides where "
        "settings.json lives, so it cannot live inside it\n"
    )


def test_keys_are_case_insensitive(data_dir: Path) -> None:
    done = run("settings", "set", "claude_mem_context_observations", "12")
    assert (done.returncode, done.stdout) == (0, "CLAUDE_MEM_CONTEXT_OBSERVATIONS = 12\n")
    assert json.loads(paths.settings_path().read_text()) == {"CLAUDE_MEM_CONTEXT_OBSERVATIONS": 12}
    got = run("settings", "get", "Claude_Mem_Context_Observations")
    assert (got.returncode, got.stdout) == (0, "12\n")
    settings.save({"claude_mem_log_level": "warn"})  # the worker's API and the viewer save so
    assert settings.load()["CLAUDE_MEM_LOG_LEVEL"] == "WARN"


def test_list_shows_the_port_the_worker_really_uses(real: Env) -> None:
    from tests.net import free_port

    pid = real.start()
    other = free_port()
    real.vars["CLAUDE_MEM_WORKER_PORT"] = str(other)  # this shell says another port
    try:
        listing = real.cli("settings", "list").stdout.splitlines()
        got = real.cli("settings", "get", "CLAUDE_MEM_WORKER_PORT").stdout
    finally:
        real.vars["CLAUDE_MEM_WORKER_PORT"] = str(real.port)
    assert (
        f"CLAUDE_MEM_WORKER_PORT={real.port}  (running worker, pid {pid}; settings say {other} "
        "(env), used once it restarts)"
    ) in listing
    assert got == f"{real.port}\n"
    same = real.cli("settings", "list").stdout.splitlines()
    assert f"CLAUDE_MEM_WORKER_PORT={real.port}  (env)" in same
