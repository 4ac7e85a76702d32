"""`claude-mem search QUERY`: find past work from the terminal.

With a worker running, the search goes through its API (`GET /api/search`), which is hybrid
once the embedding model is loaded; without one, the store is read directly, full text only.
The mode used is printed under the table and included in `--json`. `--team` searches the team
server (CLAUDE_MEM_TEAM_URL) instead: through the worker when one runs, else directly, the
query embedded here. A hit's ID is what `claude-mem show` opens (`T12` for a team server's
record), a teammate's record has its author beside it, and `--full` shows each hit whole.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from claude_mem.commands import show
from claude_mem.text import counted, shorten
from claude_mem.vocabulary import OBSERVATION_TYPES

if TYPE_CHECKING:
    from claude_mem.store.search_queries import SearchFilters

# `author`: the teammate who wrote a record pulled from the team (None for one's own).
FIELDS = ("id", "kind", "type", "title", "time", "project", "files", "superseded_by", "author")
TEAM_FIELDS = (*FIELDS, "origin_id")  # a team server's record: its id there


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "query", nargs="?", default="",
        help="words, a path, an identifier or pasted text (a long one is clipped)",
    )  # fmt: skip
    parser.add_argument("--project", action="append", default=[], help="repeatable")
    parser.add_argument(
        "--type", action="append", default=[],
        help=f"observation type: {', '.join(OBSERVATION_TYPES)} (or any type stored); repeatable",
    )  # fmt: skip
    parser.add_argument(
        "--since",
        help="YYYY-MM-DD, an ISO datetime, epoch ms or a date as `import --git` reads it "
        '("yesterday", "6 months ago")',
    )
    parser.add_argument(
        "--as-of", metavar="DATE",
        help="what held then: records made by DATE (a bare date: that whole day), each "
        "superseded only later; dates as for --since",
    )  # fmt: skip
    parser.add_argument("--limit", type=int, default=20, help="1-100 (default 20)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.add_argument(
        "--full", action="store_true",
        help="each hit whole, as `show` prints it: narrative, facts, files (with --json: "
        "under `record`)",
    )  # fmt: skip
    parser.add_argument(
        "--local", action="store_true", help="read the store directly even if a worker runs"
    )
    parser.add_argument(
        "--team", action="store_true",
        help="search the team server (CLAUDE_MEM_TEAM_URL), beyond the local copy",
    )  # fmt: skip


def _via_worker(filters: SearchFilters, args: argparse.Namespace) -> dict[str, Any] | None:
    """The worker's answer, or None when no worker is running (or it can't answer)."""
    from claude_mem.worker import client, lifecycle

    worker = lifecycle.ready_with_token()
    if worker is None:
        return None
    found, token = worker
    params: list[tuple[str, str]] = [("query", args.query), ("limit", str(args.limit))]
    params += [("project", p) for p in filters.projects] + [("type", t) for t in filters.types]
    if filters.since is not None:
        params.append(("since", str(filters.since)))
    if filters.as_of is not None:
        params.append(("as_of", str(filters.as_of)))
    if args.team:
        params.append(("scope", "team"))
    try:
        response = client.request(
            "GET", "/api/search?" + urlencode(params), port=found.port, host=found.host,
            token=token, timeout=10,
        )  # fmt: skip
    except client.WorkerUnavailable:
        return None
    body = response.json()
    refused = response.status in (400, 409) or (args.team and response.status == 502)
    if refused and isinstance(body, dict):
        raise ValueError(str(body.get("error")))
    if response.status != 200 or not isinstance(body, dict):
        return None
    return body


def _date(flag: str, value: str | None) -> str | None:
    """A date option (`--since`, `--as-of`) as search reads it (a date, an ISO datetime,
    epoch ms), else as epoch ms of a date git reads, as `import --git --since` does
    (`yesterday`, `6 months ago`)."""
    from claude_mem.history.gitlog import GitError, date_seconds
    from claude_mem.search.filters import parse_time

    if value is None:
        return None
    try:
        parse_time(value)
        return value
    except ValueError:
        pass
    try:
        return str(date_seconds(value) * 1000)
    except GitError:
        raise ValueError(
            f"{flag} {value!r} is not a date: use YYYY-MM-DD, an ISO datetime, epoch ms or "
            'words git reads ("yesterday", "6 months ago")'
        ) from None


def _checked(args: argparse.Namespace) -> SearchFilters:
    """The filters, checked against the store: a project it has no memory of is an error
    naming the known ones (as `export` says), types are matched without regard to case. A
    team search's projects are the server's, so they are not checked here."""
    from dataclasses import replace

    from claude_mem.commands.export import unknown_projects
    from claude_mem.search.filters import build_filters, check_types
    from claude_mem.store import facets
    from claude_mem.store.db import open_database

    filters = build_filters(
        projects=args.project, types=args.type, since=args.since, as_of=args.as_of
    )
    if not filters.types and (args.team or not filters.projects):
        return filters
    with open_database() as db:
        problem = None if args.team else unknown_projects(db.read(), filters.projects)
        if problem:
            raise ValueError(problem)
        if filters.types:
            types = check_types(filters.types, facets.observation_types(db.read()))
            filters = replace(filters, types=types)
    return filters


def _local(filters: SearchFilters, args: argparse.Namespace) -> dict[str, Any]:
    from dataclasses import asdict

    from claude_mem.search.hybrid import HybridSearcher
    from claude_mem.store.db import open_database

    with open_database() as db:
        result = HybridSearcher(db).search(args.query, filters, limit=args.limit)
    return {"mode": result.mode, "hits": [asdict(h) for h in result.hits]}


def _team(filters: SearchFilters, args: argparse.Namespace) -> dict[str, Any]:
    """The team server searched from here: the query embedded with the configured model
    (full text only when it is off or can't load)."""
    from dataclasses import asdict

    from claude_mem.search.embed import ModelUnavailable, load_embedder
    from claude_mem.settings import load
    from claude_mem.team import search as team_search

    settings = load()
    try:
        searcher = team_search.searcher(settings.get_str("CLAUDE_MEM_TEAM_URL"))
        vector = None
        if args.query.strip():
            with contextlib.suppress(ModelUnavailable):
                embedder = load_embedder(settings.get_str("CLAUDE_MEM_EMBEDDING_MODEL"))
                vector = embedder.embed([args.query])[0].tolist() if embedder else None
        result = searcher.search(args.query, vector, filters, limit=args.limit)
    except team_search.TeamSearchError as exc:
        raise ValueError(str(exc)) from None
    return {"mode": result.mode, "hits": [asdict(h) for h in result.hits]}


def search(args: argparse.Namespace) -> dict[str, Any]:
    """{query (as searched), clipped, mode, source (worker, store or team server), hits: [{id,
    kind, type, title, time, project, files, superseded_by, author (a teammate's record),
    label (the id `show` opens: 12, S3, P7, and T12 for a team server's record), with --team
    origin_id, with --full record (as `show --json` gives it)}]}."""
    from claude_mem.store.fulltext import clip_query

    if not 1 <= args.limit <= 100:
        raise ValueError("--limit must be between 1 and 100")
    given, args.query = args.query, clip_query(args.query)  # the worker gets a short URL
    args.since, args.as_of = _date("--since", args.since), _date("--as-of", args.as_of)
    filters = _checked(args)
    answer = None if args.local else _via_worker(filters, args)
    source = "worker" if answer is not None else "team server" if args.team else "store"
    if answer is None:
        answer = _team(filters, args) if args.team else _local(filters, args)
    fields = TEAM_FIELDS if args.team else FIELDS
    ids = [("team" if args.team else hit["kind"], hit["id"]) for hit in answer["hits"]]
    hits = [
        {name: hit.get(name) for name in fields} | {"label": show.label(*id_)}
        for hit, id_ in zip(answer["hits"], ids, strict=True)
    ]
    if args.full:
        by_label = {record["label"]: record for record in show.fetch(ids).records}
        hits = [{**hit, "record": by_label.get(hit["label"])} for hit in hits]
    return {"query": args.query, "clipped": args.query != given, "mode": answer["mode"],
            "source": source, "hits": hits}  # fmt: skip


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ms / 1000))


