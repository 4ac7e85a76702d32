"""`claude-mem install`: merge our hooks into an agent's config (or write a plugin folder).

claude-mem install [--ide claude-code|codex|cursor|gemini-cli|windsurf] [--project]
                   [--print] [--no-start] [--hook-transport http|command]
claude-mem install --plugin-dir DIR      # a Claude Code plugin for `claude --plugin-dir DIR`
"""

from __future__ import annotations

import argparse
from pathlib import Path

from claude_mem.install import IDES, TRANSPORTS


def add_common(parser: argparse.ArgumentParser) -> None:
    """Options install and uninstall share."""
    parser.add_argument(
        "--ide", choices=IDES, default="claude-code", help="which agent (default: claude-code)"
    )
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--project",
        action="store_true",
        help="the project's config in the current folder instead of the user's",
    )
    scope.add_argument(
        "--plugin-dir",
        type=Path,
        metavar="DIR",
        help="a Claude Code plugin folder (for `claude --plugin-dir DIR`) instead of settings",
    )
    parser.add_argument(
        "--print",
        dest="dry_run",
        action="store_true",
        help="show what would change (a diff per file) and write nothing",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    parser.add_argument("--no-start", action="store_true", help="do not start the worker")
    parser.add_argument(
        "--hook-transport",
        choices=TRANSPORTS,
        default="http",
        help="Claude Code's per-tool-call, Stop and SessionEnd hooks: http posts to the worker "
        "(default), command runs a hook process for each (other agents always use commands)",
    )


def check(parser_args: argparse.Namespace) -> str | None:
    """A usage problem argparse cannot express, or None."""
    if parser_args.plugin_dir is not None and parser_args.ide != "claude-code":
        return "--plugin-dir makes a Claude Code plugin; it cannot be combined with --ide"
    return None


def run(args: argparse.Namespace) -> int:
    import sys

    from claude_mem.install.flow import Options
    from claude_mem.install.flow import run as run_flow

    problem = check(args)
    if problem:
        print(f"claude-mem install: {problem}", file=sys.stderr)
        return 2
    opts = Options(
        "install",
        args.ide,
        args.project,
        args.dry_run,
        args.plugin_dir,
        not args.no_start,
        args.hook_transport,
    )
    return run_flow(opts)
