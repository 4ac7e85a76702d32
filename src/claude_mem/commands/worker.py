"""`claude-mem worker start|stop|restart|status|run`: manage the one background worker."""

from __future__ import annotations

import argparse

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
        print(
            f"worker did not become healthy within {START_WAIT_S:.0f} s; "
            f"see {lifecycle.stderr_log_path()} and `claude-mem logs`",
            file=sys.stderr,
        )
        return 1
    state = "" if info.ready else " (store still opening)"
    print(f"worker running: pid {info.pid}, port {info.port}, version {info.version}{state}")
    return 0


def _stop() -> None:
    from claude_mem.worker import lifecycle

    pid_info = lifecycle.read_pid_info()
    if lifecycle.stop():
        print(f"worker stopped (pid {pid_info['pid'] if pid_info else '?'})")
    else:
        print("no worker was running")


def _status(as_json: bool) -> int:
    import json

    from claude_mem.worker import lifecycle

    host, port = lifecycle.address()
    found = lifecycle.find_running()
    health = found.health if found else None
    pid_info = lifecycle.read_pid_info()
    alive = pid_info is not None and lifecycle.pid_alive_and_ours(pid_info)
    if as_json:
        if health is not None:
            print(json.dumps({"running": True, **health}, indent=2))
        else:
            print(json.dumps({"running": False, "pid": pid_info["pid"] if alive else None}))
        return 0
    if health is None:
        if alive and pid_info is not None:
            print(
                f"worker process {pid_info['pid']} is alive but not answering "
                f"on {host}:{pid_info.get('port')}"
            )
        else:
            print(f"worker not running (port {port})")
        return 0
    ready = "yes" if health.get("ready") else f"no ({health.get('error') or 'store opening'})"
    print(f"worker    running, pid {health['pid']}, port {health.get('port')}")
    print(f"version   {health.get('version')}")
    print(f"uptime    {float(health.get('uptime_s') or 0):.1f} s")
    print(f"ready     {ready}")
    return 0
