"""Finding, starting and stopping the one worker per data dir, with no state that can go stale.

Three files in the data dir, each answering one question:

- `worker.lock` — is a worker alive? The worker holds an exclusive flock on it for its whole
  life and the kernel drops it when the process dies, however it dies.
- `worker.pid` — which process, which port? It records the process start time too, so a
  recycled pid is never mistaken for the worker (and never sent a signal). Clients look for
  the worker on its port first: another data dir's worker may hold the configured one.
- `spawn.lock` — is a launcher starting one right now? Created with O_EXCL, so hooks that fire
  together start at most one worker; broken when its owner is dead or after 30 s.

Stdlib only and cheap to import: hooks call ensure_running() on demand.
"""

from __future__ import annotations

import os
import time

from claude_mem import __version__, locations
from claude_mem.hooks import jsonio
from claude_mem.hooks.forward import environment_digest
from claude_mem.settings import load as load_settings
from claude_mem.worker import interpreter
from claude_mem.worker.client import WorkerUnavailable, request, snippet

# Re-exported (the `as` spells that for mypy): callers and tests use lifecycle.<name>.
from claude_mem.worker.pidfile import pid_alive_and_ours as pid_alive_and_ours  # noqa: PLC0414
from claude_mem.worker.pidfile import pid_path as pid_path  # noqa: PLC0414
from claude_mem.worker.pidfile import proc_stat
from claude_mem.worker.pidfile import process_start_time as process_start_time  # noqa: PLC0414
from claude_mem.worker.pidfile import read_pid_info as read_pid_info  # noqa: PLC0414

TYPE_CHECKING = False  # importing `typing` shows in a hook; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

    from claude_mem.settings import Settings

SPAWN_LOCK_STALE_S = 30.0
POLL_S = 0.02
STDERR_LOG_MAX_BYTES = 1 << 20
UNCLEAN_MESSAGE = "previous worker did not shut down cleanly"

# Pids of workers this process started, reaped once they exit so a long-lived launcher
# leaves no zombies.
_spawned: list[int] = []


def lock_path() -> str:
    return locations.data_file("worker.lock")


def spawn_lock_path() -> str:
    return locations.data_file("spawn.lock")


def clean_shutdown_path() -> str:
    return locations.data_file(".worker-clean-shutdown")


def stderr_log_path() -> str:
    return os.path.join(locations.logs_dir(), "worker-stderr.log")


class WorkerInfo:
    """A worker that answered /api/health, as it described itself."""

    __slots__ = ("health", "host", "pid", "port", "ready", "version")

    def __init__(
        self,
        pid: int,
        port: int,
        version: str,
        ready: bool,
        *,
        host: str = "127.0.0.1",
        health: dict[str, Any] | None = None,
    ) -> None:
        self.pid, self.port, self.version, self.ready, self.host = pid, port, version, ready, host
        self.health = health or {}  # the whole /api/health answer

    @classmethod
    def from_health(cls, health: dict[str, Any], port: int, host: str) -> WorkerInfo:
        return cls(
            int(health["pid"]),
            int(health.get("port") or port),
            str(health["version"]),
            bool(health.get("ready")),
            host=host,
            health=health,
        )

    def __repr__(self) -> str:
        return (
            f"WorkerInfo(pid={self.pid}, port={self.port}, version={self.version!r}, "
            f"ready={self.ready}, host={self.host!r})"
        )


# --- process identity -------------------------------------------------------------------------


