"""Memory as rows: one per observation or session summary, in three sections.

The current decisions come first, then the newest findings (expanded), then the recent index
in time order. Under a tight budget the index goes first, oldest rows first, then findings,
then decisions: `build_rows` returns them in that dropping order, `shown` in reading order.

Times are shown in the local time zone of the process (the user's), grouped by calendar day.
Nothing here reads the clock: the same rows always give the same text (prompt caching).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from claude_mem.context.gather import Memory

TYPE_MARKS = {
    "bugfix": "●",
    "feature": "◆",
    "refactor": "↻",
    "change": "✓",
    "discovery": "○",
    "decision": "⚖",
}
OTHER_MARK = "•"
SESSION_MARK = "◇"
TITLE_CHARS = 160
DETAIL_CHARS = 500
SECTIONS = ("decision", "finding", "index")  # reading order
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the index (plus detail lines for an expanded observation)."""

    at: int  # epoch ms
    ident: str  # "12" for observation 12, "S4" for summary 4
    mark: str
    title: str
    detail: tuple[str, ...] = ()
    section: str = "index"  # one of SECTIONS

    @property
    def day(self) -> str:
        return day_label(self.at)

    @property
    def clock(self) -> str:
        return time.strftime("%H:%M", time.localtime(self.at / 1000))

    @property
    def stamp(self) -> str:
        """`Nov 5 09:04`: when, for a row shown outside the day-grouped index."""
        when = time.localtime(self.at / 1000)
        return f"{MONTHS[when.tm_mon - 1]} {when.tm_mday} {self.clock}"


def day_label(at_ms: int) -> str:
    """`Nov 5, 2025`: the day heading, in local time."""
    when = time.localtime(at_ms / 1000)
    return f"{MONTHS[when.tm_mon - 1]} {when.tm_mday}, {when.tm_year}"


def zone(at_ms: int) -> str:
    """The local zone's name at that moment, for the reader of the times (`CET`, `UTC`)."""
    return time.strftime("%Z", time.localtime(at_ms / 1000)) or "local time"


def flat(text: str | None, limit: int) -> str:
    """One line, at most `limit` characters."""
    line = " ".join((text or "").split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def mark_of(kind: str | None) -> str:
    return TYPE_MARKS.get(kind or "", OTHER_MARK)


def observation_row(
    obs: dict[str, Any], *, expand: str | None = None, section: str = "index"
) -> Row:
    """An observation's row; `expand` ("narrative" or "facts") adds its detail lines."""
    detail: tuple[str, ...] = ()
    if expand == "facts":
        detail = tuple(f"- {flat(fact, DETAIL_CHARS)}" for fact in obs.get("facts") or () if fact)
    elif expand:
        text = flat(obs.get("narrative"), DETAIL_CHARS)
        detail = (text,) if text else ()
    title = flat(obs.get("title"), TITLE_CHARS) or "Untitled"
    mark = mark_of(obs.get("type"))
    return Row(int(obs["created_at"]), str(obs["id"]), mark, title, detail, section)


def summary_row(summary: dict[str, Any]) -> Row:
    title = flat(summary.get("request"), TITLE_CHARS) or "Session summary"
    return Row(int(summary["created_at"]), f"S{summary['id']}", SESSION_MARK, title)


def build_rows(memory: Memory, *, full_count: int, full_field: str, summaries: int) -> list[Row]:
    """Every row in dropping order (see the module docstring): the index (the other
    observations and the newest `summaries` summaries), then the `full_count` newest
    observations that are not decisions as findings, then the decisions; each oldest first.
    Findings and decisions are expanded with `full_field`."""
    others = memory.observations
    findings = [
        observation_row(o, expand=full_field, section="finding") for o in others[:full_count]
    ]
    index = [observation_row(obs) for obs in others[full_count:]]
    index += [summary_row(s) for s in memory.summaries[:summaries]]
    decisions = [
        observation_row(o, expand=full_field, section="decision") for o in memory.decisions
    ]
    return [
        *sorted(index, key=_order),
        *sorted(findings, key=_order),
        *sorted(decisions, key=_order),
    ]


def shown(rows: Iterable[Row]) -> list[Row]:
    """Rows in reading order: decisions and findings newest first, then the index oldest first."""
    ordered = sorted(rows, key=_order)
    knowledge = [r for section in SECTIONS[:-1] for r in reversed(ordered) if r.section == section]
    return [*knowledge, *(r for r in ordered if r.section == "index")]


def _order(row: Row) -> tuple[int, bool, int]:
    return row.at, row.ident.startswith("S"), int(row.ident.lstrip("S"))


def index_lines(rows: Sequence[Row]) -> Iterable[tuple[str | None, Row, str]]:
    """(day heading when a new day starts, row, clock or `"` when it repeats the last one)."""
    day = clock = ""
    for row in rows:
        heading = None
        if row.day != day:
            day, clock, heading = row.day, "", row.day
        shown = '"' if row.clock == clock else row.clock
        clock = row.clock
        yield heading, row, shown
