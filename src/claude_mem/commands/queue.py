"""`claude-mem queue [status|retry|drop] [IDS...]`: the compression queue and its dead letters."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["status", "retry", "drop"], default="status")
    parser.add_argument("ids", nargs="*", type=int, help="dead rows to act on (default: all)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def run(args: argparse.Namespace) -> int:
    import json

    from claude_mem.store import queue
    from claude_mem.store.db import open_database

    ids = args.ids or None
    with open_database() as db:
        if args.action == "retry":
            with db.write() as conn:
                count = queue.retry_dead(conn, ids)
            print(f"{count} dead row(s) queued again")
            return 0
        if args.action == "drop":
            with db.write() as conn:
                count = queue.drop_dead(conn, ids)
            print(f"{count} dead row(s) dropped")
            return 0
        conn = db.read()
        counts, dead = queue.counts(conn), queue.dead_items(conn)
    if args.json:
        print(json.dumps({"counts": counts, "dead": dead}, indent=2))
        return 0
    print(f"{counts['pending']} pending, {counts['processing']} processing, {counts['dead']} dead")
    for row in dead:
        print(f"  dead #{row['id']} session {row['session_id']} {row['kind']}: "
              f"{row['attempts']} attempts, {row['last_error']}")  # fmt: skip
    if dead:
        print(
            "retry with `claude-mem queue retry [IDS]`, discard with `claude-mem queue drop [IDS]`"
        )
    return 0
