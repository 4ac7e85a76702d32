"""Which Python runs the command hooks: the one that starts fastest among those that can.

Command hooks import only the standard library and our stdlib-only modules (run with -I -S),
so any CPython >= 3.11 can run them, and interpreters differ a lot in start-up time (a shared,
non-PGO build against a distribution's PGO one). Candidates: the venv's own python (always
valid, the fallback), its base interpreter, `python3` and `python3.11`..`python3.14` on PATH,
and /usr/bin/python3. Each must answer the real hook entry's probe (`entry.py --probe`)
correctly; the valid ones are timed. The choice is sticky, so a re-install with nothing
changed rewrites nothing and `install --print` shows what `install` writes: the interpreter
the hooks already run stays while it answers the probe and nothing starts in half its time;
with none installed (or one that no longer answers), another wins over the venv's only when
clearly faster. CLAUDE_MEM_HOOK_PYTHON forces one. The choice is recorded in the hook commands
themselves, where doctor and the next install read it back.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from claude_mem import __version__
from claude_mem.hooks import command as hook_command
from claude_mem.hooks import installed
from claude_mem.install.base import ConfigError, HookCommand
from claude_mem.setting_keys import SettingKey

SETTING: SettingKey = "CLAUDE_MEM_HOOK_PYTHON"
NAMES = ("python3", "python3.11", "python3.12", "python3.13", "python3.14")
SYSTEM = "/usr/bin/python3"
RUNS = 5
MIN_GAIN = 0.10  # another interpreter must start at least this much faster than the venv's
KEEP_GAIN = 0.50  # ... and this much faster than the one the hooks already run
PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Probe:
    """One interpreter's answer to the probe: `problem` is empty when it can run the hooks."""

    python: str
    problem: str = ""
    version: str = ""
    ms: float = 0.0  # the fastest of the timed runs


@dataclass(frozen=True)
class Choice:
    """The interpreter, why, and every candidate's probe (timed: the fastest of its runs)."""

    python: str
    why: str
    probes: tuple[Probe, ...] = ()


def candidates(venv_python: str, running: str = "") -> list[str]:
    """The venv's python first, then `running` (the one the hooks run now), then the others
    that exist, one per real binary."""
    path = os.environ.get("PATH", os.defpath)
    found = [
        venv_python,
        running,
        getattr(sys, "_base_executable", ""),
        *(shutil.which(name, path=path) or "" for name in NAMES),
        SYSTEM,
    ]
    out: dict[str, str] = {}
    for python in found:
        if python and os.path.isabs(python) and os.access(python, os.X_OK):
            out.setdefault(os.path.realpath(python), python)
    return list(out.values())


def probe(python: str, entry: str) -> Probe:
    """Run `python -I -S entry --probe` once, timed up to its answer line (which comes once
    the modules every hook loads are imported), and check the answer and the exit status."""
    expected = os.path.realpath(os.path.dirname(os.path.dirname(os.path.dirname(entry))))
    argv = hook_command.argv(python, entry, python, hook_command.PROBE_FLAG)
    try:
        ms, code, line, said = _run(argv)
    except (OSError, subprocess.SubprocessError) as exc:
        return Probe(python, f"does not run ({type(exc).__name__}: {exc})")
    problem, version = _judge(code, line, said, expected)
    return Probe(python, problem, version, ms)


