"""A real worker app served by uvicorn on a loopback port, in a background thread."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import httpx2
import uvicorn
from starlette.applications import Starlette
from starlette.types import ASGIApp

from claude_mem.worker.app import create_app
from claude_mem.worker.state import WorkerState


class RunningWorker:
    def __init__(self, state: WorkerState, port: int, app: Starlette) -> None:
        self.state = state
        self.port = port
        self.app = app
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


def loopback_socket() -> socket.socket:
    """A socket bound to a free loopback port, for `serving`."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def serving(
    app: ASGIApp, sock: socket.socket, lifespan: Literal["on", "off"] = "on"
) -> Iterator[uvicorn.Server]:
    """`app` served by uvicorn on `sock` in a background thread; stopped (and `sock` closed)
    afterwards."""
    server = uvicorn.Server(
        uvicorn.Config(app, lifespan=lifespan, log_level="warning", access_log=False)
    )
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])))
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        yield server
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


@contextmanager
def running_worker(ready: bool = True) -> Iterator[RunningWorker]:
    sock = loopback_socket()
    state = WorkerState()
    state.port = sock.getsockname()[1]
    app = create_app(state=state)
    with serving(app, sock) as server:
        state.request_shutdown = lambda: setattr(server, "should_exit", True)
        worker = RunningWorker(state, state.port, app)
        try:
            if ready:
                worker.wait_ready()
            yield worker
        finally:
            worker.client.close()


def wait_drained(worker: RunningWorker, timeout: float = 15) -> None:
    """Until the worker's queue holds nothing pending or processing (AssertionError after
    `timeout` seconds, naming what is left)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        queue = worker.client.get("/api/stats").json()["queue"]
        if queue["pending"] == 0 and queue["processing"] == 0:
            return
        time.sleep(0.05)
    raise AssertionError(f"queue not drained: {queue}")
