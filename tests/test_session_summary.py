"""A session's one summary, kept up to date turn by turn in a real worker: a four-turn chat is
one summary row holding every turn's findings once, the cause under Learned, and its earlier
versions gone from search; whichever provider wrote each turn's draft."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_mem.pipeline import consumer, registry
from claude_mem.pipeline.local.words import sentences
from claude_mem.pipeline.providers.base import (
    Result,
    SessionContext,
    SummaryDraft,
    SummaryInput,
    ToolEvent,
)
from tests.worker_fixtures import RunningWorker, running_worker, wait_drained

HOST, CWD = "chat-1", "/w/ledger"
ROWS = "The exporter reads the ledger through `LedgerReader.rows()`, which pages by 500 entries."
CAUSE = (
    "The export is empty because `LedgerReader.rows()` starts at the second page when the "
    "month rolls over."
)
RULE = "On a rollover the exporter must ask for page one explicitly with `rows(page=1)`."
RESTATED = "The empty exports happen because the reader skips page one at a month rollover."
CHAT = [
    ("Why do the nightly ledger exports sometimes come out empty?",
     f"{ROWS} Next: check the cron logs for the empty nights."),
    ("The empty ones are all on the first of the month.",
     f"That explains it. {CAUSE} {ROWS}"),
    ("What should the exporter do on a rollover then?",
     f"{RULE} Exports written before the fix are not re-run automatically."),
    ("OK, where are we?",
     f"{RESTATED} Next: backfill the empty exports of the last three months."),
]  # fmt: skip


@pytest.fixture
def worker(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningWorker]:
    monkeypatch.setattr(consumer, "POLL_S", 0.05)
    with running_worker() as running:
        yield running


def turn(worker: RunningWorker, prompt: str, reply: str) -> None:
    """One chat turn as the hooks send it: the prompt, then the Stop with the reply."""
    client = worker.client
    body = {"host_session_id": HOST, "cwd": CWD}
    client.post("/api/sessions/init", json={**body, "prompt": prompt}).raise_for_status()
    client.post(
        "/api/sessions/summarize", json={**body, "last_assistant_message": reply}
    ).raise_for_status()
    wait_drained(worker)


def summaries(worker: RunningWorker) -> list[dict[str, object]]:
    items: list[dict[str, object]] = worker.client.get("/api/summaries").json()["items"]
    return items


def summary_hits(worker: RunningWorker, query: str) -> list[int]:
    hits = worker.client.get("/api/search", params={"query": query}).json()["hits"]
    return [hit["id"] for hit in hits if hit["kind"] == "summary"]


def said(summary: dict[str, object], field: str) -> str:
    return " ".join(str(summary[field]).split())


def test_a_four_turn_chat_is_one_summary_holding_every_turn_once(worker: RunningWorker) -> None:
    turn(worker, *CHAT[0])
    (first,) = summaries(worker)
    for prompt, reply in CHAT[1:]:
        turn(worker, prompt, reply)
    (current,) = summaries(worker)  # one row for the session, not one per turn
    assert current["id"] != first["id"]
    assert current["prompt_number"] == len(CHAT)
    assert current["request"] == CHAT[0][0]  # the session's request, not its last prompt
    learned = said(current, "learned")
    for finding in (ROWS, CAUSE, RULE, RESTATED):  # every turn's
        assert finding in learned, learned
    next_steps = said(current, "next_steps")
    assert next_steps == "Next: backfill the empty exports of the last three months."
    assert "because" not in next_steps  # the cause is learned, never a step
    fields = ("request", "investigated", "learned", "completed", "next_steps", "notes")
    every = [re.sub(r"[\s.…]+$", "", s.lower()) for f in fields for s in sentences(str(current[f]))]
    assert len(every) == len(set(every)), every  # no sentence said twice, anywhere
    # Earlier versions are not kept in search: only the current summary answers.
    assert summary_hits(worker, "cron logs") == []  # a step the last turn no longer lists
    assert summary_hits(worker, "pages entries") == [current["id"]]
    assert summary_hits(worker, "rollover") == [current["id"]]
    # The viewer is told: each earlier version is deleted as its successor arrives.
    events = [json.loads(text) for _, text in worker.state.stream.backlog(0) or []]
    deleted = [e["record_id"] for e in events if e["type"] == "summary_deleted"]
    assert first["id"] in deleted
    assert current["id"] not in deleted
    assert len(deleted) == len(CHAT) - 1
    # A Stop the session sends again adds nothing.
    body = {"host_session_id": HOST, "cwd": CWD, "last_assistant_message": "Done."}
    worker.client.post("/api/sessions/summarize", json=body).raise_for_status()
    wait_drained(worker)
    assert [s["id"] for s in summaries(worker)] == [current["id"]]


class Turnwise:
    """A model-backed provider's stand-in: each turn's summary holds that turn alone, as an
    LLM asked about the session so far may well write it."""

    name = "turnwise"

    async def compress(self, events: list[ToolEvent], ctx: SessionContext) -> Result:
        return Result()

    async def summarize(self, request: SummaryInput, ctx: SessionContext) -> Result:
        turn = ctx.turn
        prompt = turn.prompt if turn is not None else ""
        reply = request.last_assistant_message
        return Result(
            summary=SummaryDraft(request=prompt, learned=reply, completed=reply), model="m1"
        )


def test_any_providers_turn_summaries_fold_into_the_sessions_one(
    worker: RunningWorker,
) -> None:
    registry.register(Turnwise.name, lambda settings: Turnwise())
    try:
        body = {"values": {"CLAUDE_MEM_PROVIDER": Turnwise.name}}
        worker.client.post("/api/settings", json=body).raise_for_status()
        for prompt, reply in CHAT[:3]:
            turn(worker, prompt, reply)
    finally:
        registry._factories.pop(Turnwise.name, None)
    (current,) = summaries(worker)
    assert current["request"] == CHAT[0][0]
    assert current["generated_by"] == "turnwise:m1"
    learned = said(current, "learned")
    assert learned.count(ROWS) == 1  # turn 2 repeats it: kept once
    assert CAUSE in learned
    assert RULE in learned
    assert said(current, "completed") == ""  # every sentence is already learned
