"""Search results as compact text for agents: the index (one table in ranked order, a date
column, the files each hit touched) and a timeline (in time order, a heading per day).

Times are UTC, like the session-start context. Record labels are `#12` (observation),
`#S12` (summary) and `#P12` (prompt); `timeline` accepts the same labels as anchors. A record
on the team server (a `scope=team` search) is `T12`, as `claude-mem search --team` prints it
and `claude-mem show` opens it; a teammate's record has its author in a column of its own. A
commit read from the project's git history says so in its type (`decision · history a1b2c3d`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from claude_mem.search.hybrid import Hit, SearchResult, Timeline
from claude_mem.text import counted, shorten
from claude_mem.vocabulary import shown_type

QUERY_SHOWN = 80  # characters of the query echoed back
FILES_CHARS = 120  # the files cell of a search hit
HEADER = "| ID | Time | Type | Title | Tokens |"
INDEX_COLUMNS = ("ID", "Date (UTC)", "Type", "Title", "Files", "Tokens")
AUTHOR = "Author"  # a column only when a hit is a teammate's
TEAM_NOTE = ("T-ids are records on the team server: `claude-mem show T12` prints one whole "
             "(timeline and get_observations read this memory only).")  # fmt: skip
MODE_NOTE = {
    "hybrid": "full text + semantic",
    "fulltext": "full text only",
    "recent": "newest first",
}


def _cell(text: str) -> str:
    """A hit's title as a table cell: already one line and word-cut by search (Hit.title)."""
    return text.replace("|", "\\|")


def _title(hit: Hit) -> str:
    """A hit's title cell, with the newer record that replaced it when one did."""
    title = _cell(hit.title) or "Untitled"
    if hit.superseded_by is not None:
        title += f" (superseded by #{hit.superseded_by})"
    return title


def _day(ms: int) -> str:
    return time.strftime("%b %d, %Y", time.gmtime(ms / 1000))


def _clock(ms: int) -> str:
    return time.strftime("%H:%M", time.gmtime(ms / 1000))


def _date(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ms / 1000))


def _files(hit: Hit) -> str:
    """The files a hit read or changed (the first few, as search lists them)."""
    return _cell(shorten(", ".join(hit.files), FILES_CHARS)) or "-"


def _table(hits: Iterable[Hit], anchor: Hit | None = None) -> list[str]:
    """The timeline's rows under a heading per day: its items are in time order."""
    lines: list[str] = []
    day = ""
    for hit in hits:
        if _day(hit.time) != day:
            day = _day(hit.time)
            lines += ["", f"### {day}", HEADER, "|---|---|---|---|---|"]
        mark = " <- **ANCHOR**" if hit is anchor else ""
        title = _title(hit)
        kind = shown_type(hit.type, hit.source, hit.commit)
        lines.append(
            f"| {hit.label} | {_clock(hit.time)} | {kind} | {title}{mark} | ~{hit.token_cost} |"
        )
    return lines


def _index_table(hits: list[Hit], team: bool) -> list[str]:
    """One table, a row per hit in ranked order: its date is a column, not a heading, since
    ranked hits are not in time order; a teammate's record names its author."""
    authors = any(hit.author for hit in hits)
    columns = [*INDEX_COLUMNS[:4], *([AUTHOR] if authors else []), *INDEX_COLUMNS[4:]]
    rows = []
    for hit in hits:
        cells = [
            f"T{hit.id}" if team else hit.label,
            _date(hit.time),
            shown_type(hit.type, hit.source, hit.commit),
            _title(hit),
            *([_cell(hit.author or "") or "-"] if authors else []),
            _files(hit),
            f"~{hit.token_cost}",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    header = "| " + " | ".join(columns) + " |"
    return ["", header, "|" + "---|" * len(columns), *rows]


def index_text(query: str, result: SearchResult, offset: int = 0, *, team: bool = False) -> str:
    """The search index: one table row per hit, in ranked order; `team`: the hits are the
    team server's records."""
    shown = _cell(shorten(query, QUERY_SHOWN))
    if not result.hits:
        return f'No results for "{shown}" ({MODE_NOTE[result.mode]}).'
    lines = [
        f'Found {counted(len(result.hits), "result")} for "{shown}" ({MODE_NOTE[result.mode]})'
        + (f", from #{offset + 1}" if offset else "")
        + ("; more with a higher offset" if result.has_more else ""),
        *_index_table(result.hits, team),
        "",
        TEAM_NOTE
        if team
        else "Next: timeline(anchor=ID) for what happened around a hit; "
        "get_observations([IDs]) for full records.",
    ]
    return "\n".join(lines)


def timeline_text(timeline: Timeline, heading: str) -> str:
    """A window of records in time order, the anchor marked."""
    anchor = timeline.items[timeline.anchor_index] if timeline.anchor_index is not None else None
    before = timeline.anchor_index if anchor is not None else None
    lines = [f"# Timeline around {heading}"]
    if anchor is not None:
        lines.append(f"**Anchor:** {anchor.label} - {_cell(anchor.title) or 'Untitled'}")
    if before is not None:
        after = len(timeline.items) - before - 1
        count = len(timeline.items)
        lines.append(f"**Window:** {before} before -> {after} after | **Items:** {count}")
    else:
        lines.append(f"**Items:** {len(timeline.items)} from {_day(timeline.anchor_time)}")
    lines += _table(timeline.items, anchor)
    return "\n".join(lines)