def _alive(pid: int) -> bool:
    """Whether `pid` exists as a running (not zombie) process, whoever owns it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = proc_stat(pid)
    return stat is None or stat[0] not in ("Z", "X")


def _reap(pid: int) -> None:
    """Collect `pid`'s exit status if it is our child, so it doesn't linger as a zombie."""
    if pid in _spawned:
        _child_exited(pid)
        return
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return  # not our child: its own parent (or init) collects it


# --- pid file ---------------------------------------------------------------------------------


def write_pid_info(port: int, host: str) -> dict[str, Any]:
    """Publish this process as the worker on `host`:`port` (atomic: readers never see half a
    file)."""
    pid = os.getpid()
    info = {
        "pid": pid,
        "host": host,
        "port": port,
        "env": environment_digest(os.environ),  # whether a hook may hand this worker its event
        "version": __version__,
        "start_time": process_start_time(pid),
        "started_at": time.time(),
    }
    locations.write_private_file(pid_path(), jsonio.dumps(info) + "\n")
    return info


def remove_pid_file(pid: int | None = None) -> None:
    """Remove the pid file only if it still names `pid` (default: this process)."""
    info = read_pid_info()
    if info is not None and info["pid"] == (pid or os.getpid()):
        _unlink(pid_path())


def note_unclean_exit(info: dict[str, Any]) -> None:
    """Record in the log that the worker in `info` died without its clean shutdown."""
    from claude_mem import log  # noqa: PLC0415 - rare path; keeps the hook import light

    log.warn(
        "worker",
        UNCLEAN_MESSAGE,
        pid=info.get("pid"),
        port=info.get("port"),
        started_at=info.get("started_at"),
        noticed_by=os.getpid(),
    )


def _unlink(path: str) -> None:
    """Remove `path` if it is there (Path.unlink(missing_ok=True) without pathlib)."""
    try:  # noqa: SIM105 - contextlib is more import than the hook path should pay
        os.unlink(path)
    except FileNotFoundError:
        pass


def clear_stale_pid_file() -> bool:
    """Remove a pid file whose process is dead or recycled; True if one was removed.

    A worker that stops cleanly removes its own pid file, so a stale one means it crashed (or
    was killed): that is logged here unless the clean-shutdown marker says otherwise.
    """
    path = pid_path()
    if not os.path.exists(path):
        return False
    info = read_pid_info()
    if info is not None and pid_alive_and_ours(info):
        return False
    _unlink(path)
    if info is not None and not os.path.exists(clean_shutdown_path()):
        note_unclean_exit(info)
    return True


def mark_clean_shutdown() -> None:
    locations.write_private_file(clean_shutdown_path(), f"{time.time()}\n")


def consume_clean_shutdown() -> bool:
    """Remove the clean-shutdown marker; True if the previous worker had left it."""
    try:
        os.unlink(clean_shutdown_path())
    except FileNotFoundError:
        return False
    return True


# --- locks ------------------------------------------------------------------------------------


def acquire_instance_lock(wait_s: float = 0.0) -> int | None:
    """Take the single-instance lock for this process's lifetime: its fd, or None if held.

    `wait_s` rides out a launcher's momentary probe (worker_lock_held) of the same lock.
    """
    import fcntl  # noqa: PLC0415 - POSIX only; keeps the module importable elsewhere

    locations.ensure_data_dir()
    fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT, locations.FILE_MODE)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(POLL_S)


def worker_lock_held() -> bool:
    """Whether some worker process is alive for this data dir (it holds the instance lock)."""
    import fcntl  # noqa: PLC0415

    try:
        fd = os.open(lock_path(), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the shared lock if we got it
    return False


class SpawnLockTimeout(TimeoutError):
    """Another launcher held the spawn lock for longer than we were willing to wait."""


def _read_json(path: str) -> Any:
    try:
        with open(path, "rb") as handle:
            return jsonio.loads(handle.read())
    except (OSError, ValueError):
        return None


def _break_stale_spawn_lock(path: str) -> bool:
    """Remove the spawn lock if its owner is dead or it is too old; True if it is gone."""
    try:
        age = time.time() - os.stat(path).st_mtime
    except FileNotFoundError:
        return True
    holder = _read_json(path)
    pid = holder.get("pid") if isinstance(holder, dict) else None
    owner_dead = isinstance(pid, int) and pid > 0 and not _alive(pid)
    if not owner_dead and age <= SPAWN_LOCK_STALE_S:
        return False
    # Rename, then check what we took: if a fresh lock had replaced the stale one in between,
    # put it back (link fails if yet another exists), so a live owner never loses its lock.
    folder, name = os.path.split(path)
    grave = os.path.join(folder, f".{name}.{os.getpid()}.stale")
    try:
        os.rename(path, grave)
    except FileNotFoundError:
        return True
    restore = _read_json(grave) != holder
    try:
        if restore:
            os.link(grave, path)
    except OSError:
        restore = False  # yet another lock exists by now: that one stands
    _unlink(grave)
    return not restore


class spawn_lock:
    """Held by the one launcher that starts a worker; the others wait, then find it running."""

    def __init__(self, timeout: float = 10.0) -> None:
        self.timeout = timeout
        self.owner: dict[str, Any] | None = None

    def __enter__(self) -> spawn_lock:
        path = spawn_lock_path()
        locations.ensure_data_dir()
        deadline = time.monotonic() + self.timeout
        owner = {"pid": os.getpid(), "created_at": time.time()}
        while True:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, locations.FILE_MODE)
            except FileExistsError:
                if _break_stale_spawn_lock(path):
                    continue
                if time.monotonic() >= deadline:
                    raise SpawnLockTimeout(f"{path} is held by another launcher") from None
                time.sleep(POLL_S)
                continue
            try:
                os.write(fd, jsonio.dumps(owner).encode())
            finally:
                os.close(fd)
            self.owner = owner
            return self

    def __exit__(self, *exc_info: object) -> None:
        path = spawn_lock_path()
        if self.owner is not None and _read_json(path) == self.owner:
            _unlink(path)
        self.owner = None


# --- finding, starting, stopping --------------------------------------------------------------


def _knock(port: int, timeout: float, host: str) -> tuple[dict[str, Any] | None, str | None]:
    """(health, None) from a claude-mem worker; (None, what answered) from another program;
    (None, None) when nothing answers on `port`."""
    try:
        response = request("GET", "/api/health", port=port, host=host, timeout=timeout)
    except WorkerUnavailable as exc:
        if isinstance(exc.__cause__, ConnectionRefusedError):
            return None, None
        return None, f"no HTTP answer: {exc.__cause__ or exc}"
    try:
        data = jsonio.loads(response.body) if response.status == 200 else None
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("pid"), int) and "version" in data:
        return data, None
    return None, f"HTTP {response.status}: {snippet(response.body) or 'no body'}"


def probe(port: int, timeout: float = 0.5, host: str = "127.0.0.1") -> dict[str, Any] | None:
    """The worker's /api/health answer, or None if nothing healthy answers on `port`."""
    return _knock(port, timeout, host)[0]


