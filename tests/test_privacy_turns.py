"""Property: no byte of a private region or a secret in a host's transcript reaches any table
or log, once the worker has turned the transcript's turns into units and summaries."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claude_mem.pipeline import consumer
from tests.test_pipeline_consumer import configure
from tests.test_privacy_store import hidden
from tests.worker_fixtures import RunningWorker, running_worker, wait_drained

CWD = "/w/proj"
_sessions = itertools.count()


@pytest.fixture
def worker(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningWorker]:
    monkeypatch.setattr(consumer, "POLL_S", 0.05)
    monkeypatch.delenv("CLAUDE_MEM_TURN_IDLE_S")  # turns end at their Stop, as by default
    with running_worker() as running:
        configure(running, turn_idle_s=3600)
        yield running


def replay(worker: RunningWorker, transcript: Path, texts: list[str], cwd: str = CWD) -> None:
    """One session in `cwd`: per text, a turn whose prompt, words, tool result and reply hold
    it."""
    host = f"private-{next(_sessions)}"
    where = {"host_session_id": host, "cwd": cwd, "transcript_path": str(transcript)}
    with transcript.open("w") as out:
        for n, text in enumerate(texts):
            call = f"toolu_{host}_{n}"
            for record in (
                {"type": "user", "message": {"role": "user", "content": f"look at {text}"}},
                {"type": "assistant", "message": {"content": [
                    {"type": "text", "text": f"The cause: {text}"},
                    {"type": "tool_use", "id": call, "name": "Read", "input": {}}]}},
                {"type": "user", "message": {"content": [{"type": "tool_result",
                    "tool_use_id": call, "content": [{"type": "text", "text": text}]}]}},
                {"type": "assistant", "message": {"content": [
                    {"type": "text", "text": f"From now on keep {text}"}]}},
            ):  # fmt: skip
                out.write(json.dumps(record) + "\n")
            out.flush()
            client = worker.client
            client.post("/api/sessions/init", json={**where, "prompt": f"look at {text}"})
            client.post("/api/sessions/observations", json={
                **where, "tool_name": "Read", "tool_use_id": call,
                "tool_input": {"file_path": f"{cwd}/notes.md"},
                "tool_response": {"type": "text", "file": {"filePath": f"{cwd}/notes.md",
                                  "content": "plain notes"}}})  # fmt: skip
            client.post("/api/sessions/summarize", json={
                **where, "last_assistant_message": f"From now on keep {text}"})  # fmt: skip


def stored_bytes(data_dir: Path) -> bytes:
    """Every byte the data dir holds: the database with its WAL, the logs, the state."""
    return b"".join(path.read_bytes() for path in sorted(data_dir.rglob("*")) if path.is_file())


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(hidden(), min_size=1, max_size=3))
def test_no_private_or_secret_byte_from_a_transcript_reaches_a_table_or_log(
    worker: RunningWorker, data_dir: Path, tmp_path: Path, items: list[tuple[str, str]]
) -> None:
    transcript = tmp_path / f"t{next(_sessions)}.jsonl"
    replay(worker, transcript, [text for text, _ in items])
    wait_drained(worker)
    made = worker.client.get("/api/observations").json()["items"]
    assert any(item["source"] == "transcript" for item in made)  # the words were read
    everything = stored_bytes(data_dir)
    for _, marker in items:
        assert marker.encode() not in everything
        assert marker.lower().encode() not in everything.lower()
