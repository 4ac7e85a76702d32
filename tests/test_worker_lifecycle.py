"""The worker as real processes on real loopback ports: one instance, no leaks, honest health."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_mem import log
from claude_mem.settings import load as load_settings
from claude_mem.worker import lifecycle
from claude_mem.worker.client import request
from claude_mem.worker.token import read_token
from tests.net import free_port, worker_pids
from tests.polling import wait_until
from tests.worker_process import Env, worker_env


def reported_pid(output: str) -> int:
    match = re.search(r"pid (\d+)", output)
    assert match, output
    return int(match.group(1))


def exited(pid: int) -> bool:
    """Gone, or a zombie: dead, waiting for init (not us) to collect it, which can take a while."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return True
    return stat.rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")


@pytest.fixture
def env(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from worker_env(data_dir, monkeypatch)


def test_concurrent_starts_make_exactly_one_worker(env: Env) -> None:
    results: list[subprocess.CompletedProcess[str]] = []
    threads = [
        threading.Thread(target=lambda: results.append(env.cli("worker", "start")))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert len(results) == 8
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    reported = {reported_pid(r.stdout) for r in results}
    assert len(reported) == 1
    (pid,) = reported
    info = lifecycle.read_pid_info()
    assert info is not None
    assert info["pid"] == pid
    assert lifecycle.pid_alive_and_ours(info)
    assert worker_pids(env.data_dir) == [pid]
    assert env.log_text().count("[worker] listening") == 1  # no second worker ever served
    assert not Path(lifecycle.spawn_lock_path()).exists()


def test_start_is_quick_idempotent_and_truthful(env: Env) -> None:
    pid = env.start()  # how quick: bench/worker_start_bench.py
    health = env.health()
    assert health is not None
    assert health["pid"] == pid
    assert health["port"] == env.port
    assert env.start() == pid  # a second start reports the running one
    status = env.cli("worker", "status")
    assert status.returncode == 0
    assert f"pid {pid}" in status.stdout
    as_json = json.loads(env.cli("worker", "status", "--json").stdout)
    assert as_json["running"] is True
    assert as_json["pid"] == pid
    info = lifecycle.read_pid_info()
    assert info is not None
    assert info["start_time"] == lifecycle.process_start_time(pid)
    # Data routes want the token; the hook client sends it.
    assert request("GET", "/api/openapi.json", port=env.port).status == 401
    authed = request("GET", "/api/openapi.json", port=env.port, token=read_token())
    assert authed.status == 200
    document = authed.json()
    assert isinstance(document, dict)
    assert "paths" in document


def test_readiness_is_503_until_the_store_opens(env: Env, data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    blocker = sqlite3.connect(data_dir / "claude-mem.db", isolation_level=None)
    try:
        blocker.execute("BEGIN EXCLUSIVE")
        pid = env.start()
        health = env.health()
        assert health is not None
        assert health["pid"] == pid
        assert health["ready"] is False
        response = request("GET", "/api/readiness", port=env.port)
        assert response.status == 503
        reason = response.json()
        assert isinstance(reason, dict)
        assert reason["code"] == "starting"
        assert reason["error"]
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert wait_until(
        lambda: request("GET", "/api/readiness", port=env.port).status == 200, timeout=10
    )
    assert request("GET", "/api/readiness", port=env.port).json() == {"ready": True, "reason": None}


def test_graceful_stop_leaves_nothing_behind(env: Env) -> None:
    pid = env.start()
    stopped = env.cli("worker", "stop")
    assert stopped.returncode == 0
    assert f"stopped (pid {pid})" in stopped.stdout
    assert exited(pid)  # already, when stop returns
    assert Path(lifecycle.clean_shutdown_path()).exists()
    assert not Path(lifecycle.pid_path()).exists()
    assert env.health() is None
    assert "[worker] stopped" in env.log_text()
    again = env.cli("worker", "stop")
    assert again.returncode == 0
    assert "no worker" in again.stdout


def test_kill_9_then_start_recovers_and_logs_the_crash(env: Env) -> None:
    first = env.start()
    os.kill(first, signal.SIGKILL)
    assert wait_until(lambda: exited(first), timeout=5)
    stale = lifecycle.read_pid_info()
    assert stale is not None
    assert stale["pid"] == first  # nobody cleaned up after the crash
    assert not lifecycle.pid_alive_and_ours(stale)
    second = env.start()
    assert second != first
    health = env.health()
    assert health is not None
    assert health["pid"] == second
    info = lifecycle.read_pid_info()
    assert info is not None
    assert info["pid"] == second
    crash_lines = [
        line for line in env.log_text().splitlines() if lifecycle.UNCLEAN_MESSAGE in line
    ]
    assert len(crash_lines) == 1
    assert f"pid={first}" in crash_lines[0]


def test_restart_replaces_the_worker(env: Env) -> None:
    first = env.start()
    done = env.cli("worker", "restart")
    assert done.returncode == 0, done.stderr
    second = reported_pid(done.stdout.split("running:", 1)[1])
    assert second != first
    assert worker_pids(env.data_dir) == [second]
    assert lifecycle.UNCLEAN_MESSAGE not in env.log_text()


def test_stale_pid_files_are_ignored_and_cleaned(env: Env) -> None:
    me = os.getpid()
    real_start = lifecycle.process_start_time(me)
    assert real_start is not None
    assert lifecycle.pid_alive_and_ours({"pid": me, "start_time": real_start})
    reused = {"pid": me, "port": env.port, "start_time": real_start + 1}
    assert not lifecycle.pid_alive_and_ours(reused)
    dead_proc = subprocess.Popen(["true"])
    dead_proc.wait()
    assert not lifecycle.pid_alive_and_ours({"pid": dead_proc.pid, "start_time": 1})
    assert not lifecycle.pid_alive_and_ours({"pid": "12"})

    Path(lifecycle.pid_path()).parent.mkdir(parents=True)
    Path(lifecycle.pid_path()).write_text("{not json")
    assert lifecycle.read_pid_info() is None
    assert lifecycle.clear_stale_pid_file()
    Path(lifecycle.pid_path()).write_text(json.dumps(reused))
    assert lifecycle.stop() is False  # never signals a recycled pid (this test survives)
    assert not Path(lifecycle.pid_path()).exists()
    assert lifecycle.UNCLEAN_MESSAGE in env.log_text()

    Path(lifecycle.pid_path()).write_text(json.dumps({"pid": dead_proc.pid, "port": env.port}))
    status = env.cli("worker", "status")
    assert "not running" in status.stdout
    pid = env.start()
    assert pid not in (me, dead_proc.pid)
    info = lifecycle.read_pid_info()
    assert info is not None
    assert info["pid"] == pid


def run_worker(env: Env) -> subprocess.CompletedProcess[str]:
    """`python -m claude_mem.worker run` in the foreground, as `worker run` does."""
    return subprocess.run(
        [sys.executable, "-m", "claude_mem.worker", "run"],
        check=False,
        env=env.vars,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_port_taken_by_another_program(env: Env) -> None:
    with socket.create_server(("127.0.0.1", env.port)):
        done = run_worker(env)
        assert done.returncode == 1
        message = done.stderr.strip()
        assert "\n" not in message
        assert str(env.port) in message
        assert "CLAUDE_MEM_WORKER_PORT" in message
        start = env.cli("worker", "start")
        assert start.returncode == 1
    assert not Path(lifecycle.pid_path()).exists()
    assert worker_pids(env.data_dir) == []


def test_a_spawned_worker_that_exits_is_noticed_not_waited_out(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait for a started worker ends when the child exits (port taken, lock lost): with a
    deadline an hour away, only noticing the exit can return."""
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(free_port()))
    child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(1)"])
    assert lifecycle._await_health(load_settings(), time.monotonic() + 3600, child.pid) is None
    assert exited(child.pid)
    child.wait(5)  # already reaped by the wait above; this settles the Popen object


def test_status_and_stop_when_not_running(env: Env) -> None:
    status = env.cli("worker", "status")
    assert status.returncode == 1  # like `systemctl status`: scripts can test it
    assert f"worker not running for {env.data_dir}" in status.stdout
    as_json = env.cli("worker", "status", "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["running"] is False


def test_worker_outlives_its_launcher_in_its_own_session(env: Env) -> None:
    code = (
        "from claude_mem.worker import lifecycle\n"
        "info = lifecycle.ensure_running(wait_s=10)\n"
        "print(info.pid if info else 'none')\n"
    )
    launcher = subprocess.run(
        [sys.executable, "-c", code],
        env=env.vars,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert launcher.returncode == 0, launcher.stderr
    pid = int(launcher.stdout.strip())
    time.sleep(0.2)
    health = env.health()
    assert health is not None
    assert health["pid"] == pid
    assert os.getsid(pid) == pid
    assert os.getpgid(pid) == pid
    assert worker_pids(env.data_dir) == [pid]


def test_second_worker_process_exits_at_once(env: Env) -> None:
    pid = env.start()
    done = run_worker(env)  # a wait for the running worker's lock would hit its timeout
    assert done.returncode == 0
    assert f"already running (pid {pid}, port {env.port})" in done.stdout
    assert worker_pids(env.data_dir) == [pid]


def test_instance_lock_is_exclusive(data_dir: Path) -> None:
    assert not lifecycle.worker_lock_held()
    fd = lifecycle.acquire_instance_lock()
    assert fd is not None
    try:
        assert lifecycle.worker_lock_held()
        assert lifecycle.acquire_instance_lock(wait_s=0.05) is None
    finally:
        os.close(fd)
    assert not lifecycle.worker_lock_held()


def test_spawn_lock_waits_and_breaks_only_stale_locks(data_dir: Path) -> None:
    path = Path(lifecycle.spawn_lock_path())
    with lifecycle.spawn_lock(timeout=1):
        assert json.loads(path.read_text())["pid"] == os.getpid()
        began = time.monotonic()
        # Held until the end of this block: only the waiter's own timeout can end its wait.
        with pytest.raises(lifecycle.SpawnLockTimeout):
            lifecycle.spawn_lock(timeout=0.2).__enter__()
        assert time.monotonic() - began > 0.15  # it did wait for its timeout
    assert not path.exists()

    dead = subprocess.Popen(["true"])
    dead.wait()
    path.write_text(json.dumps({"pid": dead.pid, "created_at": time.time()}))
    with lifecycle.spawn_lock(timeout=1):  # owner is dead: broken at once
        assert json.loads(path.read_text())["pid"] == os.getpid()

    path.write_text(json.dumps({"pid": os.getpid(), "created_at": 0}))
    old = time.time() - lifecycle.SPAWN_LOCK_STALE_S - 5
    os.utime(path, (old, old))
    with lifecycle.spawn_lock(timeout=1):  # owner alive but the lock is too old
        pass

    foreign = {"pid": os.getpid(), "created_at": 1.0}
    lock = lifecycle.spawn_lock(timeout=1).__enter__()
    path.write_text(json.dumps(foreign))  # someone else's lock now: release must not remove it
    lock.__exit__(None, None, None)
    assert json.loads(path.read_text()) == foreign


def test_stop_kills_a_worker_that_ignores_sigterm(data_dir: Path) -> None:
    code = (
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        start_time = lifecycle.process_start_time(proc.pid)
        Path(lifecycle.pid_path()).parent.mkdir(parents=True)
        Path(lifecycle.pid_path()).write_text(
            json.dumps({"pid": proc.pid, "start_time": start_time})
        )
        assert lifecycle.stop(timeout=0.3) is True
        assert exited(proc.pid)  # it ignored SIGTERM and would have slept on: the kill ended it
        assert not Path(lifecycle.pid_path()).exists()
        assert "did not stop in time" in "".join(p.read_text() for p in log.log_files())
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()


def test_shutdown_route_stops_the_worker_cleanly(env: Env) -> None:
    pid = env.start()
    response = request("POST", "/api/admin/shutdown", port=env.port, token=read_token())
    assert response.status == 200
    assert wait_until(lambda: exited(pid), timeout=10)
    assert wait_until(lambda: not Path(lifecycle.pid_path()).exists(), timeout=2)
    assert Path(lifecycle.clean_shutdown_path()).exists()


def test_ensure_running_reports_an_unusable_data_dir_without_raising(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(not_a_dir))
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(free_port()))
    assert lifecycle.ensure_running(wait_s=1) is None


def test_older_worker_is_restarted_once_never_in_a_loop(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_pid = env.start()
    # This launcher is a newer install than the running worker.
    monkeypatch.setattr(lifecycle, "__version__", "99.0.0")
    replaced = lifecycle.ensure_running(wait_s=10)
    assert replaced is not None
    assert replaced.pid != old_pid
    assert exited(old_pid) or wait_until(lambda: exited(old_pid))
    # The new worker still reports the old version (same code on disk): asking again must not
    # restart it a second time.
    again = lifecycle.ensure_running(wait_s=10)
    assert again is not None
    assert again.pid == replaced.pid
    assert env.log_text().count("restarting an older worker once") == 1


def test_stop_is_prompt_with_an_event_stream_open(env: Env) -> None:
    """The viewer keeps /api/stream open: stopping must end it, not wait out the timeout."""
    pid = env.start()
    stream = socket.create_connection(("127.0.0.1", env.port), timeout=5)
    try:
        stream.sendall(
            f"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{env.port}\r\n"
            f"x-claude-mem-token: {read_token()}\r\n\r\n".encode()
        )
        assert b"200" in stream.recv(4096).split(b"\r\n", 1)[0]
        stopped = env.cli("worker", "stop")
        assert stopped.returncode == 0
        assert exited(pid)
    finally:
        stream.close()
    stderr = Path(lifecycle.stderr_log_path())
    errors = stderr.read_text() if stderr.exists() else ""
    assert "Traceback" not in errors
    # The open stream did not hold the shutdown until uvicorn's graceful timeout cancelled it.
    assert "timeout graceful shutdown exceeded" not in errors
    assert "[worker] stopped" in env.log_text()


def _vectors(data_dir: Path) -> list[bytes]:
    conn = sqlite3.connect(f"file:{data_dir / 'claude-mem.db'}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute("SELECT vector FROM vectors")]
    finally:
        conn.close()


def test_stop_with_an_embedding_backlog_is_graceful_and_keeps_the_vectors(env: Env) -> None:
    """`worker stop` while the real model works through a backlog: the embedder stops between
    two of its runs, stores what it made, and the worker shuts down cleanly (not killed)."""
    import numpy as np

    from claude_mem.search.embedding_task import BATCH_ROWS
    from claude_mem.store import Database
    from tests.store_helpers import observation, session

    words = ["gateway", "retry", "parser", "token", "schema", "worker", "queue", "socket", "buffer"]
    with Database() as db:
        sid = session(db)
        # Older rows of maximal length: one batch of them keeps the model busy for seconds.
        for i in range(BATCH_ROWS + 44):
            text = " ".join(f"{words[(i + j) % len(words)]}{j * i % 97}" for j in range(300))
            observation(db, sid, title=f"long change {i}", narrative=text)
        # The newest rows, embedded first: a quick first batch.
        for i in range(BATCH_ROWS):
            observation(db, sid, title=f"change {i}", narrative="fixed the parser")
    pid = env.start()
    assert wait_until(lambda: len(_vectors(env.data_dir)) >= BATCH_ROWS, timeout=300)
    before = len(_vectors(env.data_dir))  # the long rows' batch is being embedded now
    stopped = env.cli("worker", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert exited(pid)
    assert Path(lifecycle.clean_shutdown_path()).exists()  # it shut down, it was not killed
    assert "did not stop in time" not in env.log_text()
    kept = _vectors(env.data_dir)
    # Nothing stored was lost, and what the batch in hand stored are whole vectors (the rows
    # the model had not run stay pending; tests/test_search_embed.py checks which are kept).
    assert len(kept) >= before
    norms = np.linalg.norm(np.stack([np.frombuffer(v, "<f4") for v in kept]), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-4)


def _dir_env(root: Path, port: int) -> Env:
    env = Env(root, port)
    env.vars.update(
        CLAUDE_MEM_DATA_DIR=str(root),
        CLAUDE_MEM_WORKER_PORT=str(port),
        CLAUDE_MEM_EMBEDDING_MODEL="none",
    )
    return env


def _sessions(data_dir: Path) -> list[str]:
    path = data_dir / "claude-mem.db"
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute("SELECT host_session_id FROM sessions")]
    finally:
        conn.close()


@pytest.fixture
def two_dirs(tmp_path: Path) -> Iterator[tuple[Env, Env]]:
    """Data dirs A and B configured with the same port; afterwards no worker of either lives."""
    port = free_port()
    a, b = _dir_env(tmp_path / "a", port), _dir_env(tmp_path / "b", port)
    yield a, b
    for env in (a, b):
        env.cli("worker", "stop", timeout=30)
    leaked = worker_pids(a.data_dir) + worker_pids(b.data_dir)
    for pid in leaked:
        os.kill(pid, signal.SIGKILL)
    assert not leaked, f"worker processes leaked: {leaked}"


def test_each_data_dir_gets_its_own_worker_and_sees_the_other_as_foreign(
    two_dirs: tuple[Env, Env], tmp_path: Path
) -> None:
    from tests.test_hooks_process import base_env, hook

    a, b = two_dirs
    a_pid = a.start()
    # B has no worker: the one on the port is A's, and B's CLI says so instead of using it.
    status = b.cli("worker", "status")
    assert status.returncode == 1, status.stdout
    foreign = (
        f"is served by the claude-mem worker for {a.data_dir} (pid {a_pid}), not for {b.data_dir}"
    )
    assert foreign in status.stdout
    as_json = json.loads(b.cli("worker", "status", "--json").stdout)
    assert as_json["running"] is False
    assert foreign in as_json["problem"]
    # For doctor that is a setup that works (B's worker will take another port), not a failure.
    doctor = b.cli("doctor", "--json")
    assert doctor.returncode == 0, doctor.stdout
    worker_check = next(c for c in json.loads(doctor.stdout) if c["check"] == "worker")
    assert worker_check["status"] == "ok"
    assert worker_check["detail"] == (
        f"not running; port {b.port} {foreign}: this data dir's worker will take a free port, "
        "recorded in its worker.pid (hooks start it on demand)"
    )
    # A hook of B (not session start: no probe first) meets A's worker, which refuses B's
    # token; it starts B's own worker on a free port and stores into B.
    home = tmp_path / "home"
    home.mkdir()
    hook_env = base_env(b.data_dir, b.port, home)
    hook_env["CLAUDE_MEM_EMBEDDING_MODEL"] = "none"
    prompt = {"session_id": "in-b", "cwd": str(tmp_path), "prompt": "remember this in B"}
    done = hook("claude-code", "user-prompt-submit", prompt, hook_env)
    assert (done.returncode, done.stderr) == (0, b""), done.stderr
    b_info = lifecycle_info(b)
    assert b_info["pid"] != a_pid
    assert b_info["port"] != b.port
    assert wait_until(lambda: _sessions(b.data_dir) == ["in-b"])
    assert _sessions(a.data_dir) == []
    # Every client of B now finds B's worker through B's pid file.
    status = b.cli("worker", "status")
    assert status.returncode == 0, status.stdout
    assert f"pid {b_info['pid']}, port {b_info['port']}" in status.stdout
    assert foreign in status.stdout  # and it says why it is not on the configured port
    doctor = b.cli("doctor", "--json")
    worker_check = next(c for c in json.loads(doctor.stdout) if c["check"] == "worker")
    assert worker_check["status"] == "ok", worker_check
    assert str(b.data_dir) in worker_check["detail"]
    start = hook("claude-code", "session-start", {"session_id": "s2", "cwd": str(tmp_path)},
                 hook_env)  # fmt: skip
    assert (start.returncode, start.stderr) == (0, b""), start.stderr
    done = hook("claude-code", "user-prompt-submit", {**prompt, "session_id": "s2"}, hook_env)
    assert (done.returncode, done.stderr) == (0, b""), done.stderr
    assert wait_until(lambda: sorted(_sessions(b.data_dir)) == ["in-b", "s2"])
    # restart replaces B's worker only; A's keeps running, untouched.
    restart = b.cli("worker", "restart")
    assert restart.returncode == 0, restart.stderr
    assert f"worker stopped (pid {b_info['pid']})" in restart.stdout
    assert reported_pid(restart.stdout.split("\n", 1)[1]) not in (a_pid, b_info["pid"])
    health = a.health()
    assert health is not None
    assert health["pid"] == a_pid
    assert a.cli("worker", "status").returncode == 0


def lifecycle_info(env: Env) -> dict[str, object]:
    info = json.loads((env.data_dir / "worker.pid").read_text())
    assert isinstance(info, dict)
    return info


class HtmlErrors:
    """A foreign web server on loopback: every request gets a multi-line HTML error page."""

    PAGE = (
        b"<!DOCTYPE html>\n<html>\n<head><title>Error response</title></head>\n<body>\n"
        b"<h1>Not   Found</h1>\n<p>Nothing matches the given URI.</p>\n"
        + b"<p>"
        + b"filler " * 200
        + b"</p>\n</body>\n</html>\n"
    )

    def __init__(self, port: int, status: int) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        page, code = self.PAGE, status

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(code)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            do_GET = do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.mark.parametrize("status", [404, 500])
def test_a_foreign_web_server_on_the_port_is_named_in_one_line(
    env: Env, tmp_path: Path, status: int
) -> None:
    from tests.test_hooks_process import base_env, hook

    server = HtmlErrors(env.port, status)
    try:
        shown = env.cli("worker", "status")
        assert shown.returncode == 1
        assert "something else (not a claude-mem worker) answers on" in shown.stdout
        assert f"HTTP {status}: Error response Not Found Nothing matches" in shown.stdout
        start = env.cli("worker", "start")
        assert start.returncode == 1
        assert start.stderr.count("\n") == 1, start.stderr
        assert "something else" in start.stderr
        assert "CLAUDE_MEM_WORKER_PORT" in start.stderr
        home = tmp_path / "home"
        home.mkdir()
        hook_env = base_env(env.data_dir, env.port, home)
        hook_env["CLAUDE_MEM_HOOK_FAIL_LOUD_THRESHOLD"] = "1"
        tool = {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PostToolUse",
                "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "ok",
                "tool_use_id": "t1"}  # fmt: skip
        done = hook("claude-code", "post-tool-use", tool, hook_env)
        assert done.returncode == 2
        line = done.stderr.decode()
        assert line.count("\n") == 1, line
        assert line.endswith("run `claude-mem doctor`\n"), line
        assert "<" not in line
        assert "filler filler" not in line.split("…")[-1]
        assert f"HTTP {status}: Error response Not Found" in line
        assert "something else (not a claude-mem worker)" in line
        assert len(line) < 700
    finally:
        server.close()
    assert worker_pids(env.data_dir) == []