def _title(hit: dict[str, Any]) -> str:
    """The title, and the newer record that replaced it first, so a cut can't hide it."""
    newer = hit.get("superseded_by")
    return f"(superseded by #{newer}) {hit['title']}" if newer is not None else hit["title"]


def _fulltext_note(found: dict[str, Any], *, explicit_local: bool) -> str | None:
    """Why a query found only exact words (or nothing), and how to get meaning-based search:
    always when no worker answered, else only when nothing was found."""
    if found["mode"] != "fulltext" or (found["hits"] and explicit_local):
        return None
    if found["source"] == "store" and not explicit_local:
        return (
            "note: no worker answered, so this was a full-text search (any of the words "
            "matches, records with more of them first); meaning-based search needs the "
            "worker: start it with `claude-mem worker start`"
        )
    if found["hits"]:
        return None
    if found["source"] == "store":
        return "note: --local searches full text only; without it the worker also matches meaning"
    return (
        "note: the worker searched full text only (the embedding model is off or still "
        "loading; see `claude-mem status`)"
    )


def run(args: argparse.Namespace) -> int:
    try:
        found = search(args)
    except ValueError as exc:
        print(f"claude-mem search: {exc}", file=sys.stderr)
        return 2
    if found["clipped"]:
        print(f"note: query clipped to {len(found['query']):,} characters", file=sys.stderr)
    note = _fulltext_note(found, explicit_local=args.local)
    if note:
        print(note, file=sys.stderr)
    if args.json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return 0
    hits = found["hits"]
    how = f"{found['mode']} search via the {found['source']}"
    if not hits:
        print(f"No results ({how}).")
        return 0
    note = f"{counted(len(hits), 'result')}, {how}"
    if args.full:  # each hit whole; one deleted since the search is left out
        shown = show.text([hit["record"] for hit in hits if hit["record"]])
        print("\n".join([shown, "", note]))
    else:
        print("\n".join([*table_lines(hits, shutil.get_terminal_size().columns), "", note]))
    return 0