def is_ours(health: dict[str, Any]) -> bool:
    """Whether the worker that gave this /api/health answer serves this data dir."""
    ident = health.get("data_dir_id")
    if isinstance(ident, str):
        return ident == locations.data_dir_id()
    info = read_pid_info()  # a worker too old to say: ours only if our pid file names it
    return info is not None and info["pid"] == health.get("pid")


def address(settings: Settings | None = None) -> tuple[str, int]:
    """(host, port) the worker should listen on, from settings (env overrides the file)."""
    settings = settings or load_settings()
    return settings.get_str("CLAUDE_MEM_WORKER_HOST"), settings.get_int("CLAUDE_MEM_WORKER_PORT")


def serving_dir(worker: WorkerInfo) -> str | None:
    """The data dir another claude-mem worker serves (its cwd, checked against its id)."""
    try:
        where = os.readlink(f"/proc/{worker.pid}/cwd")
    except OSError:
        return None
    return where if locations.data_dir_id(where) == worker.health.get("data_dir_id") else None


class Lookup:
    """Who answers for this data dir: its own worker, or what stands in the way on the port."""

    __slots__ = ("foreign", "host", "other", "ours", "port")

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.ours: WorkerInfo | None = None
        self.foreign: WorkerInfo | None = None  # a claude-mem worker of another data dir
        self.other: str | None = None  # what a program that is no claude-mem worker answered

    def problem(self) -> str | None:
        """One line on what answers on the configured port instead of our worker, and the fix."""
        if self.foreign is not None:
            return (
                f"{foreign_line(self.foreign)}; `claude-mem worker start` starts this data "
                "dir's own worker on a free port, or set CLAUDE_MEM_WORKER_PORT to another "
                "port for one of them"
            )
        if self.other is not None:
            return (
                f"something else (not a claude-mem worker) answers on {self.host}:{self.port} "
                f"({self.other}); set CLAUDE_MEM_WORKER_PORT to a free port "
                "(claude-mem settings set CLAUDE_MEM_WORKER_PORT <port>)"
            )
        return None


