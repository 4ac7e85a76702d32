"""Drains the durable queue inside the worker: per-session consumers claim rows, run the
provider chain, and store results and confirm rows in one transaction.

Exactly-once: a row is deleted only in the transaction that stores what it produced. A crash
anywhere before that leaves it 'processing'; the next worker releases and redoes it, and a
replay adds nothing twice (tool events already linked to an observation are skipped, and
observations are deduplicated by content hash).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from claude_mem import log
from claude_mem.pipeline import history_links, registry, session_summary
from claude_mem.pipeline.health import HealthLedger
from claude_mem.pipeline.providers.base import (
    ObservationDraft,
    Provider,
    ProviderError,
    Result,
    SessionContext,
    SummaryInput,
    ToolEvent,
    Turn,
)
from claude_mem.pipeline.tools.evidence import evidence
from claude_mem.pipeline.tools.kinds import memory_tool
from claude_mem.pipeline.turns import Slice, assemble, turn_slice
from claude_mem.records import Observation, Summary
from claude_mem.settings import Settings
from claude_mem.store import Database, usage
from claude_mem.store import queue as queue_store
from claude_mem.store.observations import insert_observation
from claude_mem.store.queue import QueueItem
from claude_mem.store.rows import of_session
from claude_mem.store.sessions import advance_transcript, get_session, turn_ended
from claude_mem.store.summaries import replace_session_summary, session_summaries
from claude_mem.store.supersede import continue_unit, settle
from claude_mem.store.tool_uses import get_tool_uses, link_observation, recent_for_session
from claude_mem.transcripts import Entry, read_since
from claude_mem.worker.stream import Broadcaster

BATCH_SIZE = 8  # consecutive events per provider call when rows carry no turn (older rows)
TURN_EVENTS = 64  # most tool events of one prompt turn per provider call
CLAIM_LIMIT = 256  # rows claimed at once: a whole turn, usually
TRANSCRIPT_READS = 8  # bounded reads of a transcript for one turn
MAX_ATTEMPTS = 5  # then the row is parked as 'dead' for `claude-mem queue retry|drop`
POLL_S = 1.0  # how often to look for rows whose retry delay has passed
# Hooks wait on ingest; nothing waits on compression. During a burst (BURST_EVENTS events
# within QUIET_S, the last one just now) the dispatcher and the consumers wait for a lull, up
# to MAX_DEFER_S, so the burst gets the cores and the single writer, and is then claimed and
# stored in a few transactions instead of one each (bench/worker_ingest_bench.py). Events at
# an agent's pace are compressed at once (bench/pipeline_bench.py: enqueue → stored).
QUIET_S = 0.05
BURST_EVENTS = 5
MAX_DEFER_S = 10.0
LLM_CONCURRENCY = 2


class Pipeline:
    """The queue's consumers. `notify()` (any thread) says new work arrived."""

    def __init__(
        self,
        db: Database,
        settings_of: Callable[[], Settings],
        stream: Broadcaster,
        health: HealthLedger | None = None,
        on_stored: Callable[[], None] = lambda: None,
        *,
        held: Callable[[], bool] = lambda: False,
    ) -> None:
        """`on_stored` runs (in a thread) after new observations or a summary commit: the
        embedder's `notify`, so vectors follow within a batch instead of a poll interval.
        While `held()` is true nothing is claimed: a starting worker is still recovering the
        events it missed (worker/recovery.py), which belong to turns waiting here."""
        self.db, self.settings_of, self.stream = db, settings_of, stream
        self.on_stored = on_stored
        self.held = held
        self.health = health or HealthLedger()
        self._providers: dict[str, Provider] = {}
        self._settings_seen: Settings | None = None
        self._consumers: dict[int, asyncio.Task[None]] = {}
        self._wake = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._llm_slots = asyncio.Semaphore(LLM_CONCURRENCY)
        self._stopping = False
        self._recent: deque[float] = deque(maxlen=BURST_EVENTS)  # times of the last events
        self._task = self._loop.create_task(self._dispatch())

    # --- control -------------------------------------------------------------------------

    def notify(self) -> None:
        """New work arrived (ingest calls this for every event, mostly on the event loop:
        there the wake is set directly, with no self-pipe write to wake the loop again)."""
        self._recent.append(time.monotonic())
        if threading.get_ident() == self._loop_thread:
            self._wake.set()
        else:
            self._loop.call_soon_threadsafe(self._wake.set)

    def since_last_event(self) -> float:
        """Seconds since ingest last queued work: background work (compression here,
        embedding in search.embedding_task) waits for a lull in a burst."""
        return time.monotonic() - self._recent[-1] if self._recent else float("inf")

    def in_burst(self) -> bool:
        recent = list(self._recent)
        return (
            len(recent) == BURST_EVENTS
            and recent[-1] - recent[0] < QUIET_S
            and time.monotonic() - recent[-1] < QUIET_S
        )

    async def _yield_to_ingest(self) -> None:
        deadline = time.monotonic() + MAX_DEFER_S
        while self.in_burst() and time.monotonic() < deadline:
            await asyncio.sleep(QUIET_S)

    @property
    def active_sessions(self) -> int:
        return len(self._consumers)

    async def stop(self, grace_s: float = 5.0) -> None:
        """Let in-flight work finish briefly; anything unfinished is redone after restart."""
        self._stopping = True
        self._wake.set()
        tasks = [self._task, *self._consumers.values()]
        _, pending = await asyncio.wait(tasks, timeout=grace_s)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)

    async def drained(self, timeout: float = 30.0) -> bool:
        """True once nothing is pending or processing (for tests, the demo and benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            counts = await asyncio.to_thread(lambda: queue_store.counts(self.db.read()))
            if counts["pending"] == 0 and counts["processing"] == 0:
                return True
            self._wake.set()  # look now (not an event: no burst to wait out)
            await asyncio.sleep(0.05)
        return False

    # --- dispatch --------------------------------------------------------------------------

    async def _dispatch(self) -> None:
        while not self._stopping:
            if self.held():
                await asyncio.sleep(QUIET_S)
                continue
            try:
                ready = await asyncio.to_thread(
                    lambda: queue_store.ready_sessions(self.db.read(), idle_ms=self._idle_ms())
                )
            except Exception as exc:  # the store may be briefly unavailable; try again
                log.error("pipeline", "could not look for work", error=repr(exc))
                ready = []
            for session_id in ready:
                if session_id not in self._consumers:
                    task = self._loop.create_task(self._consume(session_id))
                    self._consumers[session_id] = task
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_S)
            self._wake.clear()  # before looking: work arriving meanwhile wakes the next look
            await self._yield_to_ingest()  # one look per burst, not one per event

    async def _consume(self, session_id: int) -> None:
        """One session's consumer: runs while it has ready rows, then goes idle (exits)."""
        try:
            while not self._stopping:
                await self._yield_to_ingest()
                items = await asyncio.to_thread(self._claim, session_id)
                if not items:
                    return
                for work in _works(items):
                    if self._stopping:
                        return  # claimed rows are released on the next start
                    await self._work(session_id, work)
        except Exception as exc:  # a bug must not kill the worker; rows stay claimed → redone
            log.error("pipeline", "consumer crashed", session_id=session_id, error=repr(exc))
        finally:
            self._consumers.pop(session_id, None)

    def _idle_ms(self) -> int:
        return self.settings_of().get_int("CLAUDE_MEM_TURN_IDLE_S") * 1000

    def _claim(self, session_id: int) -> list[QueueItem]:
        with self.db.write() as conn:
            return queue_store.claim(
                conn, session_id=session_id, limit=CLAIM_LIMIT, idle_ms=self._idle_ms()
            )

    async def _work(self, session_id: int, work: Work) -> None:
        """A turn's events (and the agent's words) to units, then the turn's summary."""
        loaded = await asyncio.to_thread(self._load_turn, session_id, work)
        items = work.events
        if loaded.worth_compressing:
            ctx, events = loaded.ctx, loaded.events
            try:
                result, name = await self._run_chain(session_id, lambda p: p.compress(events, ctx))
            except ProviderError as exc:
                await asyncio.to_thread(self._fail, work.items, exc)
                return
            created = await asyncio.to_thread(self._store_observations, loaded, items, result, name)
            for row in created:
                self.stream.publish("new_observation", observation=row)
            if created:
                self.on_stored()
            log.debug("pipeline", "observations stored", session_id=session_id,
                      count=len(created), provider=name,
                      skipped_replayed=loaded.replayed)  # fmt: skip
        elif items or loaded.cursor:
            empty = Result()
            await asyncio.to_thread(self._store_observations, loaded, items, empty, "none")
        if work.summary is not None:
            await self._summarize(session_id, work.summary, loaded.ctx.turn)

    # --- observations ----------------------------------------------------------------------

    def _load_turn(self, session_id: int, work: Work) -> Loaded:
        """The turn's fresh tool events, its prompt, and its slice of the host's transcript
        (read from the stored offset, bounded)."""
        conn = self.db.read()
        session = get_session(conn, session_id) or {}
        prompts = [row for row in of_session(conn, "user_prompts", session_id)
                   if not row["is_private"]]  # fmt: skip
        ctx = _context(session_id, session, prompts)
        rows = get_tool_uses(conn, [int(i.payload.get("tool_use_row_id", 0)) for i in work.events])
        fresh = [row for row in rows if row["observation_id"] is None]  # replays skip
        # Calls to memory's own MCP tools are not work: no provider makes a unit of them.
        events = [_event(row) for row in fresh if not memory_tool(row["tool_name"])]
        loaded = Loaded(ctx, events, len(rows) - len(fresh))
        number = work.prompt_number
        if number is None:  # rows from before turns were tracked: a batch, no turn
            return loaded
        prompt = next((row["text"] for row in prompts if row["prompt_number"] == number), "")
        reply = str(work.summary.payload.get("last_assistant_message", "")) if work.summary else ""
        closed = work.summary is not None or turn_ended(conn, session_id, number)
        entries: tuple[Any, ...] = ()
        path = session.get("transcript_path")
        # A turn whose words were read already (its summary redone, say) reads none again.
        if path and int(session.get("transcript_turn") or 0) < number:
            newest = int(session.get("prompt_count") or 0) <= number
            found = self._transcript_slice(path, int(session.get("transcript_offset") or 0),
                                           ctx.platform, prompt, events,
                                           newest=newest)  # fmt: skip
            entries = found.entries
            if found.end is not None:
                loaded.cursor = (path, found.end, number)
        turn = assemble(entries, prompt_number=number, prompt=prompt, reply=reply, closed=closed)
        loaded.ctx = dataclasses.replace(ctx, turn=turn)
        return loaded

    def _transcript_slice(
        self,
        path: str,
        offset: int,
        platform: str,
        prompt: str,
        events: list[ToolEvent],
        *,
        newest: bool,
    ) -> Slice:
        """The turn's slice, reading on (bounded reads, at most TRANSCRIPT_READS) until the
        turn's segment is followed by another or the file ends: one read may stop short, at
        its size bound or past a huge line."""
        entries: list[Entry] = []
        found = Slice((), None)
        for _ in range(TRANSCRIPT_READS):
            chunk = read_since(path, offset, platform=platform, redact=self.db.redact_secrets)
            if chunk.offset == offset:
                break  # the end of what the host has written
            entries.extend(chunk.entries)
            offset = chunk.offset
            found = turn_slice(entries, prompt, events, newest=newest)
            if found.entries and found.end != entries[-1].end:
                break  # the turn's segment is over: the next one began
        return found

    def _store_observations(
        self, loaded: Loaded, items: list[QueueItem], result: Result, provider: str
    ) -> list[dict[str, Any]]:
        """The drafts, their tool events' links, the tokens, the transcript offset and the
        rows' deletion: one transaction, so a crash redoes all of it or none."""
        ctx, events = loaded.ctx, loaded.events
        by_id = {event.tool_use_row_id: event for event in events}
        tokens = result.input_tokens + result.output_tokens
        share = tokens // max(1, len(result.observations))
        generated_by = f"{provider}:{result.model}" if result.model else provider
        created: list[dict[str, Any]] = []
        with self.db.write() as conn:
            # A draft that names no events came from the events all, unless its siblings
            # name theirs: then it came from words alone (a decision stated in chat).
            named = any(draft.source_event_ids for draft in result.observations)
            for draft in result.observations:
                sources = [by_id[i] for i in draft.source_event_ids if i in by_id]
                sources = sources or ([] if named else events)
                work = share or _event_tokens(sources)
                obs = _observation(ctx, draft, sources, work, generated_by)
                # Code a commit explains: the unit names that commit (its reason).
                obs = history_links.linked(conn, obs, cwd=ctx.cwd)
                obs_id, new = insert_observation(conn, obs, redact=self.db.redact_secrets)
                # What it replaces is marked superseded; a rule discussed on in this session
                # folds into the session's earlier decision, and a follow-up (a commit) into
                # the unit it finished: that older id then holds it.
                inserted = obs_id
                obs_id = continue_unit(conn, obs_id) if draft.continues else settle(conn, obs_id)
                for event in sources:
                    link_observation(conn, event.tool_use_row_id, obs_id)
                if new and obs_id == inserted:  # not folded into an older row
                    created.append({"id": obs_id, "session_id": ctx.session_id,
                                    "project": ctx.project, "type": draft.type,
                                    "title": draft.title})  # fmt: skip
            if tokens:
                usage.record(conn, session_id=ctx.session_id, provider=provider,
                             model=result.model, input_tokens=result.input_tokens,
                             output_tokens=result.output_tokens)  # fmt: skip
            if loaded.cursor is not None:
                advance_transcript(conn, ctx.session_id, *loaded.cursor)
            queue_store.complete(conn, [item.id for item in items])
        return created

    # --- summaries -------------------------------------------------------------------------

    async def _summarize(self, session_id: int, item: QueueItem, turn: Turn | None) -> None:
        ctx, request = await asyncio.to_thread(self._load_summary, session_id, item)
        ctx = dataclasses.replace(ctx, turn=turn)
        try:
            result, name = await self._run_chain(session_id, lambda p: p.summarize(request, ctx))
        except ProviderError as exc:
            await asyncio.to_thread(self._fail, [item], exc)
            return
        summary_id, replaced = await asyncio.to_thread(self._store_summary, ctx, item, result, name)
        for old_id in replaced:  # the session's earlier version: gone from the viewer too
            self.stream.publish("summary_deleted", record_id=old_id)
        if summary_id is not None:
            self.on_stored()
            self.stream.publish("new_summary", summary={"id": summary_id, "session_id": session_id,
                                                        "project": ctx.project})  # fmt: skip

    def _load_summary(
        self, session_id: int, item: QueueItem
    ) -> tuple[SessionContext, SummaryInput]:
        conn = self.db.read()
        ctx = _read_context(conn, session_id)
        events = [_event(row) for row in get_tool_uses(conn, recent_for_session(conn, session_id))]
        rows = of_session(conn, "observations", session_id)
        stored = tuple(
            ObservationDraft(type=row["type"], title=row["title"], subtitle=row["subtitle"],
                             narrative=row["narrative"], facts=row["facts"],
                             concepts=row["concepts"])
            for row in rows
        )  # fmt: skip
        message = str(item.payload.get("last_assistant_message", ""))
        return ctx, SummaryInput(
            message, tuple(events), stored,
            files_read=tuple(path for row in rows for path in row["files_read"]),
            files_modified=tuple(path for row in rows for path in row["files_modified"]),
        )  # fmt: skip

    def _store_summary(
        self, ctx: SessionContext, item: QueueItem, result: Result, provider: str
    ) -> tuple[int | None, list[int]]:
        """The turn's draft folded into the session's summary, which it replaces: a
        session has one summary, whichever provider wrote each turn's."""
        draft = result.summary
        with self.db.write() as conn:
            summary_id: int | None = None
            replaced: list[int] = []
            if draft is not None:
                earlier = session_summaries(conn, ctx.session_id)
                draft = session_summary.updated(earlier, draft)
                tokens = result.input_tokens + result.output_tokens
                summary_id, replaced = replace_session_summary(
                    conn,
                    Summary(
                        session_id=ctx.session_id, project=ctx.project, request=draft.request,
                        investigated=draft.investigated, learned=draft.learned,
                        completed=draft.completed, next_steps=draft.next_steps, notes=draft.notes,
                        prompt_number=item.payload.get("prompt_number"),
                        discovery_tokens=tokens + sum(old.discovery_tokens for old in earlier),
                        generated_by=f"{provider}:{result.model}" if result.model else provider,
                        created_at=item.created_at,
                    ),
                    redact=self.db.redact_secrets,
                )  # fmt: skip
            if result.input_tokens + result.output_tokens:
                usage.record(conn, session_id=ctx.session_id, provider=provider,
                             model=result.model, input_tokens=result.input_tokens,
                             output_tokens=result.output_tokens)  # fmt: skip
            queue_store.complete(conn, [item.id])
        return summary_id, replaced

    # --- providers -------------------------------------------------------------------------

    def chain(self) -> list[str]:
        """The configured provider, then the fallbacks, each once."""
        settings = self.settings_of()
        names = [settings.get_str("CLAUDE_MEM_PROVIDER"), *settings.get_list(
            "CLAUDE_MEM_FALLBACK_PROVIDERS")]  # fmt: skip
        return list(dict.fromkeys(name for name in names if name))

    async def _run_chain(
        self, session_id: int, call: Callable[[Provider], Awaitable[Result]]
    ) -> tuple[Result, str]:
        """The first provider in the chain that can process the work; ProviderError if none."""
        last: ProviderError = ProviderError("setup_required", "no provider configured")
        for name in self.chain():
            reason = self.health.paused(name)
            if reason:
                last = ProviderError("setup_required", f"{name} skipped: {reason}")
                continue
            try:
                provider = self._provider(name)
            except Exception as exc:
                last = self._failed(name, exc)
                continue
            offline = registry.traits(provider).offline
            reason = None if offline else await asyncio.to_thread(self._over_budget, session_id)
            if reason:
                last = ProviderError("setup_required", f"{name} skipped: {reason}")
                continue
            try:
                if offline:  # no model to wait for: an LLM slot would only delay it
                    result = await call(provider)
                else:
                    async with self._llm_slots:
                        result = await call(provider)
            except Exception as exc:
                last = self._failed(name, exc)
                continue
            self.health.ok(name)
            return result, name
        raise last

    def _failed(self, name: str, exc: Exception) -> ProviderError:
        """Record a provider's failure; a bug (not a ProviderError) counts as unrecoverable,
        so the next provider in the chain gets the work."""
        self.health.failed(name, exc)
        if isinstance(exc, ProviderError):
            log.warn("pipeline", "provider failed", provider=name, kind=exc.kind,
                     error=exc.message)  # fmt: skip
            return exc
        log.error("pipeline", "provider raised", provider=name, error=repr(exc))
        return ProviderError("unrecoverable", f"{name}: {exc!r}")

    def _provider(self, name: str) -> Provider:
        settings = self.settings_of()
        if settings is not self._settings_seen:  # settings changed (a new key, say): rebuild
            self._providers.clear()
            self._settings_seen = settings
        if name not in self._providers:
            try:
                self._providers[name] = registry.create(name, settings)
            except ValueError as exc:
                raise ProviderError("setup_required", str(exc)) from None
        return self._providers[name]

    def _over_budget(self, session_id: int) -> str | None:
        """Why a provider that costs tokens must not be called now (token budgets), or None."""
        settings = self.settings_of()
        conn = self.db.read()
        daily = settings.get_int("CLAUDE_MEM_DAILY_TOKEN_BUDGET")
        if usage.spent_on_day(conn) >= daily:
            return f"daily token budget of {daily:,} reached"
        per_session = settings.get_int("CLAUDE_MEM_SESSION_TOKEN_BUDGET")
        if usage.spent_on_session(conn, session_id) >= per_session:
            return f"session token budget of {per_session:,} reached"
        return None

    # --- failure ---------------------------------------------------------------------------

    def _fail(self, items: list[QueueItem], error: ProviderError) -> None:
        with self.db.write() as conn:
            for item in items:
                delay = int(min(600_000, 2_000 * 2**item.attempts))
                if error.retry_after:
                    delay = max(delay, int(error.retry_after * 1000))
                status = queue_store.fail(conn, item.id, f"{error.kind}: {error.message}",
                                          max_attempts=MAX_ATTEMPTS, retry_in_ms=delay)  # fmt: skip
                if status == "dead":
                    log.error("pipeline", "queue row parked as dead", queue_id=item.id,
                              error=error.message)  # fmt: skip

    def _complete(self, items: list[QueueItem]) -> None:
        with self.db.write() as conn:
            queue_store.complete(conn, [item.id for item in items])


