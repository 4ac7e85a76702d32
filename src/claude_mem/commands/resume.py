"""`claude-mem resume [--session ID | --all]`: capture again after `claude-mem pause` or `#nomem`.

Without options the session paused last resumes (or, with none paused, the most recent session
that has not ended); `--all` lifts every pause, the global one and each session's.
"""

from __future__ import annotations

import argparse
import sys

from claude_mem.commands.pause import SESSION_HELP, NoSession, target_session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--session",
        metavar="ID",
        help=f"{SESSION_HELP}, as `claude-mem status` lists the paused ones "
        "(default: the session paused last)",
    )
    scope.add_argument("--all", action="store_true", help="lift every pause")


def _target(given: str | None, paused: list[str]) -> tuple[str, str]:
    """A paused id is taken as it is (a `#nomem` session may not be stored yet)."""
    if given is None and paused:
        given = paused[-1]  # pauses are kept oldest first
    if given is not None and given in paused:
        try:
            return target_session(given)
        except NoSession:
            return given, f"session {given}"
    return target_session(given)


def run(args: argparse.Namespace) -> int:
    from claude_mem import control

    state = control.pauses()
    if args.all:
        lifted = control.resume()
        print(
            "claude-mem: capture resumed everywhere" if lifted else "claude-mem: nothing was paused"
        )
        return 0
    try:
        host_id, label = _target(args.session, list(state["sessions"]))
    except NoSession as exc:
        print(f"claude-mem resume: {exc}", file=sys.stderr)
        return 1
    if control.resume(host_id):
        print(f"claude-mem: capture resumed for {label}")
    elif state["all"] is not None:
        print(f"claude-mem: {label} was not paused itself; all capture is (`--all` to resume)")
    else:
        print(f"claude-mem: {label} was not paused")
    return 0
