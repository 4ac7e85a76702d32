"""`claude-mem pause [--session ID | --all]`: stop capturing one session, or everything.

Without options the session still going that saw an event last is paused (the one you are most
likely in). A paused session keeps its memory and still gets context; nothing new is recorded
until `claude-mem resume`. A prompt containing `#nomem` pauses its own session the same way.

Sessions are named by the agent's own session id everywhere (here, in `resume`, `forget` and
`claude-mem status`; see `session_names`): it is what the pause is keyed on, and what
`--session` takes back.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from claude_mem.commands.session_names import SESSION_HELP, NoSession, label, named_session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--session",
        metavar="ID",
        help=f"{SESSION_HELP} (default: the most recent session that has not ended)",
    )
    scope.add_argument("--all", action="store_true", help="every session, new ones too")


def _row(given: str | None) -> dict[str, Any]:
    """The stored session `given` names, or the latest active one."""
    from claude_mem.store.db import open_database
    from claude_mem.store.sessions import latest_active_session

    with open_database() as db:
        conn = db.read()
        if given is not None:
            return named_session(conn, given)
        row = latest_active_session(conn)
    if row is None:
        raise NoSession("no active session (none recorded, or all ended); "
                        "give --session ID or --all")  # fmt: skip
    return row


def target_session(given: str | None) -> tuple[str, str]:
    """(the agent's session id, a label for people) for `--session` or the latest active one."""
    row = _row(given)
    return str(row["host_session_id"]), label(row)


def resume_command(host_id: str) -> str:
    """The command that lifts exactly this session's pause."""
    return shlex.join(["claude-mem", "resume", "--session", host_id])


def run(args: argparse.Namespace) -> int:
    from claude_mem import control

    if args.all:
        control.pause()
        print("claude-mem: capture paused for every session (`claude-mem resume --all` to undo)")
        return 0
    try:
        host_id, label = target_session(args.session)
    except NoSession as exc:
        print(f"claude-mem pause: {exc}", file=sys.stderr)
        return 1
    control.pause(host_id)
    print(f"claude-mem: capture paused for {label} (`{resume_command(host_id)}` to undo)")
    return 0
