"""A shared record, declared once: what push sends to the team server and pull reads back.

Its `fields` are the local kind's own columns (`claude_mem.records`) less the ones that only
make sense in one database (ids, session, links, derived hashes, team columns): adding a field
to an observation shares it with no change here. `search_text` is the text the local full
text indexes (the kind's INDEXED columns), so both sides search the same words.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import Any, Literal

import msgspec

from claude_mem import locations, paths, records
from claude_mem.records import Observation, Summary

Kind = Literal["observation", "summary"]
KINDS: dict[Kind, type[Observation] | type[Summary]] = {
    "observation": Observation,
    "summary": Summary,
}
# Columns that belong to one database, or that a record carries outside `fields` (a
# supersede link, and the `valid_to` it sets, travel as events).
LOCAL = frozenset(
    {"id", "session_id", "superseded_by", "valid_to", "content_hash", "author", "origin_id",
     "project", "created_at"}
)  # fmt: skip
MACHINE_FILE = "machine-id"


class TeamRecord(msgspec.Struct, kw_only=True):
    """One observation or summary as the team server stores it (`records.body`)."""

    kind: Kind
    origin_id: str  # "<machine>/<kind>/<local id>": unique in the team
    content_hash: str
    project: str
    type: str | None
    title: str | None
    created_at: int  # epoch ms
    machine: str
    source_session: str  # the host's session id on the machine that wrote it
    platform: str  # the agent that wrote it
    fields: dict[str, Any]
    search_text: str
    member: str | None = None  # set by the server (the writing role); None when pushed


class TeamEvent(msgspec.Struct, kw_only=True):
    """A supersede link or a forget tombstone, by origin id."""

    kind: Literal["supersede", "forget"]
    origin_id: str
    project: str
    successor_origin_id: str | None = None
    machine: str
    created_at: int


def origin(machine: str, kind: Kind, row_id: int) -> str:
    return f"{machine}/{kind}/{row_id}"


def own_row(origin_id: str, machine: str) -> tuple[Kind, int] | None:
    """(kind, local id) when `origin_id` names a row this machine wrote, else None."""
    owner, _, rest = origin_id.partition("/")
    kind, _, number = rest.partition("/")
    found = next((k for k in KINDS if k == kind), None)
    if owner != machine or found is None or not number.isdigit():
        return None
    return found, int(number)


def shared_fields(kind: Kind) -> tuple[str, ...]:
    return tuple(c.name for c in records.columns(KINDS[kind]) if c.name not in LOCAL)


def search_text(kind: Kind, fields: dict[str, Any]) -> str:
    """The kind's full-text columns' words, as the local FTS table holds them."""
    parts: list[str] = []
    for name in records.indexed(KINDS[kind]):
        value = fields.get(name)
        parts.extend(value if isinstance(value, list) else [value or ""])
    return "\n".join(str(part) for part in parts if part)


def content_hash(kind: Kind, fields: dict[str, Any]) -> str:
    """Identity of a record's shared content (the same row pushed twice is one)."""
    material = msgspec.json.encode([kind, fields], order="sorted")
    return hashlib.sha256(material).hexdigest()[:32]


def team_record(
    record: Observation | Summary, *, machine: str, platform: str, source_session: str
) -> TeamRecord:
    """`record` (a stored row, already cleaned) as it leaves this machine."""
    kind: Kind = "observation" if isinstance(record, Observation) else "summary"
    fields = {name: _storable(getattr(record, name)) for name in shared_fields(kind)}
    return TeamRecord(
        kind=kind,
        origin_id=origin(machine, kind, record.id),
        content_hash=content_hash(kind, fields),
        project=record.project,
        type=record.type if isinstance(record, Observation) else None,
        title=_storable(record.title if isinstance(record, Observation) else record.request),
        created_at=record.created_at,
        machine=machine,
        source_session=source_session,
        platform=platform,
        fields=fields,
        search_text=search_text(kind, fields),
    )


def _storable(value: Any) -> Any:
    """`value` without NUL characters, which PostgreSQL text and jsonb cannot hold."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_storable(item) for item in value]
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    return value


def local_record(team: TeamRecord, session_id: int) -> Observation | Summary:
    """A pulled record as a row of the local store: in `session_id`, marked as a teammate's."""
    values = {
        **{k: v for k, v in team.fields.items() if k in shared_fields(team.kind)},
        "session_id": session_id,
        "project": team.project,
        "created_at": team.created_at,
        "author": team.member,
        "origin_id": team.origin_id,
    }
    if team.kind == "observation":
        values["source"] = "team"
    return msgspec.convert(values, KINDS[team.kind])


def machine_id() -> str:
    """This machine's id (`<data dir>/machine-id`, uuid4 hex, 0600), made once: concurrent
    first callers agree, since only one link into place can win."""
    path = Path(locations.data_file(MACHINE_FILE))
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    paths.ensure_dir(path.parent)
    tmp = path.with_name(f".{MACHINE_FILE}.{os.getpid()}.tmp")
    locations.write_private_file(tmp, uuid.uuid4().hex + "\n")
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return path.read_text().strip()
