"""The `claude-mem` command for people. Argparse only at import time: `--help` must be instant.

Each command's module is imported when that command runs, so heavy libraries never slow the
others. The hook path never imports this module.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from claude_mem import __version__, paths

# command name -> (module under claude_mem.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "status": ("status", "what memory holds: sessions, observations, queue"),
    "doctor": ("doctor", "check data dir, settings, database schema and full-text search"),
    "logs": ("logs", "show the end of today's log (-f to follow)"),
    "settings": ("settings_cmd", "list, get or set settings"),
    "worker": ("worker", "start, stop, restart or inspect the background worker"),
    "queue": ("queue", "show the compression queue; retry or drop dead-lettered rows"),
    "usage": ("usage", "LLM tokens spent per day and provider"),
    "search": ("search", "search past work: full text, plus semantic when the worker runs"),
    "show": ("show", "show whole records by the ids search prints (12, S3, P7, T12)"),
    "pause": ("pause", "stop capturing the current session (or --session ID, or --all)"),
    "resume": ("resume", "capture again after pause or #nomem"),
    "forget": ("forget", "delete an observation, a session or a whole project for good"),
    "reindex": ("reindex", "embed all memory again with the current model (--resume to continue)"),
    "corpus": ("corpus", "knowledge corpora: build, list, show, rebuild, delete, query"),
    "export": ("export", "write memory (or some projects) as JSON Lines to stdout"),
    "import": (
        "import_cmd",
        "import an export file, the original claude-mem's database (--from-claude-mem) "
        "or a repository's git history (--git)",
    ),
    "backup": ("backup", "copy the memory database (consistent while in use)"),
    "restore": ("restore", "replace the memory database with a backup (worker stopped)"),
    "hook": ("hook", "run one agent hook: payload on stdin, answer on stdout"),
    "viewer": ("viewer", "print a one-time link that opens the web viewer (--open opens it)"),
    "demo": ("demo", "replay recorded coding sessions through the hooks and show the memory"),
    "install": ("install", "add our hooks to Claude Code, Codex, Cursor, Gemini CLI or Windsurf"),
    "uninstall": ("uninstall", "remove our hooks from an agent's config (memory is kept)"),
    "mcp": ("mcp", "serve memory tools to an agent over stdio (Model Context Protocol)"),
    "team": ("team", "share memory with a team through PostgreSQL (init, join, share, status…)"),
}

# Commands that say nothing about settings problems up front: doctor and settings show them
# themselves, hooks must stay quiet (the worker reports for them), demo uses its own data dir.
QUIET_ABOUT_SETTINGS = frozenset({"doctor", "settings", "hook", "demo"})


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; with `only`, just that command's options are declared (and its
    module imported), which is all one run parses: the others cost their import time."""
    parser = argparse.ArgumentParser(
        prog="claude-mem",
        description="Persistent memory for AI coding agents (claude-mem for Python).",
    )
    parser.add_argument("--version", action="version", version=f"claude-mem-py {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.set_defaults(module=module)
        if only in (None, name):
            _command_module(module).add_arguments(command)
    return parser


def _command_module(module: str) -> ModuleType:
    return importlib.import_module(f"claude_mem.commands.{module}")


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "module", None):
        parser.print_help()
        return 0
    try:
        # Processes an agent runs answer it their own way: hooks stay silent, MCP tools fail.
        if args.module not in ("hook", "mcp"):
            paths.check_data_dir()
        if args.command not in QUIET_ABOUT_SETTINGS:
            from claude_mem import settings  # noqa: PLC0415

            settings.warn(settings.load())
        return int(_command_module(args.module).run(args) or 0)
    except paths.DataDirError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
