"""Server-sent events: every change is numbered and kept in a short ring, so a client that
reconnects with Last-Event-ID gets exactly what it missed — nothing lost, nothing twice."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator
from typing import Any

RING_SIZE = 2000
CLIENT_QUEUE = 1000
KEEPALIVE_S = 15.0
RESERVED = frozenset({"type", "id", "ts"})


class _Client:
    __slots__ = ("dropped", "queue")

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[int, str] | None] = asyncio.Queue(CLIENT_QUEUE)
        self.dropped = False


class Broadcaster:
    """Fan-out of numbered events to SSE clients; publish() may be called from any thread."""

    def __init__(self, ring_size: int = RING_SIZE) -> None:
        self._ring: deque[tuple[int, str]] = deque(maxlen=ring_size)
        self._next_id = 1
        self._lock = threading.Lock()
        self._clients: set[_Client] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.closed = False

    @property
    def client_count(self) -> int:
        return len(self._clients)

    @property
    def last_id(self) -> int:
        return self._next_id - 1

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def publish(self, kind: str, **data: Any) -> int:
        """Number the event, keep it in the ring and hand it to every client. `type`, `id`
        and `ts` are the envelope's: a payload field of that name is a bug."""
        if not RESERVED.isdisjoint(data):
            raise ValueError(f"event fields {sorted(RESERVED & set(data))} are reserved")
        with self._lock:
            event_id = self._next_id
            self._next_id += 1
            payload = json.dumps(
                {"type": kind, "id": event_id, "ts": int(time.time() * 1000), **data}
            )
            frame = (event_id, payload)
            self._ring.append(frame)
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._deliver, frame)
        return event_id

    def _deliver(self, frame: tuple[int, str] | None) -> None:
        for client in list(self._clients):
            try:
                client.queue.put_nowait(frame)
            except asyncio.QueueFull:  # too slow: cut it off; it reconnects and resumes
                client.dropped = True
                self._clients.discard(client)

    def backlog(self, after: int) -> list[tuple[int, str]] | None:
        """Events newer than `after`, or None when some were already dropped from the ring."""
        with self._lock:
            if not self._ring or after >= self._ring[-1][0]:
                return []
            if after + 1 < self._ring[0][0]:
                return None
            return [frame for frame in self._ring if frame[0] > after]

    async def subscribe(
        self, last_event_id: int | None, hello: dict[str, Any]
    ) -> AsyncGenerator[str, None]:
        """SSE text chunks for one client until it disconnects or the worker stops."""
        client = _Client()
        with self._lock:  # from here on every new event reaches the queue
            self._clients.add(client)
            start = self.last_id
        try:
            yield "retry: 1000\n\n"
            if last_event_id is not None and last_event_id > start:
                # A number this worker never gave: it restarted since. Start afresh.
                yield _frame(None, json.dumps({"type": "reset", "id": start}))
                last_event_id = None
            missed = self.backlog(last_event_id) if last_event_id is not None else []
            if missed is None:
                # Too far behind to replay: tell the client to reload its lists.
                yield _frame(None, json.dumps({"type": "reset", "id": start}))
                missed = []
            missed = [frame for frame in missed if frame[0] <= start]  # the rest is queued
            yield _frame(None, json.dumps({"type": "connected", "last_id": start, **hello}))
            sent = start  # the backlog covers up to `start`; the queue everything after
            for event_id, payload in missed:
                yield _frame(event_id, payload)
            while not self.closed:
                try:
                    frame = await asyncio.wait_for(client.queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    if client.dropped:
                        return
                    yield ": keep-alive\n\n"
                    continue
                if frame is None:
                    return
                if frame[0] > sent:  # skip what the backlog already sent
                    sent = frame[0]
                    yield _frame(*frame)
                if client.dropped and client.queue.empty():
                    return
        finally:
            self._clients.discard(client)

    def close(self) -> None:
        self.closed = True
        for client in list(self._clients):
            client.dropped = True
            if not client.queue.full():
                client.queue.put_nowait(None)


def _frame(event_id: int | None, payload: str) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}data: {payload}\n\n"
