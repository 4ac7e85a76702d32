"""`claude-mem show ID…`: whole records, by the ids search prints.

`12` is an observation, `S3` a session summary, `P7` a prompt (a leading `#` is allowed, as
the MCP tools print them), `T12` a record on the team server (what `search --team` prints),
read as the connected member. The local ones are read from the store directly, as
`search --local` reads it: a running worker changes nothing. An id that names nothing is said
on stderr and the command exits 1, after showing the others. `search --full` shows its hits
with the same text.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any

KIND_PREFIX = {"observation": "", "summary": "S", "prompt": "P", "team": "T"}
_ID = re.compile(r"#?([SPT]?)(\d{1,18})", re.IGNORECASE)
# A summary's parts, in the order a session goes: what was asked, then what came of it.
SUMMARY_PARTS = (("request", "Request"), ("investigated", "Investigated"),
                 ("learned", "Learned"), ("completed", "Completed"),
                 ("next_steps", "Next steps"), ("notes", "Notes"))  # fmt: skip
LISTS = (("facts", "Facts"), ("files_modified", "Files modified"), ("files_read", "Files read"),
         ("concepts", "Concepts"))  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "ids", nargs="+", metavar="ID",
        help="as search prints them: 12 (observation), S3 (summary), P7 (prompt), "
        "T12 (a team server's record, from search --team)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


@dataclass
class Found:
    """The records found (label, kind, then the record's fields), in the order asked, and
    why the others are not there."""

    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def label(kind: str, record_id: int) -> str:
    """`12`, `S3`, `P7`, `T12`: the id as search prints it and `show` reads it."""
    return KIND_PREFIX[kind] + str(record_id)


def parse(text: str) -> tuple[str, int] | None:
    """(kind, id) of an id as printed, or None when it is none."""
    match = _ID.fullmatch(text.strip())
    if match is None:
        return None
    kind = next(k for k, p in KIND_PREFIX.items() if p == match.group(1).upper())
    return kind, int(match.group(2))


def fetch(wanted: list[tuple[str, int]]) -> Found:
    """The records `wanted` names, each once, in that order: local ones from the store, team
    ones from the team server (CLAUDE_MEM_TEAM_URL)."""
    from claude_mem.store.context_queries import records
    from claude_mem.store.db import open_database
    from claude_mem.store.search_queries import TABLES
    from claude_mem.store.sessions import get_session

    wanted = list(dict.fromkeys(wanted))
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    problems: list[str] = []
    local = [kind for kind in TABLES if any(k == kind for k, _ in wanted)]
    if local:
        with open_database() as db:
            conn = db.read()
            for kind in local:
                ids = [i for k, i in wanted if k == kind]
                rows.update(((kind, i), row) for i, row in records(conn, TABLES[kind], ids).items())
            for (kind, _), row in rows.items():
                if kind == "prompt":  # a prompt's project is its session's
                    session = get_session(conn, int(row["session_id"]))
                    row["project"] = session["project"] if session else None
    team = [i for k, i in wanted if k == "team"]
    if team:
        try:
            rows.update((("team", seq), row) for seq, row in _team(team).items())
        except ValueError as exc:
            problems.append(str(exc))
            team = []  # said once, not once per id
    found = Found(problems=problems)
    for kind, record_id in wanted:
        got = rows.get((kind, record_id))
        if got is not None:  # a team row says its own kind
            found.records.append({"label": label(kind, record_id), "kind": kind, **got})
        elif kind != "team" or record_id in team:
            found.problems.append(f"no {_noun(kind)} {label(kind, record_id)}")
    return found


def _noun(kind: str) -> str:
    return "record on the team server" if kind == "team" else kind


def _team(seqs: list[int]) -> dict[int, dict[str, Any]]:
    """The team server's records by seq, as local rows with the seq as their id and their
    kind; ValueError when no team is configured or the server does not answer."""
    import msgspec

    from claude_mem.records import Observation
    from claude_mem.settings import load
    from claude_mem.team import search as team_search

    try:
        searcher = team_search.searcher(load().get_str("CLAUDE_MEM_TEAM_URL"))
        found = searcher.records(seqs)
    except team_search.TeamSearchError as exc:
        raise ValueError(str(exc)) from None
    return {
        seq: {**msgspec.to_builtins(record), "id": seq,
              "kind": "observation" if isinstance(record, Observation) else "summary"}
        for seq, record in found.items()
    }  # fmt: skip


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms / 1000))


def record_lines(record: dict[str, Any]) -> list[str]:
    """One record as text: a heading line (id, kind or type, time, project, author), then
    every part it has, whole."""
    kind = record["kind"]
    what = (record.get("type") or kind) if kind == "observation" else kind
    if kind == "prompt":
        what = f"prompt {record.get('prompt_number')} of session {record.get('session_id')}"
    head = [record["label"], what, _when(int(record.get("created_at") or 0))]
    head += [f"project {record['project']}"] if record.get("project") else []
    head += [f"by {record['author']}"] if record.get("author") else []
    if record.get("superseded_by") is not None:
        head.append(f"superseded by {record['superseded_by']}")
    lines = ["  ·  ".join(str(part) for part in head)]
    if kind == "prompt":
        return [*lines, *_block(record.get("text"))]
    if kind == "summary":
        for name, heading in SUMMARY_PARTS:
            if record.get(name):
                lines += [f"{heading}:", *_block(record[name], "  ")]
        return lines
    lines += [text for text in (record.get("title"), record.get("subtitle")) if text]
    if record.get("narrative"):
        lines += ["", *_block(record["narrative"])]
    for name, heading in LISTS:
        values = [str(v) for v in record.get(name) or () if v]
        if values and name == "facts":
            lines += ["", f"{heading}:", *(f"  - {v}" for v in values)]
        elif values:
            lines.append(f"{heading}: {', '.join(values)}")
    return lines


def _block(text: object, indent: str = "") -> list[str]:
    return [indent + line for line in str(text or "").splitlines()]


def text(records: list[dict[str, Any]]) -> str:
    """Records one after another, a blank line between."""
    blocks = ["\n".join(record_lines(record)) for record in records]
    return "\n\n".join(blocks)


def run(args: argparse.Namespace) -> int:
    wanted: list[tuple[str, int]] = []
    problems: list[str] = []
    for given in args.ids:
        parsed = parse(given)
        if parsed is None:
            problems.append(
                f"{given!r} is not a record id: 12 (observation), S3 (summary), P7 (prompt) "
                "or T12 (team server)"
            )
        else:
            wanted.append(parsed)
    found = fetch(wanted) if wanted else Found()
    problems += found.problems
    if args.json:
        print(json.dumps({"records": found.records, "errors": problems}, indent=2,
                         ensure_ascii=False))  # fmt: skip
    elif found.records:
        print(text(found.records))
    for problem in problems:
        print(f"claude-mem show: {problem}", file=sys.stderr)
    return 1 if problems else 0
