"""`claude-mem resume [--session ID | --all]`: capture again after `claude-mem pause` or `#nomem`.

Without options it undoes the pause you most likely mean: `pause --all` when that is on (sessions
paused one by one stay paused, and are named), else the session paused last, else the most
recent session that has not ended. `--all` lifts every pause, the global one and each session's.
"""

from __future__ import annotations

import argparse
import sys

from claude_mem.commands.pause import target_session
from claude_mem.commands.session_names import SESSION_HELP, NoSession


def add_arguments(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--session",
        metavar="ID",
        help=f"{SESSION_HELP} (default: all capture after `pause --all`, else the session "
        "paused last)",
    )
    scope.add_argument("--all", action="store_true", help="lift every pause")


def _target(given: str | None, paused: list[str]) -> tuple[str, str]:
    """A paused id is taken as it is, and so is the start of one that names no stored session
    (a `#nomem` session may not be stored yet)."""
    if given is None and paused:
        given = paused[-1]  # pauses are kept oldest first
    if given is not None and given in paused:
        try:
            return target_session(given)
        except NoSession:
            return given, f"session {given}"
    try:
        return target_session(given)
    except NoSession:
        starting = [host_id for host_id in paused if given and host_id.startswith(given)]
        if len(starting) != 1:
            raise
        return starting[0], f"session {starting[0]}"


def _lift_global(still: list[str]) -> None:
    print("claude-mem: capture resumed for every session (the `pause --all` is lifted)")
    if still:
        print(f"still paused on their own: {', '.join(still)} "
              "(`claude-mem resume --session ID`, or `--all`)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from claude_mem import control

    state = control.pauses()
    if args.all:
        lifted = control.resume()
        print(
            "claude-mem: capture resumed everywhere" if lifted else "claude-mem: nothing was paused"
        )
        return 0
    paused = list(state["sessions"])
    if args.session is None and control.lift_global():
        _lift_global(paused)
        return 0
    try:
        host_id, label = _target(args.session, paused)
    except NoSession as exc:
        print(f"claude-mem resume: {exc}", file=sys.stderr)
        return 1
    if control.resume(host_id):
        print(f"claude-mem: capture resumed for {label}")
    elif state["all"] is not None:
        print(f"claude-mem: {label} was not paused itself; all capture is "
              "(`claude-mem resume` lifts that)")  # fmt: skip
    else:
        print(f"claude-mem: {label} was not paused")
    return 0
