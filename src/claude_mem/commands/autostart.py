"""Starting the worker on behalf of a command that needs it (install, viewer), and saying so.

A worker that keeps running after the command ends must never be a surprise: the caller gets
whether this call started it, and prints `started_line()` when it did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from claude_mem.worker.lifecycle import WorkerInfo


def ensure_worker(wait_s: float) -> tuple[WorkerInfo | None, bool]:
    """(the healthy worker or None, whether this call started it)."""
    from claude_mem.worker import lifecycle

    before = lifecycle.find_running()
    info = lifecycle.ensure_running(wait_s=wait_s)
    started = info is not None and (before is None or before.pid != info.pid)
    return info, started


def started_line(info: WorkerInfo) -> str:
    return (
        f"started the worker (pid {info.pid}, port {info.port}); it keeps running in the "
        "background (`claude-mem worker stop` stops it)"
    )
