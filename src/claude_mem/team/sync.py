"""The worker's team sync: one thread pushes the outbox to the team server and pulls the
team's rows into the local store, a round every `CLAUDE_MEM_TEAM_SYNC_S` seconds.

Push: a batch of the outbox (`store.team.outbox`: privacy-cleaned again) goes in one server
transaction sent in one round trip (a pipeline), one statement per table over arrays of the
batch's rows: records with their vectors, added once by origin id (a record already there
is rewritten only when its content changed, an edit in place here, or gets the vector it
lacked), events by kind and origin id (a supersede link that changed replaces the team's
link), then the vectors made after their records were pushed, one UPDATE for all. A
record goes with its vector whenever it has one, so the server writes and indexes that row
once; vectors go in pgvector's binary form. Only after the transaction commits are those
outbox rows dropped: a crash in between pushes them again, which adds nothing. Up to
`PUSH_CONNECTIONS` batches are in flight at once, each in its own transaction on its own
connection (the second one opened for a push that needs it and closed after it): a server
backend inserts into the HNSW index, most of a push's cost, on one core, so two use both
(bench/team_sync_bench.py). Meanwhile this thread reads and makes ready the next batch (the
outbox rows not in flight), so the client's part (the outbox read and its privacy pass)
overlaps the server's. A batch that names rows pushed before it (a link, a tombstone, a
vector for a record already sent) waits for every batch before it to commit, so nothing
overtakes the row it names; batches of records alone name nothing and go side by side.

Pull: rows below the oldest transaction still running (`pg_snapshot_xmin`), in `(txid, seq)`
order after the cursor, so a row that commits later can never fall behind a cursor already
past it; our own machine's rows move the cursor without their bodies. Events are read in the
same snapshot as the last records batch, so a link or tombstone never arrives before its
record. Each chunk of pulled rows commits locally with the cursor that covers it. A rewritten
row takes a new place in that order, so it is pulled again like a new one and updates the
copy here. A project the team shares again, after nobody did, is pulled from its start up
to the cursors (`_catch_up`): the cursors passed its rows while nobody could read them.

A failed round (the server away, a timeout) is recorded in the status, password redacted,
and retried with a backoff up to `MAX_BACKOFF_S`; hooks never wait on any of it, and the
writer is held only for one chunk at a time. psycopg loads on the first connection.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from claude_mem import log
from claude_mem.store import Database
from claude_mem.store import team as team_store
from claude_mem.store.rows import now_ms
from claude_mem.team import pg, schema
from claude_mem.team.records import TeamEvent, TeamRecord, machine_id
from claude_mem.team.status import TeamError, TeamStatus, local_status

if TYPE_CHECKING:
    import psycopg

PUSH_BATCH = 1000  # outbox rows per server transaction
PUSH_CONNECTIONS = 2  # batches in flight at once, each on its own connection
PULL_BATCH = 1000  # server rows per read
APPLY_CHUNK = 200  # pulled rows per local transaction: the writer is never held long
MAX_BACKOFF_S = 30.0
STATEMENT_TIMEOUT_S = 30.0  # a round's longest statement: a stalled server fails the round
KEPT_ERRORS = 10
RECORDS, EVENTS = "records", "events"

# One statement per table and batch, each column an array (sent binary: nothing to quote). A
# record already on the server is rewritten by its author when its content changed (edited
# in place here), taking a new place in the pull order; one pushed again as it was (a push
# whose acknowledgement was lost) is left as it is, but for a vector it lacked. A supersede
# link that changed replaces the team's link of that record, a new place in the pull order
# too; a forget is written once.
_INSERT_RECORDS = """
INSERT INTO claude_mem.records AS r (origin_id, content_hash, kind, project, type, title,
    created_at, machine, source_session, body, search_text, embedding)
SELECT * FROM unnest(%b::text[], %b::text[], %b::text[], %b::text[], %b::text[], %b::text[],
    %b::bigint[], %b::text[], %b::text[], %b::jsonb[], %b::text[], %b::vector[])
ON CONFLICT (team_id, origin_id) DO UPDATE SET
    embedding = COALESCE(excluded.embedding, r.embedding),
    content_hash = excluded.content_hash, type = excluded.type, title = excluded.title,
    created_at = excluded.created_at, body = excluded.body, search_text = excluded.search_text,
    txid = CASE WHEN r.content_hash = excluded.content_hash THEN r.txid
                ELSE pg_current_xact_id() END,
    seq = CASE WHEN r.content_hash = excluded.content_hash THEN r.seq
               ELSE nextval('claude_mem.records_seq_seq') END
