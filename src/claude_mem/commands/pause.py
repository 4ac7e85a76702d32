"""`claude-mem pause [--session ID | --all]`: stop capturing one session, or everything.

Without options the most recent session is paused (the one you are most likely in). A paused
session keeps its memory and still gets context; nothing new is recorded until `claude-mem
resume`. A prompt containing `#nomem` pauses its own session the same way.
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--session",
        metavar="ID",
        help="a session id as the viewer and API show it, or the agent's own session id "
        "(default: the most recent session)",
    )
    scope.add_argument("--all", action="store_true", help="every session, new ones too")


class NoSession(Exception):
    """The session to act on cannot be found."""


def target_session(given: str | None) -> tuple[str, str]:
    """(the agent's session id, a label for people) for `--session` or the most recent one."""
    from claude_mem.store.db import open_database
    from claude_mem.store.sessions import get_session, list_sessions

    with open_database() as db:
        conn = db.read()
        if given is None:
            rows = list_sessions(conn, limit=1)
            if not rows:
                raise NoSession("no session recorded yet; give --session ID or --all")
            row = rows[0]
        elif given.isdigit() and (found := get_session(conn, int(given))) is not None:
            row = found
        else:
            return given, f"session {given}"
    return str(row["host_session_id"]), f"session {row['id']} ({row['project']}, {row['platform']})"


def run(args: argparse.Namespace) -> int:
    from claude_mem import control

    if args.all:
        control.pause()
        print("claude-mem: capture paused for every session (`claude-mem resume --all` to undo)")
        return 0
    try:
        host_id, label = target_session(args.session)
    except NoSession as exc:
        print(f"claude-mem: {exc}")
        return 1
    control.pause(host_id)
    print(f"claude-mem: capture paused for {label} (`claude-mem resume` to undo)")
    return 0
