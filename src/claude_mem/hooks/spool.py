"""Events a hook could not deliver, kept in `<data dir>/spool.jsonl` until a worker starts.

A command hook that can neither reach nor start the worker appends the request it would have
sent (the handler's body, already privacy-cleaned) as one JSON line, in one `write` on an
`O_APPEND` descriptor, so concurrent hooks never interleave lines. The file is 0600, opened
without following a symlink and without blocking (a FIFO or directory at the path is refused,
never waited on), and bounded by CLAUDE_MEM_SPOOL_MAX_BYTES: once full, events are dropped and
counted in `state/spool.json`; the first drop says so once (stderr and the log), `claude-mem
doctor` shows the count. The worker ingests the file at start (worker/spool_intake.py).

Stdlib only: the hook path imports this module (on the failure path only).
"""

from __future__ import annotations

import os
import stat
import time

from claude_mem import locations
from claude_mem.hooks import jsonio

NAME = "spool.jsonl"
CLAIMED = "spool.claimed.jsonl"  # the worker's: renamed before ingest, deleted after
STATE = "spool.json"
VERSION = 1
# Requests that carry events (prompts, tool calls, stops, ends); queries are never spooled.
ROUTES = (
    "/api/sessions/init",
    "/api/sessions/observations",
    "/api/sessions/summarize",
    "/api/sessions/end",
)
_APPEND = (
    os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY
    | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)  # fmt: skip


def spool_path() -> str:
    return locations.data_file(NAME)


def claimed_path() -> str:
    return locations.data_file(CLAIMED)


def state_path() -> str:
    return locations.state_file(STATE)


def wanted(method: str, path: str) -> bool:
    """Whether a request that failed loses an event: only the ingest routes' POSTs."""
    return method == "POST" and path.split("?", 1)[0] in ROUTES


def append(method: str, path: str, body: bytes, max_bytes: int) -> str | None:
    """Spool one request; None when it was kept, else one line saying why it was not (the
    first drop since the worker last emptied the spool gets a line; later drops only count)."""
    try:
        payload = jsonio.loads(body)
    except ValueError:
        return None  # never produced by our handlers: nothing worth keeping
    line = jsonio.dumps(
        {"v": VERSION, "at": int(time.time() * 1000), "method": method, "path": path,
         "body": payload},
        ensure_ascii=False, separators=(",", ":"),
    ).encode("utf-8", "replace") + b"\n"  # fmt: skip
    try:
        locations.ensure_data_dir()
        fd = os.open(spool_path(), _APPEND, locations.FILE_MODE)
    except (OSError, ValueError):
        return _dropped("the spool file cannot be opened")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return _dropped("the spool path is not a regular file")
        if info.st_size + len(line) > max_bytes:
            return _dropped(f"the spool is full ({max_bytes} bytes, CLAUDE_MEM_SPOOL_MAX_BYTES)")
        if os.write(fd, line) != len(line):  # a full disk: the worker skips the torn line
            return _dropped("the disk is full")
    except OSError:
        return _dropped("the spool file cannot be written")
    finally:
        os.close(fd)
    return None


def _dropped(why: str) -> str | None:
    """Count a dropped event; the warning line for the first one, else None."""
    state = read_state()
    before = state.get("dropped")
    count = (before if isinstance(before, int) else 0) + 1
    state.update(dropped=count, last_reason=why, last_at=time.time())
    if not write_state(state) or count > 1:
        return None
    return (
        f"claude-mem: the worker is down and {why}: events are being dropped and counted "
        "(run `claude-mem doctor`)"
    )


def write_state(state: dict[str, object]) -> bool:
    """Replace the drop counter; False when it cannot be written (never raises)."""
    try:
        locations.write_private_file(state_path(), jsonio.dumps(state) + "\n")
    except OSError:
        return False
    return True


def read_state() -> dict[str, object]:
    """The drop counter: {"dropped": n, "last_reason": ..., "last_at": ...} or {}."""
    try:
        with open(state_path(), "rb") as handle:
            data = jsonio.loads(handle.read())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def pending_bytes() -> int:
    """Bytes waiting in the spool (claimed or not), for doctor."""
    total = 0
    for where in (spool_path(), claimed_path()):
        try:
            info = os.lstat(where)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            total += info.st_size
    return total
