"""`claude-mem forget --observation ID | --session ID | --project NAME [--yes]`.

Deletes for good, after showing what goes and asking (unless `--yes`); full-text and vector
rows go with the records. Works on the database directly, worker running or not.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--observation", type=int, metavar="ID", help="one observation")
    what.add_argument("--session", type=int, metavar="ID", help="a session and all its records")
    what.add_argument("--project", metavar="NAME", help="every session of a project (exact name)")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")


def _describe(conn: Any, args: argparse.Namespace) -> str | None:
    """What would be deleted, for the confirmation; None when there is nothing."""
    from claude_mem.store.forget import project_counts
    from claude_mem.store.observations import get_observation
    from claude_mem.store.rows import of_session
    from claude_mem.store.sessions import get_session

    if args.observation is not None:
        obs = get_observation(conn, args.observation)
        return None if obs is None else f"observation {obs['id']}: {obs['title'] or 'Untitled'}"
    if args.session is not None:
        row = get_session(conn, args.session)
        if row is None:
            return None
        count = len(of_session(conn, "observations", args.session))
        return (
            f"session {row['id']} ({row['project']}, {row['prompt_count']} prompts, "
            f"{count} observations)"
        )
    counts = project_counts(conn, args.project)
    if not any(counts.values()):
        return None
    return f"project {args.project}: " + ", ".join(f"{n} {k}" for k, n in counts.items())


def _delete(conn: Any, args: argparse.Namespace) -> None:
    from claude_mem.store.forget import forget_project
    from claude_mem.store.observations import delete_observation
    from claude_mem.store.sessions import delete_session

    if args.observation is not None:
        delete_observation(conn, args.observation)
    elif args.session is not None:
        delete_session(conn, args.session)
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
        what = _describe(db.read(), args)
        if what is None:
            print("claude-mem: nothing to forget (no such record)", file=sys.stderr)
            return 1
        if not args.yes and not _confirmed(what):
            print("claude-mem: nothing forgotten")
            return 1
        with db.write() as conn:
            _delete(conn, args)
    print(f"claude-mem: forgot {what}")
    return 0
