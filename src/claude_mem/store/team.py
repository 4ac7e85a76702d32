"""The SQLite side of team memory: shared projects, the outbox, pulled rows, the cursors.

Triggers (schema.TEAM) fill the outbox in the transaction of each write; `share` adds a
project's existing records. `outbox` reads a batch as it leaves the machine: every record
cleaned again by the store's one privacy pass and carrying its vector when it has one (its
vector ops, in this batch or waiting further on, are acknowledged with it: the server writes
the row once), rows of a project no longer shared left out (and acknowledged with the rest).
`apply_pulled` writes what the server sent in one transaction with the cursors that cover
it, so a pulled row is taken exactly once; applying the same rows again adds nothing (a row
is known by its `origin_id`).
"""

from __future__ import annotations

import array
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import msgspec

from claude_mem.records import Observation, Session
from claude_mem.store.observations import (
    delete_observation,
    insert_observation,
    replace_observation,
)
from claude_mem.store.rows import now_ms, row_dict
from claude_mem.store.summaries import delete_summary, insert_summary
from claude_mem.store.transfer import import_session
from claude_mem.store.write import cleaned
from claude_mem.team.records import (
    KINDS,
    Kind,
    TeamEvent,
    TeamRecord,
    local_record,
    origin,
    own_row,
    shared_fields,
    team_record,
)

TEAM_PLATFORM = "team"  # the local sessions that hold teammates' rows
TABLES: dict[Kind, str] = {"observation": "observations", "summary": "session_summaries"}
Position = tuple[str, int]  # a server stream's (txid, seq)
START: Position = ("0", 0)


@dataclass(frozen=True, slots=True)
class Vector:
    origin_id: str
    values: list[float]


@dataclass(slots=True)
class Outbox:
    """One batch to push: `ids` are the outbox rows it covers (acknowledged after the push)."""

    ids: list[int] = field(default_factory=list)
    records: list[TeamRecord] = field(default_factory=list)
    embeddings: dict[str, list[float]] = field(default_factory=dict)  # origin id → its vector
    events: list[TeamEvent] = field(default_factory=list)
    vectors: list[Vector] = field(default_factory=list)  # of records pushed before


@dataclass(slots=True)
class Applied:
    records: int = 0
    events: int = 0
    newest: int | None = None  # the newest pulled record's time (epoch ms)
    observation_ids: list[int] = field(default_factory=list)  # the observations stored now


def share(conn: sqlite3.Connection, project: str) -> int:
    """Share `project`: from now on its records go to the team, and those it already has are
    queued (their vectors and supersede links too). The rows queued; 0 if it was shared."""
    added = conn.execute(
        "INSERT INTO team_shares (project, shared_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
        (project, now_ms()),
    ).rowcount
    if not added:
        return 0
    before = outbox_size(conn)
    for kind, table in TABLES.items():
        conn.execute(
            f"""INSERT INTO team_outbox (op, kind, row_id, project, created_at)
                SELECT 'record', ?, id, project, ? FROM {table}
                WHERE project = ? AND origin_id IS NULL ORDER BY id""",
            (kind, now_ms(), project),
        )
    for kind, table in TABLES.items():
        conn.execute(
            f"""INSERT INTO team_outbox (op, kind, row_id, project, created_at)
                SELECT 'vector', v.kind, v.row_id, r.project, ? FROM vectors v
                JOIN {table} r ON r.id = v.row_id
                WHERE v.kind = ? AND r.project = ? AND r.origin_id IS NULL ORDER BY v.row_id""",
            (now_ms(), kind, project),
        )
    conn.execute(
        """INSERT INTO team_outbox (op, kind, row_id, project, origin_id, successor_id,
                                  created_at)
           SELECT 'supersede', 'observation', o.id, s.project, o.origin_id, s.id, ?
           FROM observations o JOIN observations s ON s.id = o.superseded_by
           WHERE s.project = ? AND s.origin_id IS NULL ORDER BY o.id""",
        (now_ms(), project),
    )
    return outbox_size(conn) - before


