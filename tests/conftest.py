"""Shared fixtures: every test gets its own data directory and a clean environment."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from claude_mem.search.embed import Embedder, load_embedder
from claude_mem.store import Database
from tests.net import DeadPort
from tests.worker_fixtures import RunningWorker, running_worker

# The team tests' real PostgreSQL (one embedded server per run, a database per test).
pytest_plugins = ["tests.team_pg"]


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point all state at a fresh folder and drop any CLAUDE_MEM_* the developer has set."""
    for key in list(os.environ):
        if key.startswith("CLAUDE_MEM_"):
            monkeypatch.delenv(key)
    path = tmp_path / "data"
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(path))
    # Most tests post tool events without ending the turn: compress them as they arrive.
    # Tests of whole turns (tests/test_pipeline_turns.py, the end-to-end runs) set it back.
    monkeypatch.setenv("CLAUDE_MEM_TURN_IDLE_S", "0")
    # Workers started by tests must not read the git history of the folder the suite runs in.
    # The history tests (tests/test_history_*.py) set it back.
    monkeypatch.setenv("CLAUDE_MEM_GIT_HISTORY", "false")
    # Installs run hooks with this interpreter instead of timing every candidate on the
    # machine (seconds per install); tests/test_hook_python.py unsets it to test the choice.
    monkeypatch.setenv("CLAUDE_MEM_HOOK_PYTHON", sys.executable)
    return path


@pytest.fixture
def provider_plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The third-party providers of tests/fixtures/provider-plugin, installed as `pip install`
    would: a dist-info on sys.path declaring them in the `claude_mem.providers` group."""
    from claude_mem.pipeline import registry

    monkeypatch.syspath_prepend(str(Path(__file__).parent / "fixtures" / "provider-plugin"))
    registry._entry_point_names.cache_clear()
    module = importlib.import_module("claude_mem_fixture_plugin")
    module.METERED_CALLS.clear()
    yield module
    for name in ("fixture-offline", "fixture-metered"):
        registry._factories.pop(name, None)
    registry._entry_point_names.cache_clear()  # looked up again once sys.path is restored


@pytest.fixture
def dead() -> Iterator[DeadPort]:
    """A port that accepts and hangs up: the worker is unreachable there."""
    port = DeadPort()
    yield port
    port.close()


@pytest.fixture
def worker(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningWorker]:
    """A real worker in this process, vectors off (fast to start, exact full-text results).
    Modules that need another kind define their own `worker`."""
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    with running_worker() as running:
        yield running


@pytest.fixture
def hook_env(data_dir: Path, tmp_path: Path, worker: RunningWorker) -> dict[str, str]:
    """What a hook process gets from the agent, pointed at `worker` (installed, same version)."""
    from claude_mem import __version__
    from tests.test_hooks_process import base_env

    home = tmp_path / "home"
    home.mkdir()
    (data_dir / "install-version").write_text(__version__ + "\n")
    return base_env(data_dir, worker.port, home)


@pytest.fixture
def db(data_dir: Path) -> Iterator[Database]:
    """The data dir's database, open (migrated) for the test."""
    with Database() as database:
        yield database


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    """The real embedding model (loaded once per process)."""
    loaded = load_embedder("minilm-l6-int8")
    assert loaded is not None
    return loaded
