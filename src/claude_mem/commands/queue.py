"""`claude-mem queue [status|retry|drop] [IDS...]`: the compression queue and its dead letters.

`retry` without ids retries every dead row; `drop` deletes for good, so without ids it needs
`--all`. An id that is not a dead row is an error, and then nothing is changed.
"""

from __future__ import annotations

import argparse
import sys

from claude_mem.text import counted


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["status", "retry", "drop"], default="status")
    parser.add_argument(
        "ids", nargs="*", type=int, help="dead rows to act on (retry: default all; drop: or --all)"
    )
    parser.add_argument("--all", action="store_true", help="drop: every dead row")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def _problem(args: argparse.Namespace, dead: list[int]) -> tuple[int, str] | None:
    """(exit code, message) when the ids given cannot be acted on as asked."""
    if args.action == "drop" and not args.ids and not args.all:
        return 2, (
            f"name the dead rows to drop (`claude-mem queue` lists them), or --all to drop "
            f"all {len(dead)}"
        )
    unknown = [str(i) for i in args.ids if i not in dead]
    if unknown:
        listed = ", ".join(map(str, dead)) or "none"
        return 1, f"no dead row {', '.join(unknown)} (dead rows: {listed}); nothing changed"
    return None


def _act(args: argparse.Namespace) -> int:
    from claude_mem.store import queue
    from claude_mem.store.db import open_database

    with open_database() as db:
        problem = _problem(args, queue.dead_ids(db.read()))
        if problem is not None:
            print(f"claude-mem queue {args.action}: {problem[1]}", file=sys.stderr)
            return problem[0]
        with db.write() as conn:
            act = queue.retry_dead if args.action == "retry" else queue.drop_dead
            count = act(conn, args.ids or None)
    done = "queued again" if args.action == "retry" else "dropped"
    print(f"{counted(count, 'dead row')} {done}")
    return 0


def run(args: argparse.Namespace) -> int:
    import json

    from claude_mem.store import queue
    from claude_mem.store.db import open_database

    if args.action != "status":
        return _act(args)
    with open_database() as db:
        conn = db.read()
        counts, dead = queue.counts(conn), queue.dead_items(conn)
    if args.json:
        print(json.dumps({"counts": counts, "dead": dead}, indent=2))
        return 0
    print(f"{counts['pending']} pending, {counts['processing']} processing, {counts['dead']} dead")
    for row in dead:
        print(f"  dead #{row['id']} session {row['session_id']} {row['kind']}: "
              f"{counted(row['attempts'], 'attempt')}, {row['last_error']}")  # fmt: skip
    if dead:
        print(
            "retry with `claude-mem queue retry [IDS]`, "
            "discard with `claude-mem queue drop IDS` (or `--all`)"
        )
    return 0
