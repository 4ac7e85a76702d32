"""The hooks' spool (hooks/spool.py), ingested once by a starting worker, in order.

The file is first renamed to a claimed name, so hooks that fail meanwhile start a new spool
and nothing is appended to a file being read; the claimed file is deleted once every line went
through `Ingest` (the same skip rules, cleaning and cutting as a live hook). A crash half-way
leaves the claimed file, ingested again at the next start without doubling anything: tool
events are recognised by tool_use_id (and not queued again), a summary by its turn, an end is
idempotent, and prompts, which have no id, are skipped up to the offset recorded after the last
prompt taken (`spool.claimed.offset`). A line that is not a spooled event is skipped and
counted, never fatal.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

from claude_mem import log, paths
from claude_mem.hooks import spool
from claude_mem.paths import open_regular
from claude_mem.worker.ingest import Ingest, SessionEnd, SessionInit, SummaryRequest, ToolEvent

MAX_SPOOL_READ = 1 << 30  # the setting's maximum: a claimed file is never read past it
PROGRESS = "spool.claimed.offset"
T = TypeVar("T")


@dataclass(slots=True)
class Intake:
    events: int = 0
    malformed: int = 0
    dropped: int = 0  # events hooks could not even spool (counted by them)


def ingest_spool(ingest: Ingest) -> Intake:
    """Ingest the spool (a claimed one left by a crash first), then remove it."""
    done = Intake()
    claimed = spool.claimed_path()
    if not os.path.lexists(claimed):
        with contextlib.suppress(FileNotFoundError):
            os.rename(spool.spool_path(), claimed)
    if os.path.lexists(claimed):
        _ingest_file(ingest, claimed, done)
    done.dropped = _take_dropped()
    if done.events or done.malformed or done.dropped:
        log.warn("worker", "spooled events ingested", events=done.events,
                 malformed=done.malformed, dropped_while_full=done.dropped)  # fmt: skip
    return done


def _ingest_file(ingest: Ingest, claimed: str, done: Intake) -> None:
    progress = paths.data_dir() / PROGRESS
    skip = _read_progress(progress)
    fd = None if os.path.islink(claimed) else open_regular(claimed)
    if fd is None:  # a FIFO, directory or symlink to one: not ours to read
        log.warn("worker", "spool path is not a regular file; removed it")
        _remove(claimed)
        return
    with os.fdopen(fd, "rb") as handle:  # a line at a time: the file is never held whole
        offset = 0
        for line in handle:
            offset += len(line)
            if offset > MAX_SPOOL_READ:
                break
            if offset <= skip:
                continue
            kind = _take(ingest, line)
            if kind is None:
                done.malformed += 1
                continue
            done.events += 1
            if kind == "init":  # the one kind without an id: never taken twice
                paths.write_private_file(progress, str(offset))
    _remove(claimed)
    progress.unlink(missing_ok=True)


def _take(ingest: Ingest, line: bytes) -> str | None:
    """Ingest one spooled line; its kind, or None when it is not a spooled event."""
    try:
        item = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(item, dict) or item.get("method") != "POST":
        return None
    body, at = item.get("body"), item.get("at")
    at = at if isinstance(at, int) and not isinstance(at, bool) and at > 0 else None
    route = item.get("path")
    try:
        if route == "/api/sessions/init":
            ingest.session_init(_as(body, SessionInit), at=at)
            return "init"
        if route == "/api/sessions/observations":
            ingest.observation(_as(body, ToolEvent), replay=True)
        elif route == "/api/sessions/summarize":
            ingest.summarize(_as(body, SummaryRequest))
        elif route == "/api/sessions/end":
            ingest.end(_as(body, SessionEnd))
        else:
            return None
    except (msgspec.ValidationError, ValueError, TypeError):
        return None
    return "event"


def _as(body: Any, kind: type[T]) -> T:
    if not isinstance(body, dict):
        raise ValueError("not an object")
    return msgspec.convert(body, kind)


def _read_progress(path: Any) -> int:
    try:
        return int(path.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)
        else:
            os.unlink(path)
    except OSError as exc:
        log.warn("worker", "cannot remove the claimed spool", error=str(exc))


def _take_dropped() -> int:
    """The hooks' count of events the spool could not keep, reset once logged."""
    state = spool.read_state()
    count = state.get("dropped")
    if not isinstance(count, int) or count <= 0:
        return 0
    state.update(dropped=0, last_dropped=count)
    spool.write_state(state)
    return count
