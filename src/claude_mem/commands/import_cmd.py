"""`claude-mem import FILE` / `--from-claude-mem [PATH]` / `--git [PATH]`.

FILE is a `claude-mem export` (JSON Lines; `-` reads stdin); one that holds fewer records than
its header counts (a truncated copy) is refused, naming what is missing, unless `--partial`.
`--from-claude-mem` reads the original claude-mem's database (default
~/.claude-mem/claude-mem.db) read-only. Either way, importing again adds nothing, and every
text is privacy-cleaned on the way in. `--git` reads a repository's history (`git` itself) into
memory, one observation per commit that says something; again, only new commits are read.
Imported rows are embedded for semantic search by the worker in the background (at its next
start if it is not running).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from claude_mem.text import counted

if TYPE_CHECKING:
    from claude_mem.history.importer import HistoryStats


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", help="a `claude-mem export` file, or - for stdin")
    parser.add_argument(
        "--partial", action="store_true",
        help="with FILE: import what it holds even when it lacks records its header counts",
    )  # fmt: skip
    parser.add_argument(
        "--from-claude-mem", nargs="?", const="~/.claude-mem/claude-mem.db", metavar="PATH",
        help="import the original claude-mem's database (default ~/.claude-mem/claude-mem.db)",
    )  # fmt: skip
    parser.add_argument(
        "--map-project", action="append", default=[], metavar="OLD=NEW",
        help="store project OLD as NEW (with --from-claude-mem); repeatable",
    )  # fmt: skip
    parser.add_argument(
        "--git", nargs="?", const=".", metavar="PATH",
        help="import the git history of the repository at PATH (default: the current directory)",
    )  # fmt: skip
    parser.add_argument(
        "--since", metavar="DATE|REV",
        help="with --git: only commits after DATE (as git reads dates) or after revision REV",
    )  # fmt: skip
    parser.add_argument(
        "--max", type=int, metavar="N", help="with --git: at most the N newest commits"
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def _import_git(args: argparse.Namespace) -> HistoryStats:
    from claude_mem.commands.progress import progress_bar
    from claude_mem.history.gitlog import GitError
    from claude_mem.history.importer import import_history
    from claude_mem.settings import load
    from claude_mem.store.db import open_database

    if args.file or args.from_claude_mem or args.partial:
        raise ValueError("--git reads a repository: give no FILE, --from-claude-mem or --partial")
    if args.max is not None and args.max < 1:
        raise ValueError("--max needs a positive number of commits")
    settings = load()
    try:
        with open_database(settings) as db, progress_bar("reading history") as bar:
            stats = import_history(
                db, args.git, since=args.since, max_commits=args.max,
                excluded=settings.get_str("CLAUDE_MEM_EXCLUDED_PROJECTS"),
                progress=bar.advance, on_total=bar.total,
            )  # fmt: skip
    except GitError as exc:
        raise ValueError(f"{args.git}: {exc}") from None
    return stats


def _print_git(stats: HistoryStats) -> None:
    if stats.empty:
        print(f"{stats.source}: the repository has no commits yet, nothing to import")
        return
    result = stats.as_dict()
    skipped = {k: n for k, n in result["skipped"].items() if n}
    if not (stats.commits or stats.rewritten or stats.pending or set(skipped) - {"known"}):
        held = counted(stats.kept, "commit")
        print(f"{stats.project}'s history is up to date ({held} in memory): no new commits")
        return
    kept = counted(result["imported"]["commits"], "commit")
    rewritten = result["imported"]["rewritten"]
    parts = [f"{kept} of {result['project']}'s history imported"]
    if rewritten:
        parts.append(f"{counted(rewritten, 'rewritten commit')} replaced")
    line = ", ".join(parts)
    if skipped:
        line += " (skipped: " + ", ".join(f"{n} {k}" for k, n in skipped.items()) + ")"
    print(line)
    if result["pending"]:
        print(f"{counted(result['pending'], 'commit')} left: run it again to read them")


def _import(args: argparse.Namespace) -> dict[str, Any]:
    from pathlib import Path

    from claude_mem.commands.progress import progress_bar
    from claude_mem.store.db import open_database
    from claude_mem.transfer import claude_mem, jsonl

    if args.since or args.max is not None:
        raise ValueError("--since and --max only apply with --git")
    if bool(args.file) == bool(args.from_claude_mem):
        raise ValueError("give a FILE to import, --from-claude-mem [PATH] or --git [PATH]")
    if args.partial and not args.file:
        raise ValueError("--partial only applies to a FILE (an export)")
    with open_database() as db, progress_bar("importing") as bar:
        if args.from_claude_mem:
            mapping = claude_mem.parse_project_map(args.map_project)
            source = Path(args.from_claude_mem).expanduser()
            stats = claude_mem.import_database(
                db, source, projects=mapping, progress=bar.advance, on_total=bar.total
            )
            origin = str(source)
        elif args.file == "-":
            stats = jsonl.import_lines(db, sys.stdin.buffer, partial=args.partial,
                                       progress=bar.advance, on_total=bar.total)  # fmt: skip
            origin = "stdin"
        else:
            if args.map_project:
                raise ValueError("--map-project only applies with --from-claude-mem")
            try:
                with Path(args.file).open("rb") as handle:
                    stats = jsonl.import_lines(
                        db, handle, partial=args.partial, progress=bar.advance, on_total=bar.total
                    )
            except OSError as exc:
                raise ValueError(f"{args.file}: {exc.strerror}") from None
            origin = args.file
    return {"source": origin, **stats.as_dict()}


def run(args: argparse.Namespace) -> int:
    import json

    try:
        history = _import_git(args) if args.git else None
        result = history.as_dict() if history else _import(args)
    except ValueError as exc:  # a bad file or source: nothing was written
        print(f"claude-mem import: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    if history:
        _print_git(history)
        if history.commits or history.rewritten:
            print(_embedding_note())
        return 0
    imported, skipped = result["imported"], result["skipped"]
    added = ", ".join(counted(n, kind) for kind, n in imported.items())
    print(f"imported from {result['source']}: {added} ({sum(skipped.values())} already present)")
    if result["mismatch"]:
        from claude_mem.transfer.jsonl import describe_mismatch

        print(f"the input was incomplete ({describe_mismatch(result['mismatch'])}): "
              "imported what it holds (--partial)")  # fmt: skip
    if result["orphans"]:
        print(f"{counted(result['orphans'], 'record')} skipped: their session was not in the input")
    if sum(imported.values()):
        print(_embedding_note())
    return 0


def _embedding_note() -> str:
    """Who embeds the new rows: this data dir's worker, never one that serves another. Another
    data dir's worker on the port is no problem here (this one's starts on a free port), so a
    successful import does not talk about it; a program that is no worker there is named."""
    from claude_mem.worker import lifecycle

    found = lifecycle.lookup()
    if found.ours is not None:
        return (
            f"The worker (pid {found.ours.pid}) embeds the new rows for semantic search "
            "in the background."
        )
    problem = found.problem() if found.foreign is None else None
    return (
        "No worker runs for this data dir: the new rows are embedded for semantic search "
        "once it starts (`claude-mem worker start`)." + (f"\n{problem}" if problem else "")
    )
