"""Memory as timeline rows: one per observation or session summary, oldest first.

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
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the index (plus detail lines for an expanded observation)."""

    at: int  # epoch ms
    ident: str  # "12" for observation 12, "S4" for summary 4
    mark: str
    title: str
    detail: tuple[str, ...] = ()

    @property
    def day(self) -> str:
        return day_label(self.at)

    @property
    def clock(self) -> str:
        return time.strftime("%H:%M", time.localtime(self.at / 1000))


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


def observation_row(obs: dict[str, Any], *, expand: str | None = None) -> Row:
    """An observation's row; `expand` ("narrative" or "facts") adds its detail lines."""
    detail: tuple[str, ...] = ()
    if expand == "facts":
        detail = tuple(f"- {flat(fact, DETAIL_CHARS)}" for fact in obs.get("facts") or () if fact)
    elif expand:
        text = flat(obs.get("narrative"), DETAIL_CHARS)
        detail = (text,) if text else ()
    title = flat(obs.get("title"), TITLE_CHARS) or "Untitled"
    return Row(int(obs["created_at"]), str(obs["id"]), mark_of(obs.get("type")), title, detail)


def summary_row(summary: dict[str, Any]) -> Row:
    title = flat(summary.get("request"), TITLE_CHARS) or "Session summary"
    return Row(int(summary["created_at"]), f"S{summary['id']}", SESSION_MARK, title)


def build_rows(memory: Memory, *, full_count: int, full_field: str, summaries: int) -> list[Row]:
    """Observations and the newest `summaries` summaries, oldest first; the `full_count`
    newest observations expanded."""
    rows = [
        observation_row(obs, expand=full_field if index < full_count else None)
        for index, obs in enumerate(memory.observations)
    ]
    rows += [summary_row(s) for s in memory.summaries[:summaries]]
    return sorted(rows, key=_order)


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
