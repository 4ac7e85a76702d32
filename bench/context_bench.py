"""Time building the session-start context, and the file-read gate, over 1k-100k observations.

    .venv/bin/python bench/context_bench.py [--counts 1000,10000,100000] [--runs 50]

All observations go to one project (the worst case for the context query); a second variant
spreads them over a worktree and its parent. Prints a Markdown table; the latest figures are
kept in bench/RESULTS.md. Floor (context issue): ≤ 15 ms at 100k observations.

A second table holds what the context shows when many decisions are on record (issue #30:
3,000 observations, one in six a decision): how many of the 5 newest observations it shows,
the tokens of its "Decisions in force" section against their share, and the whole text
against the budget. Floor: the 5 newest shown, within budget.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from msgspec.structs import replace

sys.path.insert(0, str(Path(__file__).parent))

from claude_mem import settings
from claude_mem.context.budget import tokens
from claude_mem.context.file_gate import file_timeline
from claude_mem.context.gather import DECISION_SHARE
from claude_mem.context.render import Context, compose
from claude_mem.records import Summary
from claude_mem.store import Database
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session
from claude_mem.store.summaries import insert_summary
from stats import percentile
from synthetic import observations

SESSIONS = 200


def timed(action: Callable[[], object], runs: int) -> tuple[float, float]:
    """(p50, p95) in ms after two warm-up calls."""
    action()
    action()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), percentile(samples, 0.95)


def fill(db: Database, count: int, projects: tuple[str, ...]) -> str:
    """`count` observations over SESSIONS sessions and `projects`; returns a busy file."""
    with db.write() as conn:
        sids = [
            ensure_session(
                conn, platform="bench", host_session_id=f"s{n}", project=projects[n % len(projects)]
            )
            for n in range(SESSIONS)
        ]
    rows = list(observations(count, 0))
    for offset in range(0, count, 2000):
        with db.write() as conn:
            for n, obs in enumerate(rows[offset : offset + 2000], start=offset):
                sid = sids[n * SESSIONS // count]
                project = projects[(n * SESSIONS // count) % len(projects)]
                insert_observation(conn, replace(obs, session_id=sid, project=project))
    with db.write() as conn:
        for n, sid in enumerate(sids):
            summary = Summary(
                session_id=sid,
                project=projects[n % len(projects)],
                request=f"task {n}",
                learned="how the scheduler claims jobs",
                completed="fixed the race",
                next_steps="add a regression test",
                created_at=rows[-1].created_at or 0,
            )
            insert_summary(conn, summary)
    return rows[-1].files_read[0]  # a module file many observations read: the worst case


def measure(count: int, projects: tuple[str, ...], runs: int) -> str:
    """One table row: context and file-gate timings over a fresh database."""
    config = settings.load()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CLAUDE_MEM_DATA_DIR"] = tmp
        db = Database(Path(tmp) / "bench.db")
        busy = fill(db, count, projects)
        conn = db.read()
        context = compose(conn, projects, config)
        p50, p95 = timed(lambda: compose(conn, projects, config), runs)
        gate = timed(
            lambda: file_timeline(conn, busy, folders=(), projects=projects, mtime_ms=0), runs
        )
        db.close()
    return (
        f"| {count:,} | {len(projects)} | {p50:.2f} ms | {p95:.2f} ms "
        f"| {context.tokens:,} tokens ({len(context.text):,} chars) "
        f"| {context.dropped} | {gate[0]:.2f} ms | {gate[1]:.2f} ms |"
    )


def decisions_row(count: int, every: int) -> str:
    """One row of the second table: `count` observations in one project, every `every`th a
    decision, the default settings."""
    config = settings.load()
    budget = config.get_int("CLAUDE_MEM_CONTEXT_TOKEN_BUDGET")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CLAUDE_MEM_DATA_DIR"] = tmp
        db = Database(Path(tmp) / "bench.db")
        with db.write() as conn:
            sid = ensure_session(conn, platform="bench", host_session_id="s", project="p")
            for n, obs in enumerate(observations(count, sid)):
                kind = "decision" if n % every == every - 1 else obs.type
                insert_observation(conn, replace(obs, project="p", type=kind))
            newest = [
                str(row[0])
                for row in conn.execute("SELECT id FROM observations ORDER BY id DESC LIMIT 5")
            ]
        context = compose(db.read(), ("p",), config)
        db.close()
    shown = {row.ident for row in context.rows}
    decided = _section_tokens(context, "## Decisions in force")
    share = int(budget * DECISION_SHARE)
    return (
        f"| {count:,} | {count // every:,} | {len(shown & set(newest))} of 5 "
        f"| {decided:,} of {share:,} tokens | {context.tokens:,} of {budget:,} tokens "
        f"| {'yes' if '## Timeline' in context.text else 'no'} |"
    )


def _section_tokens(context: Context, heading: str) -> int:
    """The tokens of one `## ` section of the context text (0 when it has none)."""
    lines = context.text.splitlines()
    if heading not in lines:
        return 0
    start = lines.index(heading)
    end = next((n for n in range(start + 1, len(lines)) if lines[n].startswith("## ")), None)
    return tokens("\n".join(lines[start:end]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    print(
        "| observations | projects | context p50 | p95 | injected | rows dropped "
        "| file gate p50 | p95 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for count in (int(c) for c in args.counts.split(",")):
        for projects in (("p",), ("p", "p/wt")):
            print(measure(count, projects, args.runs), flush=True)
    print(
        "\n| observations | decisions | newest shown | decisions' section | injected | timeline |"
    )
    print("|---|---|---|---|---|---|")
    print(decisions_row(3000, 6), flush=True)


if __name__ == "__main__":
    main()
