"""What a starting worker missed while it was down, taken in before anything new.

Two sources, in this order, on one background thread that starts with the store (so the
worker is ready at once): the hooks' spool (worker/spool_intake.py), then the transcripts of
the sessions that may have lost events: not ended, seen within RECENT_MS, on a host whose
transcript holds its tool calls (Claude Code, whose http hooks the host drops when no worker
listens). Each transcript is read from the session's `recovered_offset` in bounded reads
(transcripts/calls.py); a tool call and its result, matched by id, go through
`Ingest.observation` like a PostToolUse hook (every skip rule, the store's cleaning and
cutting), skipped when the session already holds that tool_use_id. A crash anywhere re-reads
from the last stored offset and adds nothing twice.

A spool can also grow while this worker runs (a hook that timed out on a busy worker): each
new session (`spooled`) checks for one and ingests it on its own thread.

Turn order: `Ingest.gate` makes every arriving event of a session still waiting for recovery
wait (off the event loop, on a handler thread) until the spool is in and that session's
transcript has been read, at most GATE_BYTES of it; so the prompt hook that restarted a dead
worker is numbered after the events it missed. Recovered events are numbered by the
transcript, not by arrival: each of the transcript's prompts is matched, in order, to the
session's stored prompts, and a call belongs to the prompt before it. A prompt memory never
numbered that comes after every stored one is taken as a prompt hook would be (so a prompt
the spool could not keep is recovered too), unless nothing follows it yet (its own hook may
be on its way); a `#nomem` prompt's turn, and a private prompt's, stay unrecorded.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from claude_mem import log
from claude_mem.hooks import spool
from claude_mem.hooks.handlers import PRIVATE_PROMPT
from claude_mem.pipeline.turns import normal_prompt
from claude_mem.store import Database
from claude_mem.store.db import NON_BLOCKING, WouldBlock
from claude_mem.store.sessions import (
    advance_recovery,
    find_session,
    get_session,
    prompts_after,
    recovery_candidates,
)
from claude_mem.store.tool_uses import known_ids
from claude_mem.transcripts.calls import Step, read_steps
from claude_mem.worker.ingest import MEDIA_PROMPT, Ingest, SessionInit, ToolEvent
from claude_mem.worker.spool_intake import ingest_spool

PLATFORMS = ("claude-code",)  # hosts whose transcript holds tool inputs and results
RECENT_MS = 7 * 24 * 3600 * 1000  # a session idle longer is over, whatever its status says
MAX_SESSIONS = 50
READ_BYTES = 4 << 20  # one bounded read
GATE_BYTES = 8 << 20  # read for a waiting event before it is taken (the rest follows later)
HOLD_BYTES = 4 << 20  # a call without a result further back than this is not waited for
SPOOL_WAIT_S = 10.0  # an event waits at most this long for the spool
HOLD_PIPELINE_S = 30.0  # compression waits at most this long for recovery to finish
MATCH_AHEAD = 3  # stored prompts a transcript prompt may skip over (ones with no line there)

Key = tuple[str, str]  # (platform, host session id)


@dataclass(slots=True)
class _Turns:
    """Where the transcript is among the session's stored prompts."""

    turn: int
    prompts: list[dict[str, Any]]
    at: int = 0
    skipping: bool = False  # inside a `#nomem` turn
    skip_from: tuple[int, int] = (0, 0)  # that turn's prompt: its offset, the turn before it

    def find(self, text: str) -> int | None:
        """The index of the stored prompt a transcript prompt is, if any."""
        want = normal_prompt(text or MEDIA_PROMPT)
        for j in range(self.at, min(self.at + MATCH_AHEAD, len(self.prompts))):
            stored = self.prompts[j]
            have = PRIVATE_PROMPT if stored["is_private"] else stored["text"]
            if normal_prompt(have) == want:
                return j
        return None

    def match(self, text: str) -> bool:
        """Move to the stored prompt `text` is; False when it is none of them."""
        j = self.find(text)
        if j is not None:
            self.turn, self.at, self.skipping = int(self.prompts[j]["prompt_number"]), j + 1, False
        return j is not None

    @property
    def past_known(self) -> bool:
        return self.at >= len(self.prompts)