def unshare(conn: sqlite3.Connection, project: str) -> bool:
    """Stop sharing `project`; what of it still waits in the outbox is dropped. Whether it
    was shared. Rows already pushed stay on the server."""
    removed = conn.execute("DELETE FROM team_shares WHERE project = ?", (project,)).rowcount
    conn.execute("DELETE FROM team_outbox WHERE project = ? AND op != 'forget'", (project,))
    return removed > 0


def shared(conn: sqlite3.Connection) -> list[str]:
    return [str(row[0]) for row in conn.execute("SELECT project FROM team_shares ORDER BY project")]


def outbox_size(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM team_outbox").fetchone()[0])


def outbox(
    conn: sqlite3.Connection, machine: str, limit: int = 1000, *, pending: Sequence[int] = ()
) -> Outbox:
    """The oldest `limit` outbox rows as they leave this machine, but for the `pending` ones
    (a batch on its way, not acknowledged yet). A row deleted meanwhile, or of a project no
    longer shared, is left out (its tombstone says what to forget). A record goes with its
    vector, read after every vector op it covers (so never older)."""
    batch = Outbox()
    entries = conn.execute(
        "SELECT id, op, kind, row_id, project, origin_id, successor_id, created_at"
        " FROM team_outbox WHERE id NOT IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT ?",
        (json.dumps(list(pending)), limit),
    ).fetchall()
    carried: dict[tuple[Kind, int], str] = {}  # the batch's records: (kind, row id) → origin
    for entry_id, op, kind, row_id, project, origin_id, successor_id, created_at in entries:
        batch.ids.append(int(entry_id))
        name = origin_id or origin(machine, kind, int(row_id))
        if op == "forget":
            batch.events.append(TeamEvent(kind="forget", origin_id=name, project=project,
                                          machine=machine, created_at=int(created_at)))  # fmt: skip
        elif op == "supersede" and (successor := _team_name(conn, int(successor_id), machine)):
            batch.events.append(TeamEvent(
                kind="supersede", origin_id=name, project=project, machine=machine,
                created_at=int(created_at), successor_origin_id=successor,
            ))  # fmt: skip
        elif op == "record" and (kind, int(row_id)) not in carried:
            record = _record(conn, kind, int(row_id), machine)
            if record is not None:
                batch.records.append(record)
                carried[kind, int(row_id)] = record.origin_id
        elif op == "vector" and (kind, int(row_id)) in carried:
            pass  # its record carries it
        elif op == "vector" and _shared_row(conn, kind, int(row_id)):
            vector = _vector(conn, kind, int(row_id))
            if vector is not None:
                batch.vectors.append(Vector(name, vector))
    if carried:
        batch.ids.extend(_vector_ops(conn, carried, after=batch.ids[-1]))
    for (kind, row_id), name in carried.items():
        vector = _vector(conn, kind, row_id)
        if vector is not None:
            batch.embeddings[name] = vector
    return batch


def _vector_ops(
    conn: sqlite3.Connection, rows: Iterable[tuple[Kind, int]], after: int
) -> list[int]:
    """The vector ops past the batch (`id > after`) of `rows`, whose records carry them."""
    found = conn.execute(
        """SELECT o.id FROM json_each(?) r CROSS JOIN team_outbox o
               ON o.kind = json_extract(r.value, '$[0]')
               AND o.row_id = json_extract(r.value, '$[1]')
           WHERE o.op = 'vector' AND o.id > ?""",
        (json.dumps(list(rows)), after),
    )
    return [int(row[0]) for row in found]


def _shared_row(conn: sqlite3.Connection, kind: Kind, row_id: int) -> bool:
    return bool(
        conn.execute(
            f"""SELECT 1 FROM {TABLES[kind]} r JOIN team_shares s ON s.project = r.project
                WHERE r.id = ? AND r.origin_id IS NULL""",
            (row_id,),
        ).fetchone()
    )


def _team_name(conn: sqlite3.Connection, obs_id: int, machine: str) -> str | None:
    """The origin id the team knows observation `obs_id` by: a teammate's copy's own, or
    this machine's for its own row of a shared project; None for any other row."""
    row = conn.execute(
        """SELECT r.origin_id FROM observations r
           WHERE r.id = ? AND (r.origin_id IS NOT NULL
               OR EXISTS (SELECT 1 FROM team_shares s WHERE s.project = r.project))""",
        (obs_id,),
    ).fetchone()
    if row is None:
        return None
    return str(row[0]) if row[0] is not None else origin(machine, "observation", obs_id)


def _record(conn: sqlite3.Connection, kind: Kind, row_id: int, machine: str) -> TeamRecord | None:
    row = row_dict(
        conn.execute(
            f"""SELECT r.*, s.platform AS platform_, s.host_session_id AS host_session_
                FROM {TABLES[kind]} r JOIN sessions s ON s.id = r.session_id
                JOIN team_shares t ON t.project = r.project
                WHERE r.id = ? AND r.origin_id IS NULL""",
            (row_id,),
        ).fetchone()
    )
    if row is None:
        return None
    platform, session = row.pop("platform_"), row.pop("host_session_")
    stored = msgspec.convert(row, KINDS[kind])
    return team_record(cleaned(stored, redact=True), machine=machine, platform=platform,
                       source_session=session)  # fmt: skip


def _vector(conn: sqlite3.Connection, kind: Kind, row_id: int) -> list[float] | None:
    row = conn.execute(
        "SELECT vector FROM vectors WHERE kind = ? AND row_id = ?", (kind, row_id)
    ).fetchone()
    return None if row is None else array.array("f", bytes(row[0])).tolist()


def ack(conn: sqlite3.Connection, ids: Sequence[int]) -> None:
    """The batch `ids` reached the server: drop those outbox rows."""
    conn.executemany("DELETE FROM team_outbox WHERE id = ?", [(i,) for i in ids])


def newest_pulled(conn: sqlite3.Connection) -> int | None:
    """The time (epoch ms) of the newest teammate's record here, if any."""
    found = [
        conn.execute(f"SELECT max(created_at) FROM {table} WHERE origin_id IS NOT NULL").fetchone()[
            0
        ]
        for table in TABLES.values()
    ]
    times = [int(t) for t in found if t is not None]
    return max(times) if times else None


def visible(conn: sqlite3.Connection) -> set[str]:
    """The team's shared projects as the last pull saw them."""
    return {str(row[0]) for row in conn.execute("SELECT project FROM team_visible")}


def see(conn: sqlite3.Connection, projects: Iterable[str]) -> None:
    conn.execute("DELETE FROM team_visible")
    conn.executemany(
        "INSERT INTO team_visible (project) VALUES (?)", [(project,) for project in projects]
    )


def cursor(conn: sqlite3.Connection, stream: str) -> Position:
    row = conn.execute("SELECT txid, seq FROM team_cursor WHERE stream = ?", (stream,)).fetchone()
    return START if row is None else (str(row[0]), int(row[1]))


def apply_pulled(
    conn: sqlite3.Connection,
    records: Iterable[TeamRecord],
    events: Iterable[TeamEvent],
    cursors: Mapping[str, Position],
    *,
    machine: str,
    redact: bool = True,
) -> Applied:
    """Write pulled records and events and move the cursors, in the caller's one write
    transaction. Each record goes into a local session per source session (platform
    'team'), with its author; a forget deletes the local copy; a supersede link is set when
    both rows are here. Rows already known are skipped."""
    applied = Applied()
    sessions: dict[str, int] = {}
    for record in records:
        if record.machine == machine:
            continue
        known = _local_id(conn, record.kind, record.origin_id, "")
        if known is not None:  # pulled again: its author edited it, or a project's re-pull
            if _edited(conn, record, known, redact):
                applied.records += 1
                applied.observation_ids.append(known)
            continue
        session_id = sessions.get(record.source_session) or _session(conn, record, redact)
        sessions[record.source_session] = session_id
        row = local_record(record, session_id)
        if isinstance(row, Observation):
            obs_id, created = insert_observation(conn, row, redact=redact)
            if created:
                applied.observation_ids.append(obs_id)
        else:
            insert_summary(conn, row, redact=redact)
        applied.records += 1
        applied.newest = max(applied.newest or 0, record.created_at)
    for event in events:
        if event.machine != machine:
            applied.events += _apply_event(conn, event, machine)
    for stream, (txid, seq) in cursors.items():
        conn.execute(
            """INSERT INTO team_cursor (stream, txid, seq) VALUES (?, ?, ?)
               ON CONFLICT (stream) DO UPDATE SET txid = excluded.txid, seq = excluded.seq""",
            (stream, txid, seq),
        )
    return applied


def _edited(conn: sqlite3.Connection, record: TeamRecord, row_id: int, redact: bool) -> bool:
    """Whether the local copy `row_id` of `record` took the record's new content (only an
    observation is edited in place)."""
    if record.kind != "observation":
        return False
    session_id = conn.execute(
        "SELECT session_id FROM observations WHERE id = ?", (row_id,)
    ).fetchone()[0]
    row = local_record(record, int(session_id))
    assert isinstance(row, Observation)
    names = [*shared_fields("observation"), "created_at"]
    return replace_observation(conn, row_id, row, names, redact=redact)


def _session(conn: sqlite3.Connection, record: TeamRecord, redact: bool) -> int:
    host = f"{record.machine}/{record.platform}/{record.source_session}"
    session = Session(platform=TEAM_PLATFORM, host_session_id=host, project=record.project,
                      status="completed", started_at=record.created_at,
                      updated_at=record.created_at, ended_at=record.created_at)  # fmt: skip
    return import_session(conn, session, redact)[0]


def _local_id(conn: sqlite3.Connection, kind: Kind, origin_id: str, machine: str) -> int | None:
    """The local row `origin_id` names: a teammate's copy, or (given this `machine`) one of
    this machine's own rows."""
    row = conn.execute(
        f"SELECT id FROM {TABLES[kind]} WHERE origin_id = ?", (origin_id,)
    ).fetchone()
    if row is not None:
        return int(row[0])
    own = own_row(origin_id, machine) if machine else None
    if own is None or own[0] != kind:
        return None
    found = conn.execute(
        f"SELECT id FROM {TABLES[kind]} WHERE id = ? AND origin_id IS NULL", (own[1],)
    ).fetchone()
    return None if found is None else int(found[0])


def _apply_event(conn: sqlite3.Connection, event: TeamEvent, machine: str) -> int:
    """1 if `event` changed a row here. A tombstone deletes only a teammate's copy (this
    machine's own rows are forgotten by their owner here)."""
    if event.kind == "forget":
        for kind in TABLES:
            row_id = _local_id(conn, kind, event.origin_id, "")
            if row_id is not None:
                delete = delete_observation if kind == "observation" else delete_summary
                return int(delete(conn, row_id))
        return 0
    older = _local_id(conn, "observation", event.origin_id, machine)
    newer = _local_id(conn, "observation", event.successor_origin_id or "", machine)
    if older is None or newer is None or older == newer:
        return 0
    queued = conn.execute("SELECT coalesce(max(id), 0) FROM team_outbox").fetchone()[0]
    changed = conn.execute(  # the team's link wins: it may point elsewhere than the one here
        "UPDATE observations SET superseded_by = ? WHERE id = ? AND superseded_by IS NOT ?",
        (newer, older, newer),
    ).rowcount
    conn.execute(  # the trigger queued it as a link made here: the team's is not sent back
        "DELETE FROM team_outbox WHERE id > ? AND op = 'supersede' AND row_id = ?",
        (queued, older),
    )
    return int(changed)
