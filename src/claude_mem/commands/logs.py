"""`claude-mem logs`: the end of today's log, optionally following new lines."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", "--lines", type=int, default=50, help="how many lines (default 50)")
    parser.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    parser.add_argument("--day", help="another day's log, YYYY-MM-DD")


def run(args: argparse.Namespace) -> int:
    import sys
    import time

    from claude_mem import log

    path = log.log_path(args.day)
    if not path.exists() and not args.follow:
        print(f"no log yet at {path}", file=sys.stderr)
        return 0
    for line in log.tail(max(0, args.lines), path):
        print(line)
    if not args.follow:
        return 0
    position = path.stat().st_size if path.exists() else 0
    while True:  # until Ctrl-C; follows the next day's file when the date changes
        current = log.log_path(args.day)
        if current != path:
            path, position = current, 0
        if path.exists() and path.stat().st_size > position:
            with path.open("rb") as handle:
                handle.seek(position)
                chunk = handle.read()
                position += len(chunk)
            sys.stdout.write(chunk.decode("utf-8", "replace"))
            sys.stdout.flush()
        time.sleep(0.5)
