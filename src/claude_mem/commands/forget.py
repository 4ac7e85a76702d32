"""`claude-mem forget --observation ID | --session ID | --project NAME [--yes]`.

Deletes for good, after showing what goes and asking (unless `--yes`); full-text and vector
rows go with the records. Works on the database directly, worker running or not. A session is
named as in `pause` and `resume` (the agent's session id, its start, or the viewer's number).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from claude_mem.commands.session_names import SESSION_HELP, NoSession, named_session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--observation", type=int, metavar="ID", help="one observation")
    what.add_argument(
        "--session", metavar="ID", help=f"a session and all its records: {SESSION_HELP}"
    )
    what.add_argument("--project", metavar="NAME", help="every session of a project (exact name)")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")


def _describe(conn: Any, args: argparse.Namespace, session: dict[str, Any] | None) -> str | None:
    """What would be deleted, for the confirmation; None when there is nothing."""
    from claude_mem.store.forget import project_counts
    from claude_mem.store.observations import get_observation
    from claude_mem.store.rows import of_session
    from claude_mem.store.stats import describe
    from claude_mem.text import counted

    if args.observation is not None:
        obs = get_observation(conn, args.observation)
        return None if obs is None else f"observation {obs['id']}: {obs['title'] or 'Untitled'}"
    if session is not None:
        count = len(of_session(conn, "observations", session["id"]))
        return (
            f"session {session['host_session_id']} ({session['project']}, "
            f"{counted(session['prompt_count'], 'prompt')}, {counted(count, 'observation')})"
        )
    counts = project_counts(conn, args.project)
    if not any(counts.values()):
        return None
    return f"project {args.project}: {describe(counts)}"


def _delete(conn: Any, args: argparse.Namespace, session: dict[str, Any] | None) -> None:
    from claude_mem.store.forget import forget_project
    from claude_mem.store.observations import delete_observation
    from claude_mem.store.sessions import delete_session

    if args.observation is not None:
        delete_observation(conn, args.observation)
    elif session is not None:
        delete_session(conn, session["id"])
    else:
        forget_project(conn, args.project)


def _confirmed(what: str) -> bool:
    if not sys.stdin.isatty():
        print("claude-mem: not a terminal; add --yes to confirm", file=sys.stderr)
        return False
    try:
        answer = input(f"Forget {what}? This cannot be undone. [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def run(args: argparse.Namespace) -> int:
    from claude_mem.store.db import open_database

    with open_database() as db:
        try:
            session = None if args.session is None else named_session(db.read(), args.session)
        except NoSession as exc:
            print(f"claude-mem forget: {exc}", file=sys.stderr)
            return 1
        what = _describe(db.read(), args, session)
        if what is None:
            print("claude-mem: nothing to forget (no such record)", file=sys.stderr)
            return 1
        if not args.yes and not _confirmed(what):
            print("claude-mem: nothing forgotten")
            return 1
        with db.write() as conn:
            _delete(conn, args, session)
    print(f"claude-mem: forgot {what}")
    return 0
