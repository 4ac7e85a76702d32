"""Which Python runs the command hooks: real interpreters, fake ones, a forced one, doctor."""

from __future__ import annotations

import io
import json
import os
import platform
import shlex
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_mem import __version__
from claude_mem.commands import doctor
from claude_mem.install import flow, hook_python
from claude_mem.install.base import ConfigError, HookCommand, Scope
from claude_mem.worker import lifecycle
from tests.polling import wait_until
from tests.test_hooks_process import base_env
from tests.test_install_process import commands, run_hook
from tests.worker_process import Env, worker_env

VENV_PY = os.path.abspath(sys.executable)
# The venv's base interpreter: a real CPython without the venv's packages on its path.
BASE_PY = str(getattr(sys, "_base_executable", ""))
WORKER_FLAG = "--worker-python"


def script(path: Path, body: str) -> str:
    """An executable shell script at `path` posing as an interpreter."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def wrapper(path: Path) -> str:
    """A stand-in interpreter that really is the base interpreter (so it can be removed)."""
    return script(path, f'exec {shlex.quote(BASE_PY)} "$@"')


def install(home: Path, dry_run: bool = False) -> str:
    """`claude-mem install` (`--print` with `dry_run`) of command hooks into `home` (no
    worker); its output."""
    out = io.StringIO()
    opts = flow.Options(
        "install", "claude-code", dry_run=dry_run, worker=False, hook_transport="command"
    )
    assert flow.run(opts, scope=Scope(home), out=out) == 0, out.getvalue()
    return out.getvalue()


def hooks_run(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("hooks run: ")]
    return line


def written(home: Path) -> list[list[str]]:
    doc = json.loads((home / ".claude" / "settings.json").read_text())
    found = [shlex.split(line) for line in commands(doc)]
    assert found
    return found


def hook_python_checks() -> list[dict[str, str]]:
    return [check for check in doctor.checks() if check["check"] == "hook python"]


@pytest.fixture(autouse=True)
def unforced(monkeypatch: pytest.MonkeyPatch) -> None:
    """The choice itself is tested here: no interpreter forced (the suite forces one)."""
    monkeypatch.delenv(hook_python.SETTING)


def test_the_venvs_python_is_the_first_candidate_and_answers_the_probe() -> None:
    assert BASE_PY not in ("", VENV_PY)
    entry = HookCommand.current().entry
    found = hook_python.candidates(VENV_PY)
    assert found[0] == VENV_PY
    assert len({os.path.realpath(python) for python in found}) == len(found)
    probe = hook_python.probe(VENV_PY, entry)
    assert (probe.problem, probe.version) == ("", platform.python_version())
    assert hook_python.probe(BASE_PY, entry).problem == ""  # no venv packages needed


def test_candidates_that_fail_or_answer_wrongly_are_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    fails = script(bin_dir / "python3.12", 'echo "no such version" >&2; exit 3')
    old = script(bin_dir / "python3.13", """echo '{"claude_mem": "0.0.1", "package": "/x"}'""")
    package = str(Path(HookCommand.current().entry).parents[2])
    elsewhere = script(
        bin_dir / "python3.14",
        f"echo '{json.dumps({'claude_mem': __version__, 'package': str(tmp_path)})}'",
    )
    noise = script(bin_dir / "python3.11", "echo hello")
    good = wrapper(bin_dir / "python3")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    choice = hook_python.choose(HookCommand.current(), runs=2)
    probes = {probe.python: probe for probe in choice.probes}
    assert probes[fails].problem == "exits 3: no such version"
    assert "not claude-mem" in probes[old].problem
    assert f"not the one in {package}" in probes[elsewhere].problem
    assert "not the probe's JSON" in probes[noise].problem
    assert probes[good].problem == ""
    assert probes[VENV_PY].problem == ""
    assert choice.python not in (fails, old, elsewhere, noise)
    assert probes[choice.python].problem == ""


def test_a_forced_choice_is_honoured_and_a_broken_one_refused(tmp_path: Path) -> None:
    command = HookCommand.current()
    choice = hook_python.choose(command, forced=BASE_PY)
    assert choice.python == BASE_PY
    assert hook_python.SETTING in choice.why
    broken = script(tmp_path / "python", "exit 1")
    with pytest.raises(ConfigError, match=f"{hook_python.SETTING}={broken} cannot run the hooks"):
        hook_python.choose(command, forced=broken)


def test_install_writes_the_chosen_interpreter_into_every_hook_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    install(home)
    entry = HookCommand.current().entry
    (python,) = {argv[0] for argv in written(home)}
    assert hook_python.probe(python, entry).problem == ""
    for argv in written(home):
        expected = HookCommand(VENV_PY, entry, python).argv(argv[-2], argv[-1])
        assert argv == expected
        assert (WORKER_FLAG in argv) == (python != VENV_PY)

    monkeypatch.setenv(hook_python.SETTING, BASE_PY)
    out = install(home)
    assert f"hooks run: {BASE_PY} -I -S" in out
    for argv in written(home):
        assert argv[:4] == [BASE_PY, "-I", "-S", entry]
        assert argv[4:6] == [WORKER_FLAG, VENV_PY]


def test_doctor_flags_a_hook_interpreter_that_is_gone_and_install_chooses_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    stand_in = wrapper(tmp_path / "old-python" / "python3")
    monkeypatch.setenv(hook_python.SETTING, stand_in)
    install(home)
    (check,) = hook_python_checks()
    assert check["status"] == "ok", check
    assert check["detail"].startswith(f"{stand_in} (Python {platform.python_version()})")

    script(Path(stand_in), "exit 1")  # upgraded into something that no longer runs
    (check,) = hook_python_checks()
    assert check["status"] == "fail"
    assert "exits 1" in check["detail"]
    os.unlink(stand_in)  # upgraded away
    (check,) = hook_python_checks()
    assert check["status"] == "fail"
    assert check["detail"] == (
        f"{stand_in} (in {home / '.claude' / 'settings.json'}) no longer exists; "
        "`claude-mem install` chooses again"
    )

    monkeypatch.delenv(hook_python.SETTING)
    install(home)
    (check,) = hook_python_checks()
    assert check["status"] == "ok", check


def test_a_reinstall_keeps_the_interpreter_the_hooks_run_and_print_shows_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing changed, nothing rewritten: the one installed stays while it runs the hooks and
    nothing starts in half its time (a wrapper costs a shell: slower, not that much)."""
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    stand_in = wrapper(tmp_path / "old-python" / "python3")
    monkeypatch.setenv(hook_python.SETTING, stand_in)
    install(home)
    monkeypatch.delenv(hook_python.SETTING)
    before = settings.read_bytes()

    preview = install(home, dry_run=True)
    assert f"(no change to {settings})" in preview
    assert "+++" not in preview
    out = install(home)
    assert settings.read_bytes() == before
    assert f"unchanged {settings}" in out
    assert hooks_run(preview) == hooks_run(out)
    assert hooks_run(out).startswith(f"hooks run: {stand_in} -I -S ")
    assert f"(Python {platform.python_version()}, as installed: " in hooks_run(out)
    assert install(home, dry_run=True) == preview

    # One that now takes a tenth of a second more to start is replaced, in the preview too.
    script(Path(stand_in), f'sleep 0.1; exec {shlex.quote(BASE_PY)} "$@"')
    preview = install(home, dry_run=True)
    assert f"+++ {settings}" in preview
    assert stand_in not in hooks_run(preview)
    install(home)
    (python,) = {argv[0] for argv in written(home)}
    assert python != stand_in
    assert f"(no change to {settings})" in install(home, dry_run=True)  # and sticky again