def foreign_line(worker: WorkerInfo) -> str:
    """`port P is served by the claude-mem worker for A (pid N), not for B`."""
    theirs = serving_dir(worker) or (
        f"another data dir (id {worker.health.get('data_dir_id') or 'unknown'})"
    )
    return (
        f"port {worker.port} is served by the claude-mem worker for {theirs} "
        f"(pid {worker.pid}), not for {locations.data_dir()}"
    )


def lookup(settings: Settings | None = None, timeout: float = 0.5) -> Lookup:
    """This data dir's worker, on the port its pid file records or the configured one; else
    what answers on the configured port instead."""
    host, port = address(settings)
    found = Lookup(host, port)
    info = read_pid_info()
    recorded = info.get("port") if info and pid_alive_and_ours(info) else None
    for candidate in dict.fromkeys((recorded, port)):
        if not isinstance(candidate, int) or isinstance(candidate, bool) or candidate <= 0:
            continue
        health, other = _knock(candidate, timeout, host)
        if health is not None and is_ours(health):
            found.ours = WorkerInfo.from_health(health, candidate, host)
            return found
        if candidate == port:
            found.other = other
            if health is not None:
                found.foreign = WorkerInfo.from_health(health, candidate, host)
    return found


def find_running(settings: Settings | None = None, timeout: float = 0.5) -> WorkerInfo | None:
    """This data dir's healthy worker (never another data dir's), or None."""
    return lookup(settings, timeout).ours


def ready_with_token(timeout: float = 0.5) -> tuple[WorkerInfo, str] | None:
    """This data dir's worker, ready for data routes, and the API token to call it; None when
    there is none (what the CLI's commands that prefer the worker ask first)."""
    from claude_mem.worker.token import read_token  # noqa: PLC0415 - not on the hook path

    found = find_running(timeout=timeout)
    token = read_token()
    if found is None or not found.ready or token is None:
        return None
    return found, token


def _spawn(host: str, port: int) -> int:
    """Start a detached worker: own session, stdin/stdout on /dev/null, stderr to a file.

    posix_spawn, not subprocess: nothing but fds 0-2 is inherited (Python's own fds are
    non-inheritable), no Popen object outlives the launcher, and hooks skip importing
    subprocess.
    """
    log_file = stderr_log_path()
    locations.ensure_dir(os.path.dirname(log_file))
    err = os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, locations.FILE_MODE)
    try:
        if os.fstat(err).st_size > STDERR_LOG_MAX_BYTES:
            os.ftruncate(err, 0)
        python = interpreter.path()
        argv = [python, "-m", "claude_mem.worker", "run", "--host", host]
        pid = os.posix_spawn(
            python,
            [*argv, "--port", str(port)],
            dict(os.environ),
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_DUP2, err, 2),
            ],
            setsid=True,
        )
    finally:
        os.close(err)
    _spawned.append(pid)
    return pid