@dataclass(slots=True)
class Work:
    """What one provider call serves: a prompt turn's tool-event rows and, when the agent's
    Stop ended the turn, its summary row. Rows queued before turns were tracked have no
    prompt number and come in batches."""

    prompt_number: int | None
    events: list[QueueItem] = field(default_factory=list)
    summary: QueueItem | None = None

    @property
    def items(self) -> list[QueueItem]:
        return [*self.events, *([self.summary] if self.summary else [])]


@dataclass(slots=True)
class Loaded:
    """A Work's inputs, read from the store and the transcript."""

    ctx: SessionContext
    events: list[ToolEvent]
    replayed: int  # events already linked to an observation (a replay)
    cursor: tuple[str, int, int] | None = None  # (transcript, offset past the turn, its number)

    @property
    def worth_compressing(self) -> bool:
        """Tool events, or a turn of words alone (a rule stated in chat)."""
        turn = self.ctx.turn
        return bool(self.events) or (turn is not None and bool(turn.prompt)
                                     and bool(turn.words or turn.reply))  # fmt: skip


def _prompt_number(item: QueueItem) -> int | None:
    """The row's prompt turn; None for rows from before turns were tracked, and for events
    that came before any prompt (memory installed mid-session): those go in batches."""
    number = item.payload.get("prompt_number")
    return number if isinstance(number, int) and number > 0 else None