WHERE r.member = session_user AND (r.content_hash <> excluded.content_hash
    OR (r.embedding IS NULL AND excluded.embedding IS NOT NULL))"""
_INSERT_EVENTS = """
INSERT INTO claude_mem.events AS e (kind, project, origin_id, successor_origin_id, machine,
    created_at)
SELECT * FROM unnest(%b::text[], %b::text[], %b::text[], %b::text[], %b::text[], %b::bigint[])
ON CONFLICT (team_id, kind, origin_id) DO UPDATE SET
    successor_origin_id = excluded.successor_origin_id, machine = excluded.machine,
    created_at = excluded.created_at, member = session_user, txid = pg_current_xact_id(),
    seq = nextval('claude_mem.events_seq_seq')
WHERE e.kind = 'supersede'
    AND e.successor_origin_id IS DISTINCT FROM excluded.successor_origin_id"""
_SET_EMBEDDINGS = """
UPDATE claude_mem.records r SET embedding = u.embedding
FROM unnest(%b::text[], %b::vector[]) AS u (origin_id, embedding)
WHERE r.team_id = (SELECT claude_mem.current_team()) AND r.origin_id = u.origin_id
  AND r.member = session_user"""
_SHARE = """
INSERT INTO claude_mem.shared_projects (project) VALUES (%s)
ON CONFLICT (team_id, project, shared_by) DO NOTHING"""
_UNSHARE = """
DELETE FROM claude_mem.shared_projects WHERE shared_by = session_user AND project = %s"""
_MY_SHARES = "SELECT project FROM claude_mem.shared_projects WHERE shared_by = session_user"
# Pulls, in (txid, seq) order after a position: own rows come without their body (they only
# move the cursor). The stream's rows below the horizon, or a project's up to the cursor.
_PULL = """
SELECT {columns} FROM claude_mem.{table}
WHERE team_id = claude_mem.current_team() AND (txid, seq) > (%(txid)s::xid8, %(seq)s)
  AND {until}
