"""Memory as rows: one per observation or session summary, in three sections.

The current decisions come first, then the newest findings (expanded, each naming its main
files), then the recent index in time order. Decisions take at most their share of the
budget (`gather.DECISION_SHARE`), the most relevant first. Under a tight budget the index goes
first, oldest rows first, then findings, then decisions, the least relevant first, and the
`NEWEST` newest observations last of all, whatever their section: the newest work is always
shown. `build_rows` returns rows in that dropping order, `shown` in reading order.

Times are shown in the local time zone of the process (the user's), grouped by calendar day.
Nothing here reads the clock: the same rows always give the same text (prompt caching).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from claude_mem.context.gather import Memory
from claude_mem.text import shorten

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
NEWEST = 5  # the newest observations: the last rows to go
MAIN_FILES = 3  # files a finding names
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
    def chars(self) -> int:
        """The row's length in the agent text, newline included (what budget fitting counts):
        an index line `12 09:04 ● title`, or an expanded row's `**12** Nov 5 09:04 ● **title**`
        and its indented detail lines."""
        head = 10 if self.section == "index" and not self.detail else 26
        return len(self.ident) + len(self.title) + head + sum(len(d) + 3 for d in self.detail)

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


def mark_of(kind: str | None) -> str:
    return TYPE_MARKS.get(kind or "", OTHER_MARK)


def observation_row(
    obs: dict[str, Any], *, expand: str | None = None, section: str = "index"
) -> Row:
    """An observation's row; `expand` ("narrative" or "facts") adds its detail lines."""
    detail: tuple[str, ...] = ()
    if expand == "facts":
        facts = (f for f in obs.get("facts") or () if f)
        detail = tuple(f"- {shorten(fact, DETAIL_CHARS)}" for fact in facts)
    elif expand:
        text = shorten(obs.get("narrative") or "", DETAIL_CHARS)
        detail = (text,) if text else ()
    files = main_files(obs) if section == "finding" else []
    detail += (f"Files: {', '.join(files)}",) if files else ()
    title = shorten(obs.get("title") or "", TITLE_CHARS) or "Untitled"
    mark = mark_of(obs.get("type"))
    return Row(int(obs["created_at"]), str(obs["id"]), mark, title, detail, section)


def main_files(obs: dict[str, Any]) -> list[str]:
    """The files an observation is about, at most MAIN_FILES, each its last two path parts:
    those it modified, or when it modified none (an audit, a hunt) those it read."""
    files = obs.get("files_modified") or obs.get("files_read") or ()
    short = ("/".join(str(path).rstrip("/").split("/")[-2:]) for path in files if path)
    return list(dict.fromkeys(short))[:MAIN_FILES]


def summary_row(summary: dict[str, Any]) -> Row:
    title = shorten(summary.get("request") or "", TITLE_CHARS) or "Session summary"
    return Row(int(summary["created_at"]), f"S{summary['id']}", SESSION_MARK, title)


def build_rows(
    memory: Memory, *, full_count: int, full_field: str, summaries: int, decision_chars: int
) -> tuple[list[Row], int]:
    """Every row in dropping order (see the module docstring), and how many decisions were
    left out for their share: the index (the other observations and the newest `summaries`
    summaries) oldest first, then the `full_count` newest observations that are not decisions
    as findings, oldest first, then the decisions that fit `decision_chars` (most relevant
    first), least relevant first, then the NEWEST newest observations, oldest first.
    Findings and decisions are expanded with `full_field`."""
    others = memory.observations
    findings = [
        observation_row(o, expand=full_field, section="finding") for o in others[:full_count]
    ]
    index = [observation_row(obs) for obs in others[full_count:]]
    decisions = [
        observation_row(o, expand=full_field, section="decision") for o in memory.decisions
    ]
    newest = sorted([*index, *findings, *decisions], key=_order)[-NEWEST:]
    latest = {row.ident for row in newest}
    index += [summary_row(s) for s in memory.summaries[:summaries]]
    kept: list[Row] = []
    room, left_out = decision_chars, 0
    for row in decisions:
        if row.ident in latest:  # shown whatever its share: it is the newest work too
            room -= row.chars
            continue
        if row.chars > room:
            left_out += 1
            continue
        room -= row.chars
        kept.append(row)
    rest = [row for row in (*index, *findings) if row.ident not in latest]
    return [
        *sorted((r for r in rest if r.section == "index"), key=_order),
        *sorted((r for r in rest if r.section == "finding"), key=_order),
        *reversed(kept),
        *newest,
    ], left_out


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
