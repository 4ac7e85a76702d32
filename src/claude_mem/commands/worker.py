"""`claude-mem worker start|stop|restart|status|run`: manage the one background worker."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from claude_mem.worker.lifecycle import WorkerInfo

START_WAIT_S = 10.0


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port number (0-65535)")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=["start", "stop", "restart", "status", "run"],
        help="start/stop/restart the background worker, show its status, "
        "or run it in the foreground",
    )
    parser.epilog = (
        "Each data dir (CLAUDE_MEM_DATA_DIR) has its own worker; when another data dir's "
        "worker holds CLAUDE_MEM_WORKER_PORT, this one listens on a free port, recorded in "
        "worker.pid. `status` exits 0 when this data dir's worker answers and 1 when it "
        "does not (not running, or something else holds the port)."
    )
    parser.add_argument("--json", action="store_true", help="status: machine-readable JSON")
    parser.add_argument("--port", type=_port, help="run: port (default CLAUDE_MEM_WORKER_PORT)")
    parser.add_argument("--host", help="run: loopback address (default CLAUDE_MEM_WORKER_HOST)")


def run(args: argparse.Namespace) -> int:
    if args.action == "run":
        from claude_mem.worker.main import run as run_worker

        return run_worker(port=args.port, host=args.host)
    if args.action == "status":
        return _status(args.json)
    if args.action in ("stop", "restart"):
        _stop()
        if args.action == "stop":
            return 0
    return _start()


def _start() -> int:
    import sys

    from claude_mem.worker import lifecycle

    info = lifecycle.ensure_running(wait_s=START_WAIT_S)
    if info is None:
        problem = lifecycle.lookup().problem()
        print(
            f"error: {problem}"
            if problem
            else f"worker did not become healthy within {START_WAIT_S:.0f} s; "
            f"see {lifecycle.stderr_log_path()} and `claude-mem logs`",
            file=sys.stderr,
        )
        return 1
    state = "" if info.ready else " (store still opening)"
    print(f"worker running: pid {info.pid}, port {info.port}, version {info.version}{state}")
    _note_moved(info)
    return 0


def _note_moved(info: WorkerInfo) -> None:
    """Say so when this data dir's worker is not on the configured port, and why."""
    from claude_mem.worker import lifecycle

    host, port = lifecycle.address()
    if info.port == port:
        return
    health = lifecycle.probe(port, 0.5, host)
    if health is not None and not lifecycle.is_ours(health):
        holder = lifecycle.foreign_line(lifecycle.WorkerInfo.from_health(health, port, host))
        print(f"note: {holder}; this data dir's worker listens on {info.port}")
    else:
        print(f"note: CLAUDE_MEM_WORKER_PORT is {port}; `claude-mem worker restart` moves it")


def _stop() -> None:
    from claude_mem import paths
    from claude_mem.worker import lifecycle

    pid_info = lifecycle.read_pid_info()
    if lifecycle.stop():
        print(f"worker stopped (pid {pid_info['pid'] if pid_info else '?'})")
    else:
        print(f"no worker was running for {paths.data_dir()}")


def _status(as_json: bool) -> int:
    """Exit 0 when this data dir's worker answers, 1 when it does not (`systemctl status`)."""
    import json

    from claude_mem import paths
    from claude_mem.worker import lifecycle

    found = lifecycle.lookup()
    pid_info = lifecycle.read_pid_info()
    alive = pid_info is not None and lifecycle.pid_alive_and_ours(pid_info)
    if found.ours is None:
        problem = found.problem()
        if as_json:
            pid = pid_info["pid"] if alive and pid_info is not None else None
            print(json.dumps({"running": False, "pid": pid, "problem": problem}))
        elif alive and pid_info is not None:
            print(
                f"worker process {pid_info['pid']} is alive but not answering "
                f"on {found.host}:{pid_info.get('port')}"
            )
        else:
            print(f"worker not running for {paths.data_dir()} (port {found.port})")
        if problem and not as_json:
            print(problem)
        return 1
    health = found.ours.health
    if as_json:
        print(json.dumps({"running": True, **health}, indent=2))
        return 0
    ready = "yes" if health.get("ready") else f"no ({health.get('error') or 'store opening'})"
    print(f"worker    running, pid {health['pid']}, port {found.ours.port}")
    print(f"version   {health.get('version')}")
    print(f"uptime    {float(health.get('uptime_s') or 0):.1f} s")
    print(f"ready     {ready}")
    _note_moved(found.ours)
    return 0