@dataclass(slots=True)
class _Pass:
    """One session's recovery in progress."""

    sid: int
    platform: str
    host: str
    path: str
    cwd: str | None
    turns: _Turns
    held: dict[str, tuple[Step, int | None]] = field(default_factory=dict)
    recovered: int = 0


class Recovery:
    """The spool and the transcripts, once per worker start; `before` is the ingest gate."""

    def __init__(self, db: Database, ingest: Ingest) -> None:
        self.db, self.ingest = db, ingest
        self._pending: dict[Key, threading.Lock] = {}
        self._ready = threading.Event()  # candidates known and the spool ingested
        self._done = threading.Event()
        self._inside = threading.local()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="recovery", daemon=True)
        self._started = time.monotonic()
        self._draining = threading.Lock()  # one live spool intake at a time

    def start(self) -> None:
        self.ingest.gate = self.before
        self._started = time.monotonic()
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping = True
        self._ready.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def holds_pipeline(self) -> bool:
        """Whether compression should still wait: a turn of a dead worker's time is then
        compressed whole, with the events recovered for it (bounded by HOLD_PIPELINE_S)."""
        return not self._done.is_set() and time.monotonic() - self._started < HOLD_PIPELINE_S

    def spooled(self) -> None:
        """Ingest a spool that appeared while this worker runs (after start-up's intake), on
        a thread of its own; a lookup of one path when there is none."""
        if not self._done.is_set() or not os.path.lexists(spool.spool_path()):
            return
        if self._draining.acquire(blocking=False):
            threading.Thread(target=self._drain, name="spool", daemon=True).start()

    def _drain(self) -> None:
        try:
            ingest_spool(self.ingest)
        except Exception as exc:  # like start-up's intake: logged, never fatal
            log.error("worker", "spool intake failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            self._draining.release()

    def before(self, platform: str, host_session_id: str) -> None:
        """The gate: an event of a session waiting for recovery waits for it (bounded)."""
        if self._done.is_set() or getattr(self._inside, "active", False):
            return
        if NON_BLOCKING.get():
            raise WouldBlock("recovery is running")  # wait on a handler thread, not the loop
        self._ready.wait(SPOOL_WAIT_S)
        self._recover((platform, host_session_id), GATE_BYTES)

    def _run(self) -> None:
        self._inside.active = True  # the spool's events pass the gate: they are the recovery
        try:
            since = int(time.time() * 1000) - RECENT_MS
            rows = recovery_candidates(
                self.db.read(), platforms=PLATFORMS, since=since, limit=MAX_SESSIONS
            )
            self._pending = {(r["platform"], r["host_session_id"]): threading.Lock() for r in rows}
            ingest_spool(self.ingest)
        except Exception as exc:  # recovery must never take the worker down
            log.error("worker", "recovery could not start", error=f"{type(exc).__name__}: {exc}")
        finally:
            self._inside.active = False
            self._ready.set()
        for key in list(self._pending):
            if self._stopping:
                return
            self._recover(key, None)
        self._done.set()

    def _recover(self, key: Key, budget: int | None) -> None:
        lock = self._pending.get(key)
        if lock is None:
            return
        with lock:
            if key not in self._pending:
                return
            self._inside.active = True
            try:
                finished = self._session(key, budget)
            except Exception as exc:  # a bad transcript or row: log it, never retry forever
                log.error("worker", "transcript recovery failed",
                          error=f"{type(exc).__name__}: {exc}")  # fmt: skip
                finished = True
            finally:
                self._inside.active = False
            if finished:
                self._pending.pop(key, None)

    def _session(self, key: Key, budget: int | None) -> bool:
        """Recover one session's transcript; False when the budget ran out first."""
        conn = self.db.read()
        sid = find_session(conn, *key)
        session = get_session(conn, sid) if sid is not None else None
        if session is None or not session["transcript_path"]:
            return True
        turn = int(session["recovered_turn"])
        run = _Pass(sid=int(session["id"]), platform=key[0], host=key[1],
                    path=session["transcript_path"], cwd=session["cwd"],
                    turns=_Turns(turn, prompts_after(conn, int(session["id"]), turn)))  # fmt: skip
        offset, spent = int(session["recovered_offset"]), 0
        while not self._stopping:
            chunk = read_steps(run.path, offset, redact=self.db.redact_secrets,
                               max_bytes=READ_BYTES)  # fmt: skip
            if chunk.offset == offset:
                break
            if chunk.start != offset:  # the file is shorter than before: a new one, from 0
                run.turns, run.held = _Turns(0, prompts_after(conn, run.sid, 0)), {}
            spent += abs(chunk.offset - offset)
            saved, held_prompt = self._steps(run, chunk.steps, chunk.offset, at_end=not chunk.full)
            with self.db.write() as write:
                advance_recovery(write, run.sid, run.path, *saved)
            offset = chunk.offset
            if held_prompt or (budget is not None and spent >= budget):
                break
        if run.recovered:
            log.info("worker", "recovered events from a transcript", session_id=run.sid,
                     events=run.recovered)  # fmt: skip
        return not self._stopping and (budget is None or spent < budget)

    def _steps(
        self, run: _Pass, steps: list[Step], end: int, *, at_end: bool
    ) -> tuple[tuple[int, int], bool]:
        """Take one read's steps; (offset, turn) to store, and whether a prompt was held."""
        found: list[tuple[ToolEvent, int]] = []
        held_prompt: Step | None = None
        for i, step in enumerate(steps):
            if step.kind == "call" and step.tool_use_id:
                run.held[step.tool_use_id] = (step, None if run.turns.skipping else run.turns.turn)
            elif step.kind == "result" and step.tool_use_id in run.held:
                call, turn = run.held.pop(step.tool_use_id)
                if turn is not None:
                    found.append((self._event(run, call, step), turn))
            elif step.kind == "prompt":
                if at_end and i == len(steps) - 1 and not self._known_prompt(run, step):
                    held_prompt = step  # its own hook may be arriving: the next start sees
                    break
                self._prompt(run, step)
        self._take(run, found)
        if held_prompt is not None:
            return (held_prompt.start, run.turns.turn), True
        # The next read starts where nothing is pending: before a call still waiting for its
        # result, or at a `#nomem` prompt whose turn goes on (so it is skipped again).
        points = [(c.start, t) for c, t in run.held.values()
                  if t is not None and end - c.start <= HOLD_BYTES]  # fmt: skip
        points.append(run.turns.skip_from if run.turns.skipping else (end, run.turns.turn))
        return min(points), False

    def _known_prompt(self, run: _Pass, step: Step) -> bool:
        """Whether a last prompt needs no hook of its own: stored, or never to be stored."""
        found = run.turns.find(step.text) is not None
        return found or step.nomem or not run.turns.past_known

    def _prompt(self, run: _Pass, step: Step) -> None:
        if run.turns.match(step.text):
            return
        if step.nomem:  # never numbered: its turn is not memory
            run.turns.skipping, run.turns.skip_from = True, (step.start, run.turns.turn)
            return
        if not run.turns.past_known:
            return  # a prompt memory did not number: its events stay with the turn before
        result = self.ingest.session_init(SessionInit(
            host_session_id=run.host, platform=run.platform, cwd=step.cwd or run.cwd,
            transcript_path=run.path, prompt=step.text,
        ))  # fmt: skip
        if result.prompt_number:
            run.turns.turn, run.turns.skipping = result.prompt_number, False

    def _event(self, run: _Pass, call: Step, result: Step) -> ToolEvent:
        return ToolEvent(
            host_session_id=run.host, platform=run.platform, tool_name=call.name,
            cwd=call.cwd or run.cwd, tool_input=call.value, tool_response=result.value,
            tool_use_id=call.tool_use_id, transcript_path=run.path,
        )  # fmt: skip

    def _take(self, run: _Pass, found: list[tuple[ToolEvent, int]]) -> None:
        """Ingest the events the session does not hold yet, in transcript order."""
        if not found:
            return
        known = known_ids(self.db.read(), run.sid, [e.tool_use_id or "" for e, _ in found])
        for event, turn in found:
            if event.tool_use_id in known:
                continue
            try:
                answer = self.ingest.observation(event, turn=turn)
            except ValueError:
                continue  # e.g. an empty tool name: what the route would refuse
            run.recovered += answer.status == "queued"
