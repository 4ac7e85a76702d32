"""The file-read gate end to end: the real hook process (a Claude Code PreToolUse Read
payload) against a real worker on loopback, real files, real observations."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from claude_mem.records import Observation
from claude_mem.store import Database
from claude_mem.store.context_queries import observations_touching
from claude_mem.store.observations import delete_observation, insert_observation
from claude_mem.store.sessions import ensure_session
from tests.test_hooks_process import FORBIDDEN, answer, hook, imported
from tests.worker_fixtures import RunningWorker

DAY_MS = 86_400_000
BIG = "Payments post in batches; each batch retries with capped exponential backoff.\n" * 30


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "ledger"
    (folder / "src").mkdir(parents=True)
    return folder


@pytest.fixture
def env(hook_env: dict[str, str]) -> dict[str, str]:
    return hook_env


def write(path: Path, text: str, *, mtime_ms: int | None = None) -> Path:
    path.write_text(text)
    if mtime_ms is not None:
        os.utime(path, (mtime_ms / 1000, mtime_ms / 1000))
    return path


def remember(
    worker: RunningWorker,
    host: str,
    at: int,
    *,
    read: Sequence[str] = (),
    modified: Sequence[str] = (),
    title: str = "",
) -> int:
    db = worker.state.db
    assert db is not None
    with db.write() as conn:
        sid = ensure_session(conn, platform="claude-code", host_session_id=host, project="ledger")
        obs_id, _ = insert_observation(
            conn,
            Observation(
                session_id=sid, project="ledger", type="change" if modified else "discovery",
                title=title or f"{host} at {at}", files_read=list(read),
                files_modified=list(modified), created_at=at,
            ),
        )  # fmt: skip
    return obs_id


def read_payload(cwd: Path, path: str, session: str) -> dict[str, object]:
    return {
        "session_id": session,
        "transcript_path": "/nonexistent/t.jsonl",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": path},
        "tool_use_id": f"toolu_{time.monotonic_ns()}",
    }


def read_hook(env: dict[str, str], cwd: Path, path: str, session: str = "s-new") -> str | None:
    """Run the PreToolUse hook for a Read; the context it injects, if any."""
    done = hook("claude-code", "pre-tool-use", read_payload(cwd, path, session), env)
    assert done.returncode == 0, done.stderr
    out = answer(done)
    assert "permissionDecision" not in str(out)  # the gate never decides about the Read
    specific = out.get("hookSpecificOutput")
    if specific is None:
        return None
    assert isinstance(specific, dict)
    assert specific["hookEventName"] == "PreToolUse"
    return str(specific["additionalContext"])


def index_ids(text: str) -> list[int]:
    return [int(line.split(" ")[0]) for line in text.splitlines() if line[:1].isdigit()]


def test_big_file_with_memory_gets_its_timeline(
    worker: RunningWorker, env: dict[str, str], project: Path
) -> None:
    path = write(project / "src" / "post.py", BIG, mtime_ms=1_700_000_000_000)
    obs = remember(worker, "s-old", 1_700_000_100_000, modified=["src/post.py"],
                   title="Capped the retry backoff in src/post.py")  # fmt: skip
    text = read_hook(env, project, str(path))
    assert text is not None
    assert index_ids(text) == [obs]
    assert "Capped the retry backoff in src/post.py" in text
    assert "get_observations([IDs])" in text
    assert 'search("src/post.py")' in text
    # A relative path in the Read resolves against the cwd, and an absolute record matches too.
    other = write(project / "src" / "other.py", BIG, mtime_ms=1_700_000_000_000)
    remember(worker, "s-old", 1_700_000_200_000, read=[str(other)])
    assert read_hook(env, project, "src/other.py") is not None


@pytest.mark.parametrize("kind", ["small", "directory", "missing"])
def test_small_files_directories_and_missing_files_get_nothing(
    worker: RunningWorker, env: dict[str, str], project: Path, kind: str
) -> None:
    target = project / "src" / "thing"
    if kind == "small":
        write(target, "x" * 1499, mtime_ms=1_700_000_000_000)
    elif kind == "directory":
        target.mkdir()
    remember(worker, "s-old", 1_700_000_100_000, modified=["src/thing"])
    assert read_hook(env, project, str(target)) is None
    if kind == "small":  # one byte more and the same file qualifies
        write(target, "x" * 1500, mtime_ms=1_700_000_000_000)
        assert read_hook(env, project, str(target)) is not None


def test_file_modified_after_its_newest_observation_gets_nothing(
    worker: RunningWorker, env: dict[str, str], project: Path
) -> None:
    newest = 1_700_000_100_000
    remember(worker, "s-a", newest - 50_000, read=["src/post.py"])
    remember(worker, "s-b", newest, modified=["src/post.py"])
    path = write(project / "src" / "post.py", BIG, mtime_ms=newest + 1_000)
    assert read_hook(env, project, str(path)) is None
    os.utime(path, (newest / 1000, newest / 1000))  # not older than the newest: shown
    assert read_hook(env, project, str(path), session="s-2") is not None


def test_many_sessions_one_per_session_ranked_capped_oldest_first(
    worker: RunningWorker, env: dict[str, str], project: Path
) -> None:
    start = 1_700_000_000_000
    path = write(project / "src" / "post.py", BIG, mtime_ms=start)
    many_files = [f"src/f{n}.py" for n in range(12)]
    # Session A: read then edited the file: only its newest observation (the edit) shows.
    a_read = remember(worker, "A", start + 1_000, read=["src/post.py"])
    a_edit = remember(worker, "A", start + 2_000, modified=["src/post.py"])
    # Session B: a read among many files: lowest score, dropped by the cap of 15.
    b_read = remember(worker, "B", start + DAY_MS, read=["src/post.py", *many_files])
    # Sessions R0..R16: plain reads of few files, one per session, over two days.
    plain = [
        remember(worker, f"R{n}", start + DAY_MS + (n + 1) * 3_600_000, read=["src/post.py"])
        for n in range(17)
    ]
    text = read_hook(env, project, str(path))
    assert text is not None
    shown = index_ids(text)
    assert len(shown) == 15
    assert a_edit in shown
    assert a_read not in shown
    assert b_read not in shown  # touched 13 files: outranked
    assert set(shown) - {a_edit} == set(plain[-14:])  # equal scores: the newest win
    assert shown == sorted(shown)  # oldest first
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert len(headings) >= 2  # grouped by day


def test_once_per_file_per_session(
    worker: RunningWorker, env: dict[str, str], project: Path, data_dir: Path
) -> None:
    path = write(project / "src" / "post.py", BIG, mtime_ms=1_700_000_000_000)
    remember(worker, "s-old", 1_700_000_100_000, modified=["src/post.py"])
    assert read_hook(env, project, str(path), session="s-1") is not None
    assert read_hook(env, project, str(path), session="s-1") is None  # second Read: silent
    assert read_hook(env, project, "src/post.py", session="s-1") is None  # same file
    assert read_hook(env, project, str(path), session="s-2") is not None  # another session
    assert (data_dir / "state" / "file-gate.json").stat().st_mode & 0o777 == 0o600


def test_gate_is_off_in_capture_only_mode_and_at_zero_bytes(
    worker: RunningWorker, env: dict[str, str], project: Path
) -> None:
    path = write(project / "src" / "post.py", BIG, mtime_ms=1_700_000_000_000)
    remember(worker, "s-old", 1_700_000_100_000, modified=["src/post.py"])
    assert read_hook({**env, "CLAUDE_MEM_FILE_GATE_MIN_BYTES": "0"}, project, str(path)) is None
    assert read_hook({**env, "CLAUDE_MEM_MODE": "capture-only"}, project, str(path)) is None
    assert read_hook(env, project, str(path)) is not None


def test_file_index_follows_inserts_edits_and_deletes(data_dir: Path) -> None:
    from tests.store_helpers import observation, session

    with Database() as db:
        sid = session(db, project="ledger")
        edit = observation(db, sid, project="ledger", files_modified=["a.py"], files_read=["a.py"])
        read = observation(db, sid, project="ledger", title="r", files_read=["a.py", "b.py"])
        observation(db, sid, project="other", title="o", files_read=["a.py"])

        def ids(*paths: str) -> list[int]:
            found = observations_touching(db.read(), list(paths), projects=("ledger",), limit=9)
            return [obs["id"] for obs in found]

        assert ids("a.py") == [read, edit]
        assert ids("b.py", "missing.py") == [read]
        modified = db.read().execute(
            "SELECT modified FROM observation_files WHERE observation_id = ? AND path = 'a.py'",
            (edit,),
        )
        assert modified.fetchone()[0] == 1  # read and modified: counted as modified
        with db.write() as conn:
            conn.execute("UPDATE observations SET files_read = '[\"c.py\"]' WHERE id = ?", (read,))
        assert ids("b.py") == []
        assert ids("c.py") == [read]
        with db.write() as conn:
            delete_observation(conn, edit)
        assert ids("a.py") == []


def test_read_hook_imports_stay_light(
    worker: RunningWorker, env: dict[str, str], project: Path
) -> None:
    path = write(project / "src" / "post.py", BIG, mtime_ms=1_700_000_000_000)
    remember(worker, "s-old", 1_700_000_100_000, modified=["src/post.py"])
    modules = imported("claude-code", "pre-tool-use", read_payload(project, str(path), "s"), env)
    assert "claude_mem.hooks.seen_files" in modules  # it got as far as the worker call
    bad = {m for m in modules for f in FORBIDDEN if m == f or m.startswith(f + ".")}
    assert not bad, sorted(bad)
