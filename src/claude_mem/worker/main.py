"""The worker process: one per data dir, listening before it imports the web stack.

Order matters. The instance lock comes first, so a second worker exits within milliseconds;
then the port is bound and listening and the pid file published, so a launcher's health probe
connects (and waits in the backlog) while Starlette and uvicorn are still importing.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import signal
import socket
import sys

from claude_mem import log, paths
from claude_mem.settings import load as load_settings
from claude_mem.worker import lifecycle

# How long a starting worker waits for the instance lock: long enough to ride out a
# launcher's momentary probe of it, short enough that a duplicate exits at once.
LOCK_WAIT_S = 0.5
GRACEFUL_SHUTDOWN_S = 10
OCCUPANT_PROBE_S = 3.0  # a busy machine: the other worker may still be importing its stack


class _StopBeforeServing(Exception):
    """SIGTERM/SIGINT arrived before the server took over signal handling."""


def _stop_before_serving(signum: int, frame: object) -> None:
    raise _StopBeforeServing(signum)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0 picks a free one)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        # Lets a restart reuse the port while old connections sit in TIME_WAIT; on Linux it
        # does not allow binding over a live listener, so a conflict still fails here.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


def _bind_own(host: str, port: int) -> socket.socket:
    """Listen on `port`; if another data dir's claude-mem worker holds it, on a free port.

    One worker per data dir: the pid file publishes the port taken, and this data dir's
    clients read it there, so neither memory ever reaches the other's worker.
    """
    try:
        return bind(host, port)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE or not port:
            raise
        health = lifecycle.probe(port, OCCUPANT_PROBE_S, host)
        if health is None or lifecycle.is_ours(health):
            raise
        foreign = lifecycle.WorkerInfo.from_health(health, port, host)
        sock = bind(host, 0)
        taken = sock.getsockname()[1]
        line = f"{lifecycle.foreign_line(foreign)}; this data dir's worker listens on {taken}"
        with contextlib.suppress(OSError):
            print(f"claude-mem worker: {line}", file=sys.stderr, flush=True)
        log.warn("worker", "configured port serves another data dir", port=port, listening=taken)
        return sock


def run(port: int | None = None, host: str | None = None) -> int:
    """Run the worker in the foreground until SIGTERM/SIGINT; the process exit code."""
    settings = load_settings()
    log.configure(
        settings.get_str("CLAUDE_MEM_LOG_LEVEL"), settings.get_int("CLAUDE_MEM_LOG_RETENTION_DAYS")
    )
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a closed terminal must not stop the worker
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _stop_before_serving)
    lock_fd = None
    try:
        # Don't hold on to the launcher's folder (it may be a project being deleted).
        os.chdir(paths.ensure_data_dir())
        lock_fd = lifecycle.acquire_instance_lock(wait_s=LOCK_WAIT_S)
        if lock_fd is None:
            other = lifecycle.read_pid_info() or {}
            print(
                "claude-mem worker is already running "
                f"(pid {other.get('pid', '?')}, port {other.get('port', '?')})"
            )
            return 0
        host = host or settings.get_str("CLAUDE_MEM_WORKER_HOST")
        port = settings.get_int("CLAUDE_MEM_WORKER_PORT") if port is None else port
        return _run_locked(host, port)
    except _StopBeforeServing:
        return 0
    except paths.DataDirError as exc:
        print(f"claude-mem worker: error: {exc}", file=sys.stderr)
        return 1
    finally:
        if lock_fd is not None:
            os.close(lock_fd)


def _run_locked(host: str, port: int) -> int:
    # We hold the lock, so any pid file is a previous worker's; no marker means it crashed.
    clean = lifecycle.consume_clean_shutdown()
    previous = lifecycle.read_pid_info()
    if previous is not None:
        if not clean:
            lifecycle.note_unclean_exit(previous)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lifecycle.pid_path())
    try:
        sock = _bind_own(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            problem = f"port {port} on {host} is already in use by another program"
        else:
            problem = f"cannot listen on {host}:{port} ({exc.strerror or exc})"
        print(
            f"claude-mem worker: {problem}; choose another port with CLAUDE_MEM_WORKER_PORT "
            f"(claude-mem settings set CLAUDE_MEM_WORKER_PORT <port>)",
            file=sys.stderr,
        )
        log.error("worker", "cannot listen", host=host, port=port, error=str(exc))
        return 1
    with sock:
        port = sock.getsockname()[1]
        try:
            lifecycle.write_pid_info(port, host)
            with contextlib.suppress(OSError):  # stdout may be a closed pipe; never fatal
                print(f"claude-mem worker on {host}:{port}, pid {os.getpid()}", flush=True)
            _serve(sock, port)
        except _StopBeforeServing:
            log.info("worker", "stopped before serving", pid=os.getpid())
        except BaseException as exc:
            log.error("worker", "worker failed", error=f"{type(exc).__name__}: {exc}")
            lifecycle.remove_pid_file()
            raise
    lifecycle.mark_clean_shutdown()
    lifecycle.remove_pid_file()
    return 0


def _serve(sock: socket.socket, port: int) -> None:
    import uvicorn  # noqa: PLC0415 - only after the lock and the port are ours

    from claude_mem.worker.app import create_app  # noqa: PLC0415

    # Not `settings`: the state loads them again now that the provider registry is imported,
    # so provider names are checked against the installed ones.
    app = create_app()
    app.state.worker.port = port
    config = uvicorn.Config(
        app,
        lifespan="on",
        log_level="warning",
        log_config=None,
        access_log=False,
        http="httptools",
        ws="none",
        server_header=False,
        proxy_headers=False,  # loopback only (security.refusal): no proxy to believe
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    stream = app.state.worker.stream

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Event streams (the viewer keeps one open) never end by themselves: close them
            # first, or every stop waits out the graceful timeout and then cancels them.
            stream.close()
            await super().shutdown(sockets)

    server = Server(config)
    # The start-up heap (the web stack, the app) lives as long as the process: kept out of the
    # collector's generations, a full collection no longer walks it during a request.
    gc.freeze()

    # From here a signal asks the server to stop. uvicorn installs its own handlers while it
    # serves, then restores these and re-raises the signal it caught: this handler makes that
    # re-raise harmless, so we still get to write the clean-shutdown marker.
    def request_exit(signum: int, frame: object) -> None:
        server.should_exit = True

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, request_exit)
    app.state.worker.request_shutdown = lambda: setattr(server, "should_exit", True)
    server.run(sockets=[sock])
