"""Getting claude-mem onto a machine, as the README says: the demo command's venv holds the
runtime only (the test command's adds the dev tools), and `uv tool install` puts `claude-mem`
on PATH. Each runs on a copy of the project in a temp folder, from a cold tool cache: the real
installers, the real package index."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from claude_mem import __version__

ROOT = Path(__file__).resolve().parents[1]
BASE_PY = str(getattr(sys, "_base_executable", "")) or sys.executable
UV = Path(sys.executable).with_name("uv")
INSTALL_TIMEOUT_S = 600.0


def clone(into: Path) -> Path:
    """What a fresh clone holds for building and setting up (no venv, no build leftovers)."""
    into.mkdir()
    for name in ("pyproject.toml", "constraints.txt", "README.md"):
        shutil.copy2(ROOT / name, into / name)
    shutil.copytree(ROOT / "scripts", into / "scripts")
    leftovers = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "src", into / "src", ignore=leftovers)
    return into


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done


def dev_tools() -> list[str]:
    """The distribution names of the dev extra, as pyproject.toml lists them."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        extras = tomllib.load(handle)["project"]["optional-dependencies"]["dev"]
    return [re.match(r"[A-Za-z0-9._-]+", spec).group() for spec in extras]  # type: ignore[union-attr]


def installed_of(python: Path, names: list[str], cwd: Path) -> list[str]:
    """Which of `names` are installed for `python`."""
    code = (
        "import importlib.metadata as m, sys\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n        m.distribution(name)\n    except m.PackageNotFoundError:\n"
        "        continue\n    print(name)\n"
    )
    done = run([str(python), "-c", code, *names], cwd, dict(os.environ))
    return done.stdout.split()


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_demo_command_installs_the_runtime_only_and_once(tmp_path: Path) -> None:
    project = clone(tmp_path / "clone")
    env = {**os.environ, "PYTHON": BASE_PY}
    env.pop("VIRTUAL_ENV", None)
    demo = run(["./scripts/demo.sh", "--help"], project, env)
    assert "usage: claude-mem demo" in demo.stdout
    venv = project / ".venv"
    tools = dev_tools()
    assert {"pytest", "ruff", "mypy", "playwright", "uv"} <= set(tools)
    assert installed_of(venv / "bin" / "python", tools, project) == []
    assert installed_of(venv / "bin" / "python", ["claude-mem-py"], project) == ["claude-mem-py"]
    stamp = venv / ".installed-runtime"
    assert stamp.is_file()
    assert not (venv / ".installed-dev").exists()

    before = stamp.stat().st_mtime_ns
    again = run(["./scripts/demo.sh", "--help"], project, env)  # nothing changed: no install
    assert again.stdout == demo.stdout
    assert stamp.stat().st_mtime_ns == before


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_uv_tool_install_puts_claude_mem_on_path(tmp_path: Path) -> None:
    """The README's `uv tool install` line as it stands, with uv's folders in tmp_path."""
    readme = (ROOT / "README.md").read_text().splitlines()
    (words,) = [line.split("  #")[0].split() for line in readme if line.startswith("uv tool ")]
    assert words[:3] == ["uv", "tool", "install"]
    assert words[-1] == "."  # from the clone
    project = clone(tmp_path / "clone")
    home, tools, bin_dir, cache = (tmp_path / name for name in ("home", "tools", "bin", "cache"))
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("UV_")},
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "UV_TOOL_DIR": str(tools),
        "UV_TOOL_BIN_DIR": str(bin_dir),
        "UV_CACHE_DIR": str(cache),  # cold: every download is real
        "UV_NO_CONFIG": "1",
        "UV_PYTHON": BASE_PY,  # the machine's own: uv downloads none
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_SYSTEM_CERTS": "1",  # the platform's trust store (a proxy's CA may be only there)
        "CLAUDE_MEM_DATA_DIR": str(tmp_path / "data"),
    }
    env.pop("VIRTUAL_ENV", None)
    home.mkdir()
    try:
        run([str(UV), *words[1:]], project, env)
        found = shutil.which("claude-mem", path=env["PATH"])
        assert found == str(bin_dir / "claude-mem")
        assert run(["claude-mem", "--version"], home, env).stdout.strip() == (
            f"claude-mem-py {__version__}"
        )
        status = run(["claude-mem", "status"], home, env).stdout
        assert f"data dir      {tmp_path / 'data'}" in status
    finally:
        shutil.rmtree(cache, ignore_errors=True)  # hundreds of MB of wheels
