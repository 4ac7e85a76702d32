"""`claude-mem usage`: what compression cost in LLM tokens, against the budgets."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--days", type=int, default=30, help="how far back (default 30)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def run(args: argparse.Namespace) -> int:
    import json

    from claude_mem import settings
    from claude_mem.store import usage
    from claude_mem.store.db import open_database

    loaded = settings.load()
    with open_database(loaded) as db:
        conn = db.read()
        rows = usage.report(conn, max(1, args.days))
        today = usage.spent_on_day(conn)
    budget = loaded.get_int("CLAUDE_MEM_DAILY_TOKEN_BUDGET")
    if args.json:
        print(json.dumps({"today": today, "daily_budget": budget, "rows": rows}, indent=2))
        return 0
    print(f"today: {today:,} of {budget:,} tokens "
          f"(per session: {loaded.get_int('CLAUDE_MEM_SESSION_TOKEN_BUDGET'):,})")  # fmt: skip
    if not rows:
        print("no LLM tokens spent: everything was compressed offline by the local provider")
        return 0
    print(f"{'day':<11} {'provider':<18} {'model':<28} {'input':>10} {'output':>9} {'calls':>6}")
    for row in rows:
        model = row["model"] or "-"
        print(
            f"{row['day']:<11} {row['provider']:<18} {model:<28} "
            f"{row['input_tokens']:>10,} {row['output_tokens']:>9,} {row['calls']:>6,}"
        )
    return 0