def _run(argv: list[str]) -> tuple[float, int, bytes, bytes]:
    """(ms to the first line, exit code, that line, stderr) of one probe run."""
    start = time.perf_counter()
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/"
    ) as proc:
        assert proc.stdout is not None  # stdout=PIPE
        try:
            line = proc.stdout.readline(4096)
            ms = (time.perf_counter() - start) * 1000
            _, said = proc.communicate(timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    return ms, proc.returncode, line, said


def _judge(code: int, line: bytes, said: bytes, package: str) -> tuple[str, str]:
    """(problem or "", Python version) for one probe run expecting our version and `package`."""
    if code != 0:
        last = said.decode("utf-8", "replace").strip().splitlines()
        return f"exits {code}" + (f": {last[0]}" if last else ""), ""
    try:
        answer: Any = json.loads(line)
    except ValueError:
        return f"answers {line[:60]!r}, not the probe's JSON", ""
    if not isinstance(answer, dict) or answer.get("claude_mem") != __version__:
        return f"answers {answer!r}, not claude-mem {__version__}", ""
    if os.path.realpath(str(answer.get("package"))) != package:
        return f"runs the claude_mem in {answer.get('package')}, not the one in {package}", ""
    return "", str(answer.get("python", ""))


def choose(command: HookCommand, forced: str = "", runs: int = RUNS, running: str = "") -> Choice:
    """The interpreter for `command`'s hooks: `forced` if it can run them (ConfigError if
    not), else `running` (what the hooks run now) while it can and nothing starts in half
    its time, else the fastest valid candidate, the venv's unless another is clearly faster."""
    if forced:
        python = os.path.abspath(os.path.expanduser(forced))
        found = probe(python, command.entry)
        if found.problem:
            raise ConfigError(f"{SETTING}={forced} cannot run the hooks: it {found.problem}")
        return Choice(python, f"{SETTING} (Python {found.version})", (found,))
    probes = [probe(python, command.entry) for python in candidates(command.python, running)]
    if probes[0].problem:
        raise ConfigError(f"this venv's python cannot run the hooks: it {probes[0].problem}")
    # Round-robin, so passing load on the machine hits every candidate alike; one more than
    # twice as slow as the venv's on its first run (a pyenv shim: a shell) is out already,
    # unless the hooks run it now (it is then timed as long as the others).
    timed = [
        found
        for found in probes
        if not found.problem and (found.ms <= 2 * probes[0].ms or found.python == running)
    ]
    for _ in range(runs - 1):
        timed = [_again(found, command.entry) for found in timed]
    own = timed[0]
    if own.problem:
        raise ConfigError(f"this venv's python cannot run the hooks: it {own.problem}")
    final = tuple({**{p.python: p for p in probes}, **{p.python: p for p in timed}}.values())
    valid = [found for found in timed if not found.problem]
    best = min(valid, key=lambda found: found.ms)
    kept = next((found for found in valid if found.python == running), None)
    if kept is not None and best.ms > kept.ms * (1 - KEEP_GAIN):
        why = f"Python {kept.version}, as installed: none starts in half its time"
        return Choice(kept.python, why, final)
    if best.ms > own.ms * (1 - MIN_GAIN):
        return Choice(own.python, f"the venv's own (Python {own.version})", final)
    gain = 1 - best.ms / own.ms
    why = f"Python {best.version}, starts {gain:.0%} faster than the venv's"
    return Choice(best.python, why, final)


def _again(found: Probe, entry: str) -> Probe:
    """`found` with one more run: its fastest time, or the problem a flaky candidate shows."""
    if found.problem:
        return found
    new = probe(found.python, entry)
    return new if new.problem else replace(found, ms=min(found.ms, new.ms))


def chosen(command: HookCommand, running: str = "") -> tuple[HookCommand, Choice]:
    """`command` with the interpreter `claude-mem install` chooses, `running` being the one
    its hooks run now (CLAUDE_MEM_HOOK_PYTHON, from settings or the environment, forces it)."""
    from claude_mem import settings  # noqa: PLC0415

    choice = choose(command, settings.load().get_str(SETTING), running=running)
    return HookCommand(command.python, command.entry, choice.python), choice


def _strings(node: object) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def commands_in(path: str) -> set[tuple[str, str]]:
    """(interpreter, entry) of every command hook of ours the JSON file at `path` holds."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            doc = json.loads(handle.read(installed.MAX_CONFIG_BYTES))
    except (OSError, ValueError):
        return set()
    out: set[tuple[str, str]] = set()
    for text in _strings(doc):
        if installed.MARKER not in text.replace("\\", "/"):
            continue
        try:
            argv = shlex.split(text)
        except ValueError:
            continue
        entry = next((arg for arg in argv if arg.endswith("entry.py")), "")
        if argv and entry:
            out.add((argv[0], entry))
    return out


def installed_commands(cwd: str | None) -> dict[tuple[str, str], str]:
    """(interpreter, entry) of every command hook of ours the agents' configs hold, with a
    file that holds it."""
    out: dict[tuple[str, str], str] = {}
    for platform in installed.HOOK_FILES:
        for path in installed.installed(platform, cwd)[0]:
            for found in sorted(commands_in(path)):
                out.setdefault(found, path)
    return out


def doctor_checks(cwd: str | None) -> list[tuple[str, str, str]]:
    """One line per interpreter the installed command hooks run: does it still run them?"""
    found: list[tuple[str, str, str]] = []
    for (python, entry), path in installed_commands(cwd).items():
        if not os.path.exists(python):
            found.append(("hook python", "fail", f"{python} (in {path}) no longer exists; "
                          "`claude-mem install` chooses again"))  # fmt: skip
            continue
        result = probe(python, entry)
        if result.problem:
            found.append(("hook python", "fail", f"{python} (in {path}) {result.problem}; "
                          "`claude-mem install` chooses again"))  # fmt: skip
        else:
            found.append(("hook python", "ok", f"{python} (Python {result.version}) runs the "
                          f"command hooks in {path}"))  # fmt: skip
    return found
