"""`worker.pid`: which process serves this data dir, on which port (stdlib only, hooks read it).

Clients read the port here first: a data dir whose configured port is taken by another data
dir's worker gets its own worker on another port, and only its pid file knows which.
"""

from __future__ import annotations

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
    port = info.get("port") if info else None
    return port if isinstance(port, int) and not isinstance(port, bool) and port > 0 else None
