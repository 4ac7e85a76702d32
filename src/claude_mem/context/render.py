"""The session-start context the agent receives: a compact, deterministic, budgeted index.

Layout (progressive disclosure): a header, a legend, the token economics line, then what is
known before what happened: the project's current decisions (at most their share of the
budget), the newest findings (each with its narrative or facts and its main files), then the
timeline of the other observations and session summaries grouped by day, then the last
session's summary. Superseded observations never appear. The whole text, warning included,
stays within CLAUDE_MEM_CONTEXT_TOKEN_BUDGET: the oldest index rows go first, then findings,
then decisions, the newest observations last (`timeline`), and the text says how many went.
A project whose memory is only its git history is told how many commits it holds.
No clock is read, so the same database gives the same bytes (prompt caching).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from claude_mem.context.budget import CHARS_PER_TOKEN, cut, fit, tokens
from claude_mem.context.gather import DECISION_SHARE, Memory, gather
from claude_mem.context.timeline import (
    SESSION_MARK,
    TYPE_MARKS,
    Row,
    build_rows,
    index_lines,
    shown,
    zone,
)
from claude_mem.settings import Settings
from claude_mem.text import counted, shorten

SUMMARY_LABELS = (
    ("request", "Request"),
    ("learned", "Learned"),
    ("completed", "Completed"),
    ("next_steps", "Next steps"),
)
SUMMARY_CHARS = 400
LEGEND = "Legend: " + " ".join(f"{mark} {kind}" for kind, mark in TYPE_MARKS.items())
LEGEND += f" {SESSION_MARK} session summary (S<id>)"
HEADINGS = {"decision": "## Decisions in force", "finding": "## Latest findings"}
DECISIONS_HEADING = len(HEADINGS["decision"]) + 2  # the heading's line and the blank before it


@dataclass(frozen=True, slots=True)
class Economics:
    observations: int
    read_tokens: int  # what reading those observations in full costs
    work_tokens: int  # what producing them cost

    @property
    def line(self) -> str:
        noun = "observation" if self.observations == 1 else "observations"
        text = (
            f"Economics: {self.observations:,} {noun}, ~{self.read_tokens:,} tokens to "
            f"read in full vs ~{self.work_tokens:,} tokens of work they record"
        )
        if self.work_tokens > 0:
            saved = round((self.work_tokens - self.read_tokens) / self.work_tokens * 100)
            text += f" ({saved}% saved)"
        return text


@dataclass(frozen=True, slots=True)
class Context:
    """The rendered context and what went into it (the terminal view shows the same rows)."""

    text: str
    memory: Memory
    rows: Sequence[Row]  # the rows kept, in reading order (timeline.shown)
    dropped: int  # rows left out for the budget
    economics: Economics | None
    budget: int

    @property
    def tokens(self) -> int:
        return tokens(self.text)


def compose(
    conn: sqlite3.Connection,
    projects: tuple[str, ...],
    settings: Settings,
    *,
    warning: str | None = None,
) -> Context:
    """The context for `projects` (parent first for a worktree, the working project last)."""
    memory = gather(conn, projects, settings)
    budget = settings.get_int("CLAUDE_MEM_CONTEXT_TOKEN_BUDGET")
    if memory.empty:
        hint = settings.get_bool("CLAUDE_MEM_WELCOME_HINT_ENABLED")
        if memory.commits:
            text = history_only(memory.primary, memory.commits)
        else:
            text = welcome(memory.primary) if hint else ""
        return Context(cut(_with_warning(warning, text), budget), memory, [], 0, None, budget)
    rows, left_out = build_rows(
        memory,
        full_count=settings.get_int("CLAUDE_MEM_CONTEXT_FULL_COUNT"),
        full_field=settings.get_str("CLAUDE_MEM_CONTEXT_FULL_FIELD"),
        summaries=settings.get_int("CLAUDE_MEM_CONTEXT_SESSION_COUNT"),
        decision_chars=int(budget * CHARS_PER_TOKEN * DECISION_SHARE) - DECISIONS_HEADING,
    )
    by_id = {str(obs["id"]): obs for obs in (*memory.observations, *memory.decisions)}
    show_last = settings.get_bool("CLAUDE_MEM_CONTEXT_SHOW_LAST_SUMMARY")
    last = memory.summaries[0] if show_last and memory.summaries else None
    savings = settings.get_bool("CLAUDE_MEM_CONTEXT_SHOW_SAVINGS")

    # Each observation's (read, work) tokens once: fit() builds the text more than once.
    costs = {ident: _costs(obs) for ident, obs in by_id.items()} if savings else {}

    def numbers(kept: Sequence[Row]) -> Economics | None:
        if not savings:
            return None
        mine = [costs[r.ident] for r in kept if r.ident in costs]
        return Economics(len(mine), sum(read for read, _ in mine), sum(w for _, w in mine))

    def build(kept: Sequence[Row], dropped: int) -> str:
        body = _body(
            memory,
            kept,
            dropped=dropped + left_out,
            numbers=numbers(kept),
            last=last,
            budget=budget,
        )
        return _with_warning(warning, body)

    text, dropped = fit(build, rows, lambda row: row.chars, budget)
    kept = rows[dropped:]
    return Context(text, memory, shown(kept), dropped + left_out, numbers(kept), budget)


def welcome(project: str) -> str:
    return (
        f"# [{project}] claude-mem: no memory yet for this project.\n"
        "Work from this session on is remembered and offered to the next one."
    )


def history_only(project: str, commits: int) -> str:
    """What a project whose memory is only its git history gets: how much, and how to use it."""
    return (
        f"# [{project}] claude-mem: {counted(commits, 'commit')} of git history in memory "
        "(no sessions yet).\n"
        'Search them: search("what you want to know") (MCP) or `claude-mem search QUERY`; a '
        "file about to be read comes with the commits that explain it.\n"
        "Work from this session on is remembered and offered to the next one."
    )


def _costs(obs: dict[str, Any]) -> tuple[int, int]:
    """What reading the observation in full costs, and what producing it cost, in tokens."""
    return tokens(_full_text(obs)), int(obs.get("discovery_tokens") or 0)


def _full_text(obs: dict[str, Any]) -> str:
    parts = (obs.get("title"), obs.get("subtitle"), obs.get("narrative"))
    return "".join(p or "" for p in parts) + json.dumps(obs.get("facts") or [], ensure_ascii=False)


def _with_warning(warning: str | None, text: str) -> str:
    return f"{warning}\n{text}" if warning and text else warning or text


def _expanded(row: Row, when: str) -> list[str]:
    return [f"**{row.ident}** {when} {row.mark} **{row.title}**", *(f"  {d}" for d in row.detail)]


def _header(memory: Memory) -> str:
    title = f"# [{memory.primary}] recent memory (claude-mem)"
    if len(memory.projects) > 1:
        others = ", ".join(memory.projects[:-1])
        title += f", with its main checkout {others}"
    return title


def _body(
    memory: Memory,
    rows: Sequence[Row],
    *,
    dropped: int,
    numbers: Economics | None,
    last: dict[str, Any] | None,
    budget: int,
) -> str:
    lines = [
        _header(memory),
        LEGEND,
        f"Format: ID TIME TYPE TITLE (times in {zone(memory.newest_at)}) | details: "
        "get_observations([IDs]) | search: search(query)",
    ]
    if numbers is not None:
        lines.append(numbers.line)
    if dropped:
        lines.append(f"({dropped:,} rows left out to stay within {budget:,} tokens)")
    ordered = shown(rows)
    for section, title in HEADINGS.items():
        picked = [row for row in ordered if row.section == section]
        if picked:
            lines += ["", title]
        for row in picked:
            lines += _expanded(row, row.stamp)
    index = [row for row in ordered if row.section == "index"]
    if index and len(index) < len(ordered):
        lines += ["", "## Timeline"]
    for heading, row, clock in index_lines(index):
        if heading:
            lines += ["", f"### {heading}"]
        if row.detail:
            lines += _expanded(row, clock)
        else:
            lines.append(f"{row.ident} {clock} {row.mark} {row.title}")
    if last is not None:
        fields = [
            (label, shorten(last.get(key) or "", SUMMARY_CHARS)) for key, label in SUMMARY_LABELS
        ]
        fields = [(label, value) for label, value in fields if value]
        if fields:
            lines += ["", f"## Last session summary (S{last['id']})"]
            lines += [f"**{label}**: {value}" for label, value in fields]
    return "\n".join(lines)
