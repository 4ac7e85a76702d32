"""Turning user-given filter values (dates, a cwd, repeated options) into `SearchFilters`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from claude_mem.project import resolve_project
from claude_mem.store.rows import safe_text
from claude_mem.store.search_queries import SearchFilters
from claude_mem.vocabulary import OBSERVATION_TYPES

MAX_VALUES = 50  # per repeatable filter
MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


def parse_time(value: str | int | None, *, end_of_day: bool = False) -> int | None:
    """Epoch ms from epoch ms (digits) or an ISO date/datetime (naive = UTC).

    A bare date used as an upper bound (`end_of_day`) covers that whole day. ValueError
    names the value when it is neither.
    """
    if value is None:
        return None
    if isinstance(value, int):
        ms = value
    else:
        text = value.strip()
        if not text:
            return None
        if text.isascii() and text.isdigit():
            ms = int(text)
        else:
            try:
                when = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise ValueError(
                    f"{value!r} is not a date: use YYYY-MM-DD, an ISO datetime or epoch ms"
                ) from None
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            ms = int(when.timestamp() * 1000)
            if end_of_day and len(text) == 10:
                ms += 86_400_000 - 1
    if not 0 <= ms <= MAX_MS:
        raise ValueError(f"{value!r} is out of range")
    return ms


def _values(items: Iterable[str] | None, name: str) -> tuple[str, ...]:
    values = tuple(dict.fromkeys(safe_text(v).strip() for v in items or () if v and v.strip()))
    if len(values) > MAX_VALUES:
        raise ValueError(f"at most {MAX_VALUES} {name} values")
    return values


def build_filters(
    *,
    projects: Iterable[str] | None = None,
    cwd: str | None = None,
    excluded: str = "",
    types: Iterable[str] | None = None,
    concepts: Iterable[str] | None = None,
    files: Iterable[str] | None = None,
    since: str | int | None = None,
    until: str | int | None = None,
    platforms: Iterable[str] | None = None,
    session_id: int | None = None,
    as_of: str | int | None = None,
) -> SearchFilters:
    """Filters from raw values; a `cwd` adds its project and, in a worktree, its parent's.
    A bare date as `until` or `as_of` covers that whole day.

    ValueError (with a message fit for a 400) on a bad date or too many values.
    """
    project_list = list(_values(projects, "project"))
    if cwd is not None and cwd.strip():
        try:
            project_list += resolve_project(safe_text(cwd), excluded=excluded).all_projects
        except (OSError, ValueError):
            raise ValueError("cwd is not a usable path") from None
    start, end = parse_time(since), parse_time(until, end_of_day=True)
    if start is not None and end is not None and start > end:
        raise ValueError("since is after until")
    return SearchFilters(
        projects=tuple(dict.fromkeys(project_list)),
        types=_values(types, "type"),
        concepts=_values(concepts, "concept"),
        files=_values(files, "file"),
        since=start,
        until=end,
        platforms=_values(platforms, "platform"),
        session_id=session_id,
        as_of=parse_time(as_of, end_of_day=True),
    )


def check_types(types: Iterable[str], stored: Iterable[str]) -> tuple[str, ...]:
    """The types to filter by: each given one matched to the known and stored types without
    regard to case (`Bugfix` is `bugfix`). ValueError naming the valid types when a type is
    none of them: a misspelt `--type` would otherwise find nothing without a word."""
    known = list(dict.fromkeys([*OBSERVATION_TYPES, *stored]))
    matched = {t: [k for k in known if k.casefold() == t.casefold()] for t in types}
    unknown = [t for t, found in matched.items() if not found]
    if unknown:
        names = ", ".join(repr(t) for t in unknown)
        raise ValueError(f"unknown type {names}: the types are {', '.join(known)}")
    return tuple(dict.fromkeys(k for found in matched.values() for k in found))
