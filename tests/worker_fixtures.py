"""A real worker app served by uvicorn on a loopback port, in a background thread."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
import uvicorn

from claude_mem.worker.app import create_app
from claude_mem.worker.state import WorkerState


class RunningWorker:
    def __init__(self, state: WorkerState, port: int) -> None:
        self.state = state
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.client = httpx2.Client(
            base_url=self.base, headers={"x-claude-mem-token": state.token}, timeout=10
        )

    def wait_ready(self, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.client.get("/api/readiness").status_code == 200:
                return
            time.sleep(0.02)
        raise TimeoutError("worker never became ready")


@contextmanager
def running_worker(ready: bool = True) -> Iterator[RunningWorker]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    state = WorkerState()
    state.port = port
    app = create_app(state=state)
    server = uvicorn.Server(
        uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False)
    )
    state.request_shutdown = lambda: setattr(server, "should_exit", True)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])))
    thread.start()
    worker = RunningWorker(state, port)
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        if ready:
            worker.wait_ready()
        yield worker
    finally:
        worker.client.close()
        server.should_exit = True
        thread.join(15)
        sock.close()