@pytest.fixture
def live(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from worker_env(data_dir, monkeypatch)


def test_a_hook_run_by_another_interpreter_starts_the_venvs_worker_and_stores_the_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, live: Env
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv(hook_python.SETTING, BASE_PY)
    install(home)
    data_dir.mkdir(mode=0o700, exist_ok=True)
    (data_dir / "install-version").write_text(__version__ + "\n")  # as the installer does
    env = base_env(data_dir, live.port, home)
    doc = json.loads((home / ".claude" / "settings.json").read_text())

    def line(event: str) -> str:
        (found,) = commands(doc["hooks"][event])
        assert found.startswith(f"{BASE_PY} -I -S ")
        return found

    run_hook(line("SessionStart"), "SessionStart", env, project)
    assert wait_until(lambda: live.health() is not None)
    info = lifecycle.read_pid_info()
    assert info is not None
    pid = info["pid"]
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert argv[0].decode() == VENV_PY  # the worker needs the venv's packages
    for event in ("UserPromptSubmit", "PostToolUse"):
        run_hook(line(event), event, env, project)

    def stored() -> list[tuple[object, ...]]:
        conn = sqlite3.connect(f"file:{data_dir / 'claude-mem.db'}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT tool_name FROM tool_uses").fetchall()
        finally:
            conn.close()

    assert wait_until(lambda: stored() == [("Bash",)])
