"""`claude-mem status`: what memory holds right now."""

from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def collect() -> dict[str, object]:
    from claude_mem import paths
    from claude_mem.store import stats
    from claude_mem.store.db import open_database

    with open_database() as db:
        conn = db.read()
        return {
            "data_dir": str(paths.data_dir()),
            "database": str(db.path),
            "database_bytes": db.path.stat().st_size,
            **stats.snapshot(conn),
            "projects": [project["name"] for project in stats.projects(conn)],
        }


def run(args: argparse.Namespace) -> int:
    info = collect()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    counts = info["counts"]
    queue = info["queue"]
    assert isinstance(counts, dict)
    assert isinstance(queue, dict)
    print(f"data dir      {info['data_dir']}")
    print(f"database      {info['database']} ({info['database_bytes']:,} bytes)")
    print(
        f"memory        {counts['sessions']} sessions, {counts['user_prompts']} prompts, "
        f"{counts['observations']} observations, {counts['session_summaries']} summaries"
    )
    print(
        f"queue         {queue['pending']} pending, {queue['processing']} processing, "
        f"{queue['dead']} dead"
    )
    projects = info["projects"]
    assert isinstance(projects, list)
    print(f"projects      {', '.join(projects) if projects else '(none yet)'}")
    return 0