ORDER BY txid, seq LIMIT %(limit)s"""
_COLUMNS = {
    RECORDS: "txid::text, seq, member, machine,"
    " CASE WHEN machine = %(machine)s THEN NULL ELSE body END",
    EVENTS: "txid::text, seq, kind, project, origin_id, successor_origin_id, machine, created_at",
}
_PULL_NEW = {
    stream: _PULL.format(columns=columns, table=stream, until="txid < %(horizon)s::xid8")
    for stream, columns in _COLUMNS.items()
}
_PULL_PROJECT = {
    stream: _PULL.format(
        columns=columns,
        table=stream,
        until="project = %(project)s AND (txid, seq) <= (%(to_txid)s::xid8, %(to_seq)s)",
    )
    for stream, columns in _COLUMNS.items()
}
_VISIBLE = "SELECT DISTINCT project FROM claude_mem.shared_projects"
# A writer whose server lacks migration 0006 (it may add records but not rewrite them).
_BEHIND = """SELECT has_table_privilege('claude_mem.records', 'INSERT')
    AND NOT has_column_privilege('claude_mem.records', 'body', 'UPDATE')"""


@dataclass(frozen=True, slots=True)
class _Batch:
    """An outbox batch made ready to send: the outbox rows it covers (acknowledged once it
    has committed), its statements with their column arrays, the records and events in it."""

    ids: list[int]
    statements: list[tuple[str, list[list[object]]]]
    count: int
    names_earlier: bool  # it holds events or vectors of records pushed before it


_Flight = tuple[_Batch, "psycopg.Connection[tuple[object, ...]]", "futures.Future[None]"]


class TeamSync:
    """The sync thread of one worker and what it has done (`status`)."""

    def __init__(
        self,
        db: Database,
        url: str,
        *,
        interval_s: float = 1.0,
        on_pulled: Callable[[list[int]], None] = lambda ids: None,
    ) -> None:
        self.db = db
        self.url = pg.check_url(url)
        self.interval_s = interval_s
        self.machine = machine_id()
        self._on_pulled = on_pulled
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._lifecycle = threading.Lock()  # one start or stop at a time
        # Send push batches (one thread per batch in flight) while this one reads the next;
        # made on first use, shut down by `stop`.
        self._senders: futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()  # guards what status() reads
        self._team: str | None = None
        self._held: set[str] | None = None  # the server's shares of this member, once a round
        self._last_push_at: int | None = None
        self._last_pull_at: int | None = None
        self._last_error: str | None = None
        self._errors: deque[TeamError] = deque(maxlen=KEPT_ERRORS)
        self._newest: int | None = None  # read by the thread when it starts
        self.pushed = 0
        self.pulled = 0
        self.rounds = 0  # rounds finished without an error

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the sync thread; again after `stop` too (the settings changed, the member
        joined again): it goes on from the local cursors and outbox."""
        with self._lifecycle:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stopping.clear()
            self._thread = threading.Thread(target=self._run, name="claude-mem-team", daemon=True)
            self._thread.start()

    def wake(self) -> None:
        """Something to push (a project was shared): go now rather than at the next round."""
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread after its round, and close its connections; `start` goes on."""
        with self._lifecycle:
            self._stopping.set()
            self._wake.set()
            if self._thread is not None:
                self._thread.join(timeout)
                if not self._thread.is_alive():  # else a `start` lets it go on: one thread
                    self._thread = None
            senders, self._senders = self._senders, None
            if senders is not None:
                senders.shutdown(wait=True)
            self._disconnect()

    def status(self) -> TeamStatus:
        found = local_status(self.db.read(), self.url)
        with self._lock:
            newest = self._newest
            return msgspec.structs.replace(
                found,
                team=self._team,
                last_push_at=self._last_push_at,
                last_pull_at=self._last_pull_at,
                last_error=self._last_error,
                errors=list(self._errors),
                lag_s=None if newest is None else max(0.0, (now_ms() - newest) / 1000),
                pushed=self.pushed,
                pulled=self.pulled,
            )

    def _run(self) -> None:
        newest = team_store.newest_pulled(self.db.read())
        with self._lock:
            self._newest = max(self._newest or 0, newest or 0) or None
        delay = self.interval_s
        while not self._stopping.is_set():
            try:
                self.sync_once()
                delay = self.interval_s
            except Exception as exc:  # any failure: recorded, the round is retried later
                self._failed(exc)
                delay = min(max(delay * 2, self.interval_s), MAX_BACKOFF_S)
            self._wake.wait(delay)
            self._wake.clear()

    def _failed(self, exc: Exception) -> None:
        self._disconnect()
        message = pg.redact_text(f"{type(exc).__name__}: {exc}".strip(), self.url)
        with self._lock:
            self._last_error = message
            self._errors.append(TeamError(at=now_ms(), message=message))
        log.warn("team", "sync round failed; retrying", server=pg.redact(self.url), error=message)

    # -- one round ---------------------------------------------------------------------------

    def sync_once(self) -> None:
        """Push everything waiting, then pull everything new (raises on a server error)."""
        conn = self._connection()
        self._held = None
        self._push(conn)
        self._catch_up(conn)
        while self._pull(conn) and not self._stopping.is_set():
            pass
        with self._lock:
            self._last_pull_at = now_ms()
            self._last_error = None
        self.rounds += 1

    def _connection(self) -> psycopg.Connection[tuple[object, ...]]:
        if self._conn is None or self._conn.closed:
            conn = self._open()
            row = conn.execute(
                "SELECT name FROM claude_mem.teams WHERE id = claude_mem.current_team()"
            ).fetchone()
            with self._lock:
                self._team = None if row is None else str(row[0])
            behind = conn.execute(_BEHIND).fetchone()
            if behind is not None and behind[0]:
                _close(conn)
                raise schema.TeamSchemaError(
                    "the team server's schema is older than this claude-mem (it cannot take "
                    "edits): its owner runs claude-mem team init OWNER_URL to update it"
                )
            self._conn = conn
        return self._conn

    def _open(self) -> psycopg.Connection[tuple[object, ...]]:
        conn = pg.connect(self.url, autocommit=True, statement_timeout_s=STATEMENT_TIMEOUT_S)
        pg.binary_vectors(conn)
        return conn

    def _disconnect(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            _close(conn)

    def _shares(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        """The server's list of projects this member shares made equal to the local one:
        `team share` adds a project, `team unshare` takes this member's share away (the team
        still sees the project while another member shares it). The server is asked once a
        round, and again only when the local list changes."""
        wanted = set(team_store.shared(self.db.read()))
        if wanted == self._held:
            return
        held = {str(row[0]) for row in conn.execute(_MY_SHARES)}
        if wanted != held:
            with conn.transaction(), conn.cursor() as cur:
                if wanted - held:
                    cur.executemany(_SHARE, [(project,) for project in sorted(wanted - held)])
                if held - wanted:
                    cur.executemany(_UNSHARE, [(project,) for project in sorted(held - wanted)])
        self._held = wanted

    def _push(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        """The outbox to the server in batches, each acknowledged once its own transaction has
        committed, up to `PUSH_CONNECTIONS` of them in flight (the module docstring says which
        wait). The next batch is read while those are on their way; a failed batch raises once
        every other batch in flight has landed, so no transaction is left running behind it."""
        free, opened = [conn], []
        flight: deque[_Flight] = deque()
        try:
            batch = self._prepare(())
            while batch.ids:
                self._land(flight, free, 0 if batch.names_earlier else PUSH_CONNECTIONS - 1)
                if not free:
                    opened.append(self._open())
                    free.append(opened[-1])
                link = free.pop()
                self._shares(link)  # after the batch is read: the projects of its records
                flight.append((batch, link, self._sender_pool().submit(self._send, link, batch)))
                if len(batch.ids) < PUSH_BATCH or self._stopping.is_set():
                    break  # vector ops carried by records count towards a full batch too
                batch = self._prepare([i for sent, _, _ in flight for i in sent.ids])
            self._land(flight, free, 0)
            if not batch.ids:
                self._shares(conn)  # an unshare goes even with nothing left to push
        finally:
            futures.wait([sending for _, _, sending in flight])
            for sent, _, sending in flight:
                if sending.exception() is None:
                    self._acknowledge(sent)
            for extra in opened:
                _close(extra)

    def _sender_pool(self) -> futures.ThreadPoolExecutor:
        if self._senders is None:
            self._senders = futures.ThreadPoolExecutor(
                PUSH_CONNECTIONS, thread_name_prefix="claude-mem-team-push"
            )
        return self._senders

    def _land(
        self,
        flight: deque[_Flight],
        free: list[psycopg.Connection[tuple[object, ...]]],
        room: int,
    ) -> None:
        """Wait for the oldest batches in flight until at most `room` are, acknowledging each
        (its connection is free again); a failed one raises."""
        while len(flight) > room:
            sent, link, sending = flight.popleft()
            sending.result()
            self._acknowledge(sent)
            free.append(link)

    def _acknowledge(self, batch: _Batch) -> None:
        """A committed batch's outbox rows dropped."""
        with self.db.write() as local:
            team_store.ack(local, batch.ids)
        with self._lock:
            self.pushed += batch.count
            self._last_push_at = now_ms()

    def _prepare(self, pending: Sequence[int]) -> _Batch:
        """The next outbox batch (`pending` ones left out) as the statements that push it."""
        batch = team_store.outbox(self.db.read(), self.machine, PUSH_BATCH, pending=pending)
        records = {r.origin_id: r for r in batch.records}  # one row per origin id and statement
        later = {v.origin_id: pg.vector(v.values) for v in batch.vectors}
        events = {(e.kind, e.origin_id): e for e in batch.events}  # a row's newest link
        statements = [
            (
                _INSERT_RECORDS,
                _columns([_record_row(r, batch.embeddings) for r in records.values()]),
            ),
            (_INSERT_EVENTS, _columns([_event_row(e) for e in events.values()])),
            (_SET_EMBEDDINGS, _columns([(o, v) for o, v in later.items() if v is not None])),
        ]
        return _Batch(
            batch.ids,
            [(sql, columns) for sql, columns in statements if columns],
            len(batch.records) + len(batch.events),
            bool(batch.events or batch.vectors),
        )

    @staticmethod
    def _send(conn: psycopg.Connection[tuple[object, ...]], batch: _Batch) -> None:
        """One batch in one server transaction, sent in one round trip; returns once it has
        committed."""
        with conn.pipeline(), conn.transaction(), conn.cursor() as cur:
            for sql, columns in batch.statements:
                cur.execute(sql, columns)

    def _pull(self, conn: psycopg.Connection[tuple[object, ...]]) -> bool:
        """One batch of the team's rows into the local store; whether there may be more."""
        local = self.db.read()
        records_at, events_at = team_store.cursor(local, RECORDS), team_store.cursor(local, EVENTS)
        events: list[tuple[Any, ...]] = []
        with conn.transaction():
            horizon = conn.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")
            at = str(_one(horizon.fetchone()))
            records = conn.execute(
                _PULL_NEW[RECORDS], self._after(records_at) | {"horizon": at}
            ).fetchall()
            if len(records) < PULL_BATCH:  # caught up: links and tombstones of what we have
                events = conn.execute(
                    _PULL_NEW[EVENTS], self._after(events_at) | {"horizon": at}
                ).fetchall()
        for chunk in _chunks(records):
            self._apply([_pulled(row) for row in chunk], [], {RECORDS: _position(chunk[-1])})
        for chunk in _chunks(events):
            self._apply([], [_event(row) for row in chunk], {EVENTS: _position(chunk[-1])})
        return len(records) == PULL_BATCH or len(events) == PULL_BATCH

    def _after(self, position: team_store.Position) -> dict[str, object]:
        return {"txid": position[0], "seq": position[1], "limit": PULL_BATCH,
                "machine": self.machine}  # fmt: skip

    def _catch_up(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        """Projects the team shares that the last round did not see (shared again after
        every share of them had gone, a member's shares gone with it): their rows the cursors
        passed while nobody could read them, pulled from the start (rows known here add
        nothing). The rows past the cursors come with the stream."""
        local = self.db.read()
        visible = {str(row[0]) for row in conn.execute(_VISIBLE)}
        seen = team_store.visible(local)
        if visible == seen:
            return
        ends = {stream: team_store.cursor(local, stream) for stream in (RECORDS, EVENTS)}
        for project in sorted(visible - seen):
            for stream, end in ends.items():
                position = team_store.START
                while end != team_store.START:
                    if self._stopping.is_set():
                        return  # not seen yet: the next start pulls it again
                    found = conn.execute(
                        _PULL_PROJECT[stream],
                        self._after(position)
                        | {"project": project, "to_txid": end[0], "to_seq": end[1]},
                    ).fetchall()
                    for chunk in _chunks(found):
                        if stream == RECORDS:
                            self._apply([_pulled(row) for row in chunk], [], {})
                        else:
                            self._apply([], [_event(row) for row in chunk], {})
                    if len(found) < PULL_BATCH:
                        break
                    position = _position(found[-1])
        with self.db.write() as writing:
            team_store.see(writing, visible)

    def _apply(
        self,
        records: Sequence[TeamRecord | None],
        events: Sequence[TeamEvent],
        cursors: dict[str, team_store.Position],
    ) -> None:
        with self.db.write() as local:
            applied = team_store.apply_pulled(
                local,
                [r for r in records if r is not None],
                events,
                cursors,
                machine=self.machine,
                redact=self.db.redact_secrets,
            )
        with self._lock:
            self.pulled += applied.records + applied.events
            if applied.newest is not None:
                self._newest = max(self._newest or 0, applied.newest)
        if applied.records:
            self._on_pulled(applied.observation_ids)


def _close(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    try:
        conn.close()
    except Exception as exc:  # a broken connection may fail to close: it is gone anyway
        log.debug("team", "closing a server connection failed", error=str(exc))


def _one(row: tuple[Any, ...] | None) -> Any:
    assert row is not None  # an aggregate-free SELECT of one expression returns one row
    return row[0]


def _chunks(rows: list[tuple[Any, ...]]) -> list[list[tuple[Any, ...]]]:
    return [rows[i : i + APPLY_CHUNK] for i in range(0, len(rows), APPLY_CHUNK)]


def _position(row: tuple[Any, ...]) -> team_store.Position:
    return str(row[0]), int(row[1])


def _columns(rows: list[tuple[object, ...]]) -> list[list[object]]:
    """`rows` as one list per column (the arrays a statement unnests)."""
    return [list(column) for column in zip(*rows, strict=True)]


def _record_row(record: TeamRecord, embeddings: dict[str, list[float]]) -> tuple[object, ...]:
    body = msgspec.json.encode(record).decode()
    vector = pg.vector(embeddings.get(record.origin_id) or [])
    return (record.origin_id, record.content_hash, record.kind, record.project, record.type,
            record.title, record.created_at, record.machine, record.source_session, body,
            record.search_text, vector)  # fmt: skip


def _event_row(event: TeamEvent) -> tuple[object, ...]:
    return (event.kind, event.project, event.origin_id, event.successor_origin_id,
            event.machine, event.created_at)  # fmt: skip


def _pulled(row: tuple[Any, ...]) -> TeamRecord | None:
    """A pulled record, or None for our own (no body) or one this version cannot read."""
    _txid, _seq, member, _machine, body = row
    if body is None:
        return None
    try:
        record = msgspec.convert(body, TeamRecord)
    except msgspec.ValidationError as exc:
        log.warn("team", "skipped a team record this version cannot read", error=str(exc))
        return None
    return msgspec.structs.replace(record, member=str(member))


def _event(row: tuple[Any, ...]) -> TeamEvent:
    _txid, _seq, kind, project, origin_id, successor, machine, created_at = row
    return TeamEvent(kind=kind, project=project, origin_id=origin_id,
                     successor_origin_id=successor, machine=machine,
                     created_at=int(created_at))  # fmt: skip
