"""`claude-mem settings`: list, get or set settings, validated like the worker does.

Values are written as settings.json and the README write them (`true`/`false`). The worker's
port is the one it really listens on (its pid file) when that differs from the settings.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from claude_mem.settings import Settings

PORT = "CLAUDE_MEM_WORKER_PORT"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.add_parser(
        "list", help="every setting with its value and where it came from (the running "
        "worker's port if it listens elsewhere)"
    )  # fmt: skip
    get = actions.add_parser("get", help="one setting's value, as `list` shows it")
    get.add_argument("key", help="the setting's name, in any case")
    put = actions.add_parser(
        "set", help="change a setting in settings.json; a running worker applies it at once, or "
        "the command says it needs a restart"
    )  # fmt: skip
    put.add_argument("key", help="the setting's name, in any case")
    put.add_argument("value")


def run(args: argparse.Namespace) -> int:
    import sys

    from claude_mem import settings
    from claude_mem.pipeline import registry  # noqa: F401 - provider names are checked too

    if args.action in ("get", "set"):
        try:
            key = settings.spec_for(args.key).key
            if args.action == "set":
                settings.save({key: args.value})
        except settings.SettingsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    loaded = settings.load()
    settings.warn(loaded)
    if args.action == "set":
        print(f"{key} = {settings.format_value(loaded.public()[key])}")
        for note in _notes(key, loaded):
            print(note)
        return 0
    shown = _effective(loaded)
    if args.action == "get":
        print(shown[key][0])
        return 0
    for name, (value, source) in shown.items():
        print(f"{name}={value}  ({source})")
    return 0


def _effective(loaded: Settings) -> dict[str, tuple[str, str]]:
    """Each setting's value as shown and where it comes from; the port the worker really
    listens on when it differs (set elsewhere, or changed since it started)."""
    from claude_mem import settings

    shown = {
        key: (settings.format_value(value), loaded.sources[key])
        for key, value in loaded.public().items()
    }
    worker = _running_worker()
    port = worker.get("port") if worker is not None else None
    if worker is not None and isinstance(port, int) and port != loaded[PORT]:
        configured, source = shown[PORT]
        shown[PORT] = (
            str(port),
            f"running worker, pid {worker['pid']}; settings say {configured} ({source}), "
            "used once it restarts",
        )
    return shown


def _notes(key: str, loaded: Settings) -> list[str]:
    """What stands between a saved value and the running worker: the environment, a restart."""
    from claude_mem import settings

    notes = []
    if loaded.sources[key] == "env":
        notes.append(f"note: {key} is also set in the environment, which overrides settings.json")
    worker = _running_worker()
    if worker is not None and settings.SPECS[key].restart:
        notes.append(
            f"the running worker (pid {worker['pid']}) reads {key} only when it starts; "
            "restart the worker: claude-mem worker restart"
        )
    return notes


def _running_worker() -> dict[str, Any] | None:
    """This data dir's worker as its pid file describes it, if that process still runs."""
    from claude_mem.worker import lifecycle

    info = lifecycle.read_pid_info()
    return info if info is not None and lifecycle.pid_alive_and_ours(info) else None
