"""`claude-mem export [--project P] > memory.jsonl`: all memory (or some projects) as JSON Lines.

Sessions, prompts, observations and summaries, in the versioned format of
`claude_mem.transfer.records`; `claude-mem import FILE` reads it back on any machine.
A progress bar goes to stderr when it is a terminal; stdout carries only the data.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

    from claude_mem.commands.progress import Bar
    from claude_mem.store.db import Database


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project", action="append", default=[], help="only this project; repeatable"
    )
    parser.add_argument("-o", "--output", help="write to this file instead of stdout")


def unknown_projects(conn: sqlite3.Connection, projects: tuple[str, ...]) -> str | None:
    """Why `--project` names nothing to export (with the projects there are), or None."""
    from claude_mem.store import stats, transfer

    missing = [p for p in projects if not transfer.count(conn, "sessions", (p,))]
    if not missing:
        return None
    known = [str(p["name"]) for p in stats.projects(conn)]
    listed = ", ".join(known[:20]) + (", …" if len(known) > 20 else "") if known else "none yet"
    return f"no project {', '.join(missing)} in memory (known: {listed})"


def run(args: argparse.Namespace) -> int:
    from claude_mem.commands.progress import progress_bar
    from claude_mem.store.db import open_database

    projects = tuple(dict.fromkeys(p.strip() for p in args.project if p.strip()))
    with open_database() as db:
        problem = unknown_projects(db.read(), projects)
        if problem:
            print(f"claude-mem export: {problem}", file=sys.stderr)
            return 1
        with progress_bar("exporting") as bar:
            counts = _write(db, args.output, projects, bar)
    from claude_mem.text import counted

    summary = ", ".join(counted(n, kind) for kind, n in counts.items())
    print(f"exported {summary}", file=sys.stderr)
    return 0


def _write(db: Database, output: str | None, projects: tuple[str, ...], bar: Bar) -> dict[str, int]:
    from pathlib import Path

    from claude_mem.transfer.jsonl import export

    if output:
        with Path(output).open("wb") as out:
            return export(db, out, projects=projects, progress=bar.advance, on_total=bar.total)
    counts = export(
        db, sys.stdout.buffer, projects=projects, progress=bar.advance, on_total=bar.total
    )
    sys.stdout.buffer.flush()
    return counts
