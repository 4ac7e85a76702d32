"""`claude-mem resume [--session ID | --all]`: capture again after `claude-mem pause` or `#nomem`.

Without options the most recent session resumes; `--all` lifts every pause, the global one and
each session's.
"""

from __future__ import annotations

import argparse

from claude_mem.commands.pause import NoSession, target_session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--session", metavar="ID", help="as for pause (default: the most recent session)"
    )
    scope.add_argument("--all", action="store_true", help="lift every pause")


def run(args: argparse.Namespace) -> int:
    from claude_mem import control

    if args.all:
        lifted = control.resume()
        print(
            "claude-mem: capture resumed everywhere" if lifted else "claude-mem: nothing was paused"
        )
        return 0
    try:
        host_id, label = target_session(args.session)
    except NoSession as exc:
        print(f"claude-mem: {exc}")
        return 1
    if control.resume(host_id):
        print(f"claude-mem: capture resumed for {label}")
    elif control.pauses()["all"] is not None:
        print(f"claude-mem: {label} was not paused itself; all capture is (`--all` to resume)")
    else:
        print(f"claude-mem: {label} was not paused")
    return 0