def _child_exited(pid: int) -> bool:
    """True (and reaped) if `pid`, a worker this process spawned, has exited."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        done = pid
    if done:
        if pid in _spawned:
            _spawned.remove(pid)
        return True
    return False


def _await_health(settings: Settings, deadline: float, proc: int | None) -> WorkerInfo | None:
    while True:
        found = find_running(settings, timeout=max(0.05, min(1.0, deadline - time.monotonic())))
        if found is not None:
            return found
        if proc is not None and _child_exited(proc):
            proc = None  # it exited (port taken, or another worker won the lock)
            if not worker_lock_held():
                return None
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_S)


def ensure_running(settings: Settings | None = None, *, wait_s: float = 5.0) -> WorkerInfo | None:
    """The running worker, starting one if none is alive; None if none is healthy in `wait_s`.

    Starts at most one process per call and none while a worker process is alive but not
    (yet) answering: a wedged worker is reported, never answered with a restart storm. Never
    raises for an unusable data dir or a failed spawn (hooks must not break): logs, then None.
    """
    settings = settings or load_settings()
    host, port = address(settings)
    found = find_running(settings)
    if found is not None:
        if not _should_replace(found.health):
            return found
        stop()
    for pid in list(_spawned):
        _child_exited(pid)
    deadline = time.monotonic() + wait_s
    lock = spawn_lock(timeout=wait_s)
    try:
        lock.__enter__()
    except SpawnLockTimeout:
        return find_running(settings)
    except OSError as exc:
        _start_failed(exc)
        return None
    try:
        found = find_running(settings)
        if found is not None:
            return found
        proc = None
        if not worker_lock_held():
            clear_stale_pid_file()
            proc = _spawn(host, port)
        return _await_health(settings, deadline, proc)
    except OSError as exc:
        _start_failed(exc)
        return None
    finally:
        lock.__exit__(None, None, None)


RESTART_MEMORY_S = 600.0


def restart_marker_path() -> str:
    return locations.state_file("version-restart.json")


def _should_replace(health: dict[str, Any]) -> bool:
    """True once per (old, new) version pair when the running worker is another version.

    The request is remembered for ten minutes, so a worker that comes back at the old
    version (say, an older install answering) is used as it is rather than restarted again.
    """
    running = str(health.get("version", ""))
    if not running or running == __version__:
        return False
    marker = _read_json(restart_marker_path())
    if (
        isinstance(marker, dict)
        and marker.get("from") == running
        and marker.get("to") == __version__
        and time.time() - float(marker.get("at", 0)) < RESTART_MEMORY_S
    ):
        return False
    record = {"from": running, "to": __version__, "at": time.time()}
    locations.write_private_file(restart_marker_path(), jsonio.dumps(record))
    from claude_mem import log  # noqa: PLC0415

    log.info("worker", "restarting an older worker once", running=running, installed=__version__)
    return True


def _start_failed(exc: OSError) -> None:
    from claude_mem import log  # noqa: PLC0415

    log.error("worker", "could not start the worker", error=f"{type(exc).__name__}: {exc}")


def stop(timeout: float = 10.0) -> bool:
    """Stop the pid file's worker (SIGTERM, then SIGKILL after `timeout`); True if one was."""
    import signal  # noqa: PLC0415

    info = read_pid_info()
    if info is None or not pid_alive_and_ours(info):
        clear_stale_pid_file()
        return False
    pid = info["pid"]
    if _send(pid, signal.SIGTERM) and not _wait_gone(info, timeout):
        from claude_mem import log  # noqa: PLC0415

        log.warn("worker", "worker did not stop in time; killing it", pid=pid, timeout_s=timeout)
        if _send(pid, signal.SIGKILL):
            _wait_gone(info, 5.0)
    remove_pid_file(pid)
    return True


def _send(pid: int, signum: int) -> bool:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        return False
    return True


def _wait_gone(info: dict[str, Any], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        _reap(info["pid"])
        if not pid_alive_and_ours(info):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
