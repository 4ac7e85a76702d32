"""A hook's stdin, read once and bounded, for both of its paths (hooks.forward, hooks.runner)."""

from __future__ import annotations

import os
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
