"""`claude-mem uninstall`: remove only our hooks (and MCP entry); the memory itself stays.

claude-mem uninstall [--ide ...] [--project] [--print] [--keep-worker]
claude-mem uninstall --plugin-dir DIR
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from claude_mem.commands.install import add_common

    add_common(parser)
    parser.add_argument(
        "--keep-worker", action="store_true", help="leave the background worker running"
    )


def run(args: argparse.Namespace) -> int:
    import sys

    from claude_mem.commands.install import check
    from claude_mem.install.flow import Options
    from claude_mem.install.flow import run as run_flow

    problem = check(args)
    if problem:
        print(f"claude-mem uninstall: {problem}", file=sys.stderr)
        return 2
    opts = Options(
        "uninstall", args.ide, args.project, args.dry_run, args.plugin_dir, not args.keep_worker
    )
    return run_flow(opts)
