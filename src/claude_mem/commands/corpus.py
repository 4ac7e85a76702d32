"""`claude-mem corpus build|list|show|rebuild|delete|query`: knowledge corpora.

A corpus is a saved selection of observations (by project, type, concept, file, search
query, dates) rendered as one knowledge document that a model can answer questions from.
The command works on the database directly; the worker serves the same under /api/corpus.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from claude_mem.text import counted


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="select observations and save them as corpus NAME")
    build.add_argument("name", help="A-Z a-z 0-9 . _ - (replaces a corpus of that name)")
    build.add_argument("--description", default="", help="what the corpus is for")
    build.add_argument("--project", help="only this project")
    build.add_argument("--type", action="append", default=[], help="observation type; repeatable")
    build.add_argument("--concept", action="append", default=[], help="concept tag; repeatable")
    build.add_argument("--file", action="append", default=[], help="file or folder; repeatable")
    build.add_argument("--query", help="only observations matching this search")
    build.add_argument("--since", help="YYYY-MM-DD, an ISO datetime or epoch ms")
    build.add_argument("--until", help="YYYY-MM-DD, an ISO datetime or epoch ms")
    build.add_argument("--limit", type=int, help="most observations (default 500)")
    sub.add_parser("list", help="the corpora and their stats")
    show = sub.add_parser("show", help="a corpus's filter and stats (--text: the knowledge)")
    show.add_argument("name")
    show.add_argument("--text", action="store_true", help="print the rendered knowledge")
    rebuild = sub.add_parser("rebuild", help="build a corpus again from its saved filter")
    rebuild.add_argument("name")
    delete = sub.add_parser("delete", help="delete a corpus (observations are kept)")
    delete.add_argument("name")
    query = sub.add_parser("query", help="ask a corpus a question with the configured provider")
    query.add_argument("name")
    query.add_argument("question")
    query.add_argument("--provider", help="use this provider instead of CLAUDE_MEM_PROVIDER")
    for each in (build, sub.choices["list"], show, rebuild, delete, query):
        each.add_argument("--json", action="store_true", help="print machine-readable JSON")


def _print_info(info: dict[str, Any]) -> None:
    from claude_mem.corpus.render import day

    stats = info["stats"]
    dates = stats.get("date_range") or {}
    types = ", ".join(f"{k} {v}" for k, v in (stats.get("type_breakdown") or {}).items())
    print(f"{info['name']}: {counted(stats.get('observation_count', 0), 'observation')}, "
          f"{day(dates.get('earliest'))} to {day(dates.get('latest'))}, "
          f"~{counted(stats.get('token_estimate', 0), 'token')}")  # fmt: skip
    if info["description"]:
        print(f"  {info['description']}")
    if types:
        print(f"  types: {types}")
    if info["filter"]:
        print(f"  filter: {json.dumps(info['filter'], ensure_ascii=False)}")


def _act(args: argparse.Namespace) -> Any:
    import asyncio
    from dataclasses import asdict

    from claude_mem.corpus import build as corpus
    from claude_mem.corpus.query import ask
    from claude_mem.settings import load as load_settings
    from claude_mem.store.corpora import list_all
    from claude_mem.store.db import open_database

    settings = load_settings()
    with open_database(settings) as db:
        if args.action == "build":
            filt = corpus.CorpusFilter.parse(
                project=args.project, types=args.type, concepts=args.concept, files=args.file,
                query=args.query, since=args.since, until=args.until, limit=args.limit,
            )  # fmt: skip
            return corpus.describe(corpus.build(db, args.name, filt, description=args.description))
        if args.action == "list":
            return [corpus.describe(c) for c in list_all(db.read())]
        if args.action == "show":
            found = corpus.load(db, args.name)
            info = corpus.describe(found)
            if args.text:
                info |= {"system_prompt": found.system_prompt, "rendered": found.rendered}
            return info
        if args.action == "rebuild":
            return corpus.describe(corpus.rebuild(db, args.name))
        if args.action == "delete":
            corpus.delete(db, args.name)
            return {"deleted": args.name}
        provider = None
        if args.provider:
            from claude_mem.pipeline import registry

            provider = registry.create(args.provider, settings)
        return asdict(asyncio.run(ask(db, args.name, args.question, settings, provider=provider)))


def run(args: argparse.Namespace) -> int:
    try:
        result = _act(args)
    except ValueError as exc:  # bad name, filter or question; unknown corpus; provider failure
        print(f"claude-mem corpus {args.action}: {exc}")
        return 2
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    elif args.action == "list":
        for info in result:
            _print_info(info)
        if not result:
            print("No corpora yet: `claude-mem corpus build NAME --project P` makes one.")
    elif args.action == "delete":
        print(f"deleted corpus {result['deleted']}")
    elif args.action == "query":
        print(result["answer"])
    elif args.action == "show" and args.text:
        print(result["rendered"])
    else:
        _print_info(result)
    return 0
