from __future__ import annotations

import asyncio
import json

import pytest

from claude_mem.worker.stream import Broadcaster
from tests.worker_fixtures import RunningWorker


def read_events(worker: RunningWorker, count: int, **params: object) -> list[dict]:
    """Open the stream, collect `count` data events (after 'connected'), close it."""
    events: list[dict] = []
    headers = {}
    if "last_event_id" in params:
        headers["last-event-id"] = str(params.pop("last_event_id"))
    with worker.client.stream("GET", "/api/stream", headers=headers, timeout=10) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
                if len(events) >= count:
                    break
    return events


def post_prompt(worker: RunningWorker, text: str) -> None:
    response = worker.client.post(
        "/api/sessions/init", json={"host_session_id": "s", "cwd": "/w/p", "prompt": text}
    )
    assert response.status_code == 200


def test_events_are_numbered_and_resumable_without_gaps_or_repeats(worker: RunningWorker) -> None:
    post_prompt(worker, "first")
    (hello,) = read_events(worker, 1)
    assert hello["type"] == "connected"
    seen_up_to = hello["last_id"]
    assert seen_up_to >= 2  # session_started + new_prompt

    post_prompt(worker, "second")
    post_prompt(worker, "third")
    events = read_events(worker, 3, last_event_id=seen_up_to)
    assert events[0]["type"] == "connected"
    missed = events[1:]
    assert [e["prompt"]["text"] for e in missed] == ["second", "third"]
    ids = [e["id"] for e in missed]
    assert ids == sorted(set(ids))
    assert ids[0] == seen_up_to + 1


def test_live_event_reaches_a_connected_client(worker: RunningWorker) -> None:
    import threading

    result: list[list[dict]] = []
    reader = threading.Thread(target=lambda: result.append(read_events(worker, 3)))
    reader.start()
    deadline = 50
    while worker.state.stream.client_count == 0 and deadline:
        threading.Event().wait(0.05)
        deadline -= 1
    post_prompt(worker, "live one")
    reader.join(10)
    types = [e["type"] for e in result[0]]
    assert types == ["connected", "session_started", "new_prompt"]
    assert result[0][2]["prompt"]["text"] == "live one"


def test_backlog_reports_gap_when_ring_overflowed() -> None:
    stream = Broadcaster(ring_size=3)
    for i in range(5):
        stream.publish("x", n=i)
    assert stream.backlog(4) == [(5, stream.backlog(4)[0][1])]  # type: ignore[index]  # 5 is in the ring
    assert stream.backlog(5) == []
    assert stream.backlog(0) is None  # 1 and 2 already fell out of the ring


def test_reset_sent_when_resume_point_is_gone() -> None:
    async def scenario() -> list[str]:
        stream = Broadcaster(ring_size=2)
        stream.bind(asyncio.get_running_loop())
        for i in range(4):
            stream.publish("x", n=i)
        chunks = []
        agen = stream.subscribe(0, {})
        async for chunk in agen:
            chunks.append(chunk)
            if len(chunks) == 3:  # retry hint, reset, connected
                break
        await agen.aclose()
        return chunks

    chunks = asyncio.run(scenario())
    payloads = [json.loads(c.split("data: ", 1)[1]) for c in chunks if "data: " in c]
    assert [p["type"] for p in payloads[:2]] == ["reset", "connected"]


def collect(
    stream: Broadcaster, last_event_id: int | None, publish_at: int, count: int
) -> list[dict]:
    """Subscribe, publish one event after `publish_at` chunks (mid-handshake), and return the
    first `count` payloads."""

    async def scenario() -> list[dict]:
        stream.bind(asyncio.get_running_loop())
        payloads: list[dict] = []
        agen = stream.subscribe(last_event_id, {})
        chunks = 0
        async for chunk in agen:
            chunks += 1
            if chunks == publish_at:
                stream.publish("during", n=99)
            if "data: " in chunk:
                payloads.append(json.loads(chunk.split("data: ", 1)[1]))
            if len(payloads) == count:
                break
        await agen.aclose()
        return payloads

    return asyncio.run(scenario())


def test_event_published_during_the_handshake_is_delivered_once() -> None:
    stream = Broadcaster()
    stream.publish("before", n=1)
    got = collect(stream, None, publish_at=1, count=2)
    assert [p["type"] for p in got] == ["connected", "during"]
    assert got[0]["last_id"] == 1
    assert got[1]["id"] == 2

    stream.publish("missed", n=3)  # id 3, while the client was away
    got = collect(stream, 2, publish_at=1, count=3)
    assert [(p["type"], p["id"]) for p in got[1:]] == [("missed", 3), ("during", 4)]


def test_resume_from_a_number_a_restarted_worker_never_gave_resets() -> None:
    stream = Broadcaster()  # a fresh worker: its numbering starts again at 1
    stream.publish("x", n=1)
    got = collect(stream, 500, publish_at=1, count=3)
    assert [p["type"] for p in got] == ["reset", "connected", "during"]
    assert got[2]["id"] == 2  # not skipped as if the client had seen it


def test_envelope_fields_cannot_be_overwritten_by_a_payload() -> None:
    stream = Broadcaster()
    with pytest.raises(ValueError, match="reserved"):
        stream.publish("observation_deleted", id=7)
    assert stream.last_id == 0  # nothing was numbered or kept
    event_id = stream.publish("observation_deleted", record_id=7)
    [(number, payload)] = stream.backlog(0) or []
    assert number == event_id
    assert json.loads(payload) | {"ts": 0} == {
        "type": "observation_deleted",
        "id": event_id,
        "ts": 0,
        "record_id": 7,
    }
