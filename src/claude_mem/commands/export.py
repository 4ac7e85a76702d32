"""`claude-mem export [--project P] > memory.jsonl`: all memory (or some projects) as JSON Lines.

Sessions, prompts, observations and summaries, in the versioned format of
`claude_mem.transfer.records`; `claude-mem import FILE` reads it back on any machine.
A progress bar goes to stderr when it is a terminal; stdout carries only the data.
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project", action="append", default=[], help="only this project; repeatable"
    )
    parser.add_argument("-o", "--output", help="write to this file instead of stdout")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from claude_mem.commands.progress import progress_bar
    from claude_mem.store.db import open_database
    from claude_mem.transfer.jsonl import export

    projects = tuple(dict.fromkeys(p.strip() for p in args.project if p.strip()))
    with open_database() as db, progress_bar("exporting") as bar:
        if args.output:
            with Path(args.output).open("wb") as out:
                counts = export(
                    db, out, projects=projects, progress=bar.advance, on_total=bar.total
                )
        else:
            counts = export(
                db, sys.stdout.buffer, projects=projects, progress=bar.advance, on_total=bar.total
            )
            sys.stdout.buffer.flush()
    from claude_mem.transfer.records import PLURAL

    summary = ", ".join(f"{n} {PLURAL[kind]}" for kind, n in counts.items())
    print(f"exported {summary}", file=sys.stderr)
    return 0
