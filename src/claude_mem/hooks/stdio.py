"""A hook process's side of its host, for both of its paths (hooks.forward, hooks.runner):
stdin read once and bounded, one line on stderr, the working directory."""

from __future__ import annotations

import os
import sys
from time import monotonic

MAX_PAYLOAD = 16 << 20  # the worker's body limit; anything larger is cut and dropped
DRAIN_LIMIT = 256 << 20  # past this, stop reading what the host still sends
STDIN_WAIT_S = 5.0  # a host that never closes stdin: give up waiting for the end after this


def read(fd: int = 0) -> tuple[bytes, str]:
    """All of stdin, bounded: (data, status) with status ok | tty | too_large | closed.

    Waits for EOF at most STDIN_WAIT_S (a host that keeps the pipe open gets what it sent so
    far). Over MAX_PAYLOAD the rest is read and dropped, so the host never hits a broken pipe.
    """
    try:
        if os.isatty(fd):
            return b"", "tty"
    except OSError:
        return b"", "closed"
    import select  # noqa: PLC0415

    chunks: list[bytes] = []
    size = 0
    deadline = monotonic() + STDIN_WAIT_S
    while size <= DRAIN_LIMIT:
        remaining = deadline - monotonic()
        try:
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                break
            chunk = os.read(fd, 1 << 20)
        except (OSError, ValueError):
            if not chunks:
                return b"", "closed"
            break
        if not chunk:
            break
        if size < MAX_PAYLOAD:
            chunks.append(chunk)
        size += len(chunk)
    if size > MAX_PAYLOAD:
        return b"", "too_large"
    return b"".join(chunks), "ok"


def say(line: str) -> None:
    """One line on stderr; a closed stderr is not our problem."""
    try:
        sys.stderr.write(line.rstrip("\n") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def process_cwd() -> str | None:
    """This process's working directory (a payload without one gets it); None once removed."""
    try:
        return os.getcwd()
    except OSError:
        return None