# --- the table ------------------------------------------------------------------------------

GAP = "  "
HEADINGS = ("ID", "Type", "Time (UTC)", "Project", "Title")
AUTHOR = "Author"  # a column only when a hit is a teammate's
NARROW = 10  # no column is squeezed below this
FILES_INDENT = "    "


def _fit(text: str, width: int) -> str:
    """`text` in exactly `width` columns: cut at a word with '…' when longer, padded."""
    return shorten(text, width).ljust(width)


def _left(path: str, width: int) -> str:
    """A path shortened from the left ('…/conf/loader.py'): the file name matters most."""
    if len(path) <= width:
        return path
    tail = path[len(path) - width + 1 :]
    cut = tail.find("/")
    return "…" + (tail[cut:] if 0 <= cut < len(tail) - 1 else tail)


def files_line(files: list[str], width: int) -> str:
    """The hit's files on one line under it; paths whole (or shortened from the left), never
    split, and "+N more" for those that don't fit."""
    room = width - len(FILES_INDENT)
    shown: list[str] = []
    for index, path in enumerate(files):
        more = f" +{len(files) - index - 1} more" if index < len(files) - 1 else ""
        used = len(", ".join(shown))
        fits = room - used - (2 if shown else 0) - len(more)
        if not shown:
            shown.append(_left(path, max(NARROW, fits)))
        elif len(path) <= fits:
            shown.append(path)
        else:
            return FILES_INDENT + ", ".join(shown) + f" +{len(files) - index} more"
    return FILES_INDENT + ", ".join(shown)


def table_lines(hits: list[dict[str, Any]], width: int) -> list[str]:
    """The hits as a table `width` columns wide: one line per hit (long text cut with '…'),
    then its files on a second line; the title takes whatever the other columns leave. The
    ID is what `show` opens; a teammate's record has its author in a column of its own."""
    authors = any(h.get("author") for h in hits)
    rows = [
        (h["label"], h["type"], _when(h["time"]), h["project"],
         *([h.get("author") or ""] if authors else []), _title(h))
        for h in hits
    ]  # fmt: skip
    headings = (*HEADINGS[:4], *([AUTHOR] if authors else []), HEADINGS[4])
    caps = (12, 12, 16, max(NARROW, width // 6), *([16] if authors else []))
    widths = [
        min(cap, max(len(headings[i]), *(len(row[i]) for row in rows)))
        for i, cap in enumerate(caps)
    ]
    widths.append(max(NARROW, width - sum(widths) - len(GAP) * len(widths)))
    lines = [GAP.join(_fit(h, w) for h, w in zip(headings, widths, strict=True)).rstrip()]
    for hit, row in zip(hits, rows, strict=True):
        lines.append(GAP.join(_fit(c, w) for c, w in zip(row, widths, strict=True)).rstrip())
        if hit["files"]:
            lines.append(files_line(hit["files"], width))
    return lines
