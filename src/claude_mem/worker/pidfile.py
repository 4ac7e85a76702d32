"""`worker.pid`: which process serves this data dir, on which port (stdlib only, hooks read it).

Clients read the port here first: a data dir whose configured port is taken by another data
dir's worker gets its own worker on another port, and only its pid file knows which.
"""

from __future__ import annotations

import os

from claude_mem import locations
from claude_mem.hooks import jsonio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def pid_path() -> str:
    return locations.data_file("worker.pid")


def read_pid_info() -> dict[str, Any] | None:
    """The pid file's contents, or None if it is missing or unreadable."""
    try:
        with open(pid_path(), "rb") as handle:
            data = jsonio.loads(handle.read())
    except (OSError, ValueError):
        return None
    pid = data.get("pid") if isinstance(data, dict) else None
    return data if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None


def recorded_port() -> int | None:
    """The port the pid file says this data dir's worker listens on, if any."""
    info = read_pid_info()
    return None if info is None else port_of(info)


def port_of(info: dict[str, Any]) -> int | None:
    """The pid file's port, if it is one."""
    port = info.get("port")
    return port if isinstance(port, int) and not isinstance(port, bool) and port > 0 else None


def proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, start time in clock ticks) from /proc/<pid>/stat; None if unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        fields = raw[raw.rindex(b")") + 2 :].split()  # the name (field 2) may hold ')' and spaces
        return fields[0].decode("ascii"), int(fields[19])  # fields 3 and 22
    except (OSError, ValueError, IndexError):
        return None


def process_start_time(pid: int) -> int | None:
    """When `pid` started (clock ticks since boot); None where there is no /proc."""
    stat = proc_stat(pid)
    return stat[1] if stat else None


def pid_alive_and_ours(info: dict[str, Any]) -> bool:
    """True if the pid file's process still runs and is the same process (start time matches)."""
    pid = info.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except OSError:  # gone, or another user's process: either way not our worker
        return False
    stat = proc_stat(pid)
    if stat is None:  # no procfs (macOS): the pid check is all there is
        return not os.path.isdir("/proc/self")
    recorded = info.get("start_time")
    return stat[0] not in ("Z", "X") and (recorded is None or recorded == stat[1])