def _works(items: list[QueueItem]) -> list[Work]:
    """Claimed rows (oldest first) as Works: consecutive rows of one prompt turn together,
    a turn's summary closing its Work."""
    works: list[Work] = []
    for item in items:
        number = _prompt_number(item)
        last = works[-1] if works else None
        limit = TURN_EVENTS if number is not None else BATCH_SIZE
        fits = (
            last is not None and last.summary is None and last.prompt_number == number
            and (item.kind == "summary" or len(last.events) < limit)
        )  # fmt: skip
        if not fits or last is None:
            last = Work(number)
            works.append(last)
        if item.kind == "summary":
            last.summary = item
        else:
            last.events.append(item)
    return works


def _read_context(conn: Any, session_id: int) -> SessionContext:
    session = get_session(conn, session_id) or {}
    prompts = [row for row in of_session(conn, "user_prompts", session_id) if not row["is_private"]]
    return _context(session_id, session, prompts)


def _context(
    session_id: int, session: dict[str, Any], prompts: list[dict[str, Any]]
) -> SessionContext:
    """What a provider knows of the session, from its row and its non-private prompts."""
    return SessionContext(
        session_id=session_id,
        project=str(session.get("project", "unknown-project")),
        platform=str(session.get("platform", "")),
        cwd=session.get("cwd"),
        prompts=tuple(row["text"] for row in prompts),
    )


