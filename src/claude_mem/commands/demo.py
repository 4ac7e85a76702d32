"""`claude-mem demo [--keep]`: replay recorded Claude Code sessions, show the memory they leave."""

from __future__ import annotations

import argparse


def _port(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port number (1-65535)")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--keep",
        action="store_true",
        help="leave the worker running (and the scratch files) to explore; prints how to stop it",
    )
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="memory folder to use (default: a temporary one, so your own memory is untouched)",
    )
    parser.add_argument("--port", type=_port, help="worker port (default: a free loopback port)")
    parser.add_argument(
        "--search",
        metavar="QUERY",
        default=None,
        help="full-text query to run on the replayed memory (default: Decimal)",
    )


def run(args: argparse.Namespace) -> int:
    from claude_mem.demo import run_demo
    from claude_mem.demo.run import DEFAULT_QUERY

    return run_demo(
        keep=args.keep,
        data_dir=args.data_dir,
        port=args.port,
        query=args.search or DEFAULT_QUERY,
    )
