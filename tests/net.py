"""Loopback and process helpers shared by the tests that run real processes."""

from __future__ import annotations

import socket
import threading
from pathlib import Path


def free_port() -> int:
    """A port nothing listens on right now (bind to 0, read it, release it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class DeadPort:
    """A port where something accepts connections and hangs up at once: no worker can bind
    it, and every request to it fails fast."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.port = int(self.sock.getsockname()[1])
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.close()

    def close(self) -> None:
        self.running = False
        self.thread.join(5)
        self.sock.close()


def worker_pids(data_dir: Path, *, below: bool = False) -> list[int]:
    """Live worker processes (not zombies) serving `data_dir` (or, `below`, any data dir
    under it), found through /proc."""
    marker = f"CLAUDE_MEM_DATA_DIR={data_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            is_worker = b"claude_mem.worker" in argv and b"run" in argv
            is_worker = is_worker or argv[1:3] == [b"worker", b"run"]
            if not is_worker or not any(
                var == marker or (below and var.startswith(marker + b"/"))
                for var in (entry / "environ").read_bytes().split(b"\0")
            ):
                continue
            state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return sorted(found)