def _event(row: dict[str, Any]) -> ToolEvent:
    return ToolEvent(
        tool_use_row_id=row["id"],
        tool_name=row["tool_name"],
        tool_input=row["tool_input"],
        tool_response=row["tool_response"],
        cwd=row["cwd"],
        prompt_number=row["prompt_number"],
        agent_type=row["agent_type"],
        agent_id=row["agent_id"],
        created_at=row["created_at"],
        tool_use_id=row["tool_use_id"],
    )


def _event_tokens(events: list[ToolEvent]) -> int:
    """The work an offline observation records: its tool events' size (~4 chars a token).
    An LLM-made one records the tokens spent reading those events instead."""
    chars = sum(len(json.dumps([e.tool_input, e.tool_response], default=str)) for e in events)
    return (chars + 3) // 4


def _observation(
    ctx: SessionContext,
    draft: ObservationDraft,
    sources: list[ToolEvent],
    tokens: int,
    generated_by: str,
) -> Observation:
    """A draft made storable. Its file lists are computed here, once, from its source
    events' tool inputs (`pipeline.tools.evidence`): a draft carries none, and no model or
    compressor is asked for them."""
    files_read, files_modified = evidence(sources)
    first = sources[0] if sources else None  # a turn of words alone has no tool event
    turn = ctx.turn
    number = max((e.prompt_number or 0 for e in sources), default=0) or None
    return Observation(
        session_id=ctx.session_id,
        project=ctx.project,
        type=draft.type,
        title=draft.title,
        subtitle=draft.subtitle,
        narrative=draft.narrative,
        facts=draft.facts,
        concepts=draft.concepts,
        files_read=files_read,
        files_modified=files_modified,
        prompt_number=number or (turn.prompt_number if turn else None),
        discovery_tokens=tokens,
        agent_type=first.agent_type if first else None,
        agent_id=first.agent_id if first else None,
        generated_by=generated_by,
        # Made with the agent's own words from its transcript, or from the hooks' events alone.
        source="transcript" if turn is not None and turn.words else "hooks",
        created_at=min((e.created_at for e in sources), default=0),
    )
