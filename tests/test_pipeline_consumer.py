"""The queue consumer inside a real worker: chain, fallback, budgets, retries, idempotence."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from claude_mem.pipeline import consumer, registry
from claude_mem.pipeline.providers.base import (
    ObservationDraft,
    ProviderError,
    Result,
    SessionContext,
    SummaryDraft,
    SummaryInput,
    ToolEvent,
)
from claude_mem.store import Database
from claude_mem.store import queue as queue_store
from tests.llm_mocks import answer, anthropic_mock
from tests.worker_fixtures import RunningWorker, running_worker, wait_drained


class Scripted:
    """A provider whose behaviour each test scripts; registered like any plugin."""

    def __init__(self, name: str, fail: ProviderError | None = None, tokens: int = 0) -> None:
        self.name, self.fail, self.tokens = name, fail, tokens
        self.calls: list[list[int]] = []

    async def compress(self, events: list[ToolEvent], ctx: SessionContext) -> Result:
        self.calls.append([e.tool_use_row_id for e in events])
        if self.fail is not None:
            raise self.fail
        drafts = [
            ObservationDraft(type="change", title=f"{self.name} saw {e.tool_name}",
                             source_event_ids=[e.tool_use_row_id])
            for e in events
        ]  # fmt: skip
        return Result(drafts, input_tokens=self.tokens, output_tokens=0, model="m1")

    async def summarize(self, request: SummaryInput, ctx: SessionContext) -> Result:
        if self.fail is not None:
            raise self.fail
        return Result(summary=SummaryDraft(request=ctx.prompts[0], completed="done"),
                      input_tokens=self.tokens, model="m1")  # fmt: skip


@pytest.fixture
def scripted() -> Iterator[dict[str, Scripted]]:
    made: dict[str, Scripted] = {}
    yield made
    for name in made:
        registry._factories.pop(name, None)


def use(made: dict[str, Scripted], provider: Scripted) -> Scripted:
    made[provider.name] = provider
    registry.register(provider.name, lambda settings: provider)
    return provider


@pytest.fixture
def worker(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningWorker]:
    monkeypatch.setattr(consumer, "POLL_S", 0.05)
    with running_worker() as running:
        yield running


def send_session(worker: RunningWorker, host: str = "s1", events: int = 3, first: int = 0) -> None:
    client = worker.client
    prompt = {"host_session_id": host, "cwd": "/w/proj", "prompt": "fix the parser"}
    client.post("/api/sessions/init", json=prompt).raise_for_status()
    for n in range(first, first + events):
        client.post("/api/sessions/observations", json={
            "host_session_id": host, "cwd": "/w/proj", "tool_name": "Edit",
            "tool_use_id": f"{host}-t{n}",
            "tool_input": {"file_path": f"/w/proj/src/mod{n}.py", "old_string": "a",
                           "new_string": "b"},
            "tool_response": {"success": True}}).raise_for_status()  # fmt: skip


def configure(worker: RunningWorker, **values: object) -> None:
    """Change settings the way a user would (the worker re-reads them)."""
    body = {"values": {f"CLAUDE_MEM_{k.upper()}": v for k, v in values.items()}}
    worker.client.post("/api/settings", json=body).raise_for_status()


def test_local_default_stores_observations_with_evidence_files(worker: RunningWorker) -> None:
    send_session(worker)
    wait_drained(worker)
    items = worker.client.get("/api/observations").json()["items"]
    assert items
    modified = sorted(f for item in items for f in item["files_modified"])
    assert modified == ["src/mod0.py", "src/mod1.py", "src/mod2.py"]
    assert all(item["generated_by"] == "local" for item in items)
    assert all(item["source"] == "hooks" for item in items)  # the API shows where it came from
    # Offline, the work an observation records is its tool events' size: each Edit event
    # above is ~50 tokens of JSON, and the context's economics line adds these up.
    assert all(20 < item["discovery_tokens"] < 200 for item in items)
    stats = worker.client.get("/api/stats").json()
    assert stats["queue"] == {"pending": 0, "processing": 0, "dead": 0}


def test_each_observation_stores_the_evidence_of_its_own_events(
    worker: RunningWorker, scripted: dict
) -> None:
    use(scripted, Scripted("fake"))
    configure(worker, provider="fake")
    send_session(worker, events=2)
    wait_drained(worker)
    items = worker.client.get("/api/observations").json()["items"]
    assert [item["title"] for item in items] == ["fake saw Edit", "fake saw Edit"]
    assert sorted((item["files_read"], item["files_modified"]) for item in items) == [
        ([], ["src/mod0.py"]),
        ([], ["src/mod1.py"]),
    ]
    assert all(item["generated_by"] == "fake:m1" for item in items)


MODEL_CLAIMS = """<observation><type>change</type><title>Swapped a for b</title>
<narrative>The edit swapped a for b.</narrative>
<files_read><file>claimed/read.py</file></files_read>
<files_modified><file>claimed/by/model.py</file></files_modified>
</observation>"""


def test_file_lists_a_model_sends_are_ignored_and_evidence_is_stored(
    worker: RunningWorker,
) -> None:
    with anthropic_mock(default=answer(MODEL_CLAIMS)) as api:
        configure(worker, provider="anthropic", anthropic_api_key="test-key",
                  anthropic_base_url=api.url)  # fmt: skip
        send_session(worker, events=1)
        wait_drained(worker)
        [request] = api.calls("/v1/messages")
    assert "files_modified" not in request.text  # the prompt no longer asks for them
    [item] = worker.client.get("/api/observations").json()["items"]
    assert (item["title"], item["generated_by"]) == (
        "Swapped a for b",
        "anthropic:claude-haiku-4-5",
    )
    assert (item["files_read"], item["files_modified"]) == ([], ["src/mod0.py"])
    assert worker.client.get("/api/stats").json()["queue"]["dead"] == 0


def test_failing_provider_falls_back_and_health_warns(
    worker: RunningWorker, scripted: dict
) -> None:
    broken = use(scripted, Scripted("broken", fail=ProviderError("transient", "upstream 503")))
    configure(worker, provider="broken")
    for host in ("a", "b", "c"):
        send_session(worker, host=host, events=1)
        wait_drained(worker)
    assert broken.calls  # it was tried
    items = worker.client.get("/api/observations").json()["items"]
    assert len(items) == 3
    assert all(item["generated_by"] == "local" for item in items)  # memory never empty
    health = worker.client.get("/api/stats").json()["provider_health"]["broken"]
    assert health["consecutive_failures"] >= 3
    context = worker.client.get("/api/context/inject", params={"project": "proj"}).text
    assert context.startswith("⚠ claude-mem: compression with 'broken' is failing")


def test_auth_error_pauses_the_provider(worker: RunningWorker, scripted: dict) -> None:
    denied = use(scripted, Scripted("denied", fail=ProviderError("auth", "invalid x-api-key")))
    configure(worker, provider="denied")
    send_session(worker, host="a", events=1)
    wait_drained(worker)
    send_session(worker, host="b", events=1)
    wait_drained(worker)
    assert len(denied.calls) == 1  # paused after the auth failure: not called again
    assert len(worker.client.get("/api/observations").json()["items"]) == 2


def test_budget_exhausted_falls_back_to_local(worker: RunningWorker, scripted: dict) -> None:
    costly = use(scripted, Scripted("costly", tokens=600))
    configure(worker, provider="costly", session_token_budget=1000)
    for n in range(3):  # one batch each: 600, then 1,200 tokens spent, then over budget
        send_session(worker, host="a", events=1, first=n)
        wait_drained(worker)
    items = worker.client.get("/api/observations").json()["items"]
    assert sorted(item["generated_by"] for item in items) == ["costly:m1", "costly:m1", "local"]
    assert len(costly.calls) == 2
    usage = worker.client.get("/api/stats").json()  # spend was recorded per session
    assert usage["counts"]["observations"] == 3


def test_an_offline_plugin_is_not_stopped_by_the_budget(
    worker: RunningWorker, provider_plugin: ModuleType
) -> None:
    configure(worker, provider="fixture-offline", daily_token_budget=0)  # 0: never call an LLM
    send_session(worker, events=2)
    wait_drained(worker)
    items = worker.client.get("/api/observations").json()["items"]
    assert [item["generated_by"] for item in items] == ["fixture-offline"] * 2


def test_a_plugin_that_declares_nothing_costs_tokens_and_is_budgeted(
    worker: RunningWorker, provider_plugin: ModuleType
) -> None:
    configure(worker, provider="fixture-metered", daily_token_budget=0)
    send_session(worker, host="a", events=1)
    wait_drained(worker)
    assert provider_plugin.METERED_CALLS == []  # over budget: never called
    configure(worker, daily_token_budget=1_000_000)
    send_session(worker, host="b", events=1)
    wait_drained(worker)
    assert len(provider_plugin.METERED_CALLS) == 1
    items = worker.client.get("/api/observations").json()["items"]
    assert sorted(item["generated_by"] for item in items) == ["fixture-metered:m1", "local"]


def test_an_offline_plugin_takes_no_llm_slot(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, provider_plugin: ModuleType
) -> None:
    monkeypatch.setattr(consumer, "POLL_S", 0.05)
    monkeypatch.setattr(consumer, "LLM_CONCURRENCY", 0)  # a provider that waits for one hangs
    with running_worker() as worker:
        configure(worker, provider="fixture-offline", fallback_providers="")
        send_session(worker, events=2)
        wait_drained(worker)
        items = worker.client.get("/api/observations").json()["items"]
    assert [item["generated_by"] for item in items] == ["fixture-offline"] * 2


def test_all_providers_failing_retries_then_dead_letters(
    worker: RunningWorker, scripted: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(scripted, Scripted("down", fail=ProviderError("unrecoverable", "bad request")))
    configure(worker, provider="down", fallback_providers="")
    monkeypatch.setattr(consumer, "MAX_ATTEMPTS", 2)
    db = worker.state.db
    assert db is not None
    send_session(worker, events=1)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with db.write() as conn:  # skip the retry delay
            conn.execute("UPDATE queue SET available_at = 0 WHERE status = 'pending'")
        worker.state.pipeline.notify()  # type: ignore[union-attr]  # the worker started one
        if queue_store.counts(db.read())["dead"] == 1:
            break
        time.sleep(0.05)
    counts = queue_store.counts(db.read())
    assert counts == {"pending": 0, "processing": 0, "dead": 1}
    dead = queue_store.dead_items(db.read())
    assert "unrecoverable: bad request" in dead[0]["last_error"]


def test_summary_is_produced_and_stored(worker: RunningWorker) -> None:
    send_session(worker, events=2)
    worker.client.post("/api/sessions/summarize", json={
        "host_session_id": "s1", "cwd": "/w/proj",
        "last_assistant_message": "Fixed the parser. Next: add tests for edge cases."}
    ).raise_for_status()  # fmt: skip
    wait_drained(worker)
    summaries = worker.client.get("/api/summaries").json()["items"]
    assert len(summaries) == 1
    assert summaries[0]["request"]


def test_rows_claimed_by_a_dead_worker_are_processed_once(data_dir: Path) -> None:
    with running_worker() as first:
        send_session(first, events=3)
        wait_drained(first)
        before = first.client.get("/api/observations").json()["items"]
    # Simulate a worker killed mid-batch: its rows are claimed again and tool uses unlinked
    # for one of them, as if the store transaction never happened for that row.
    db = Database()
    with db.write() as conn:
        sid = conn.execute("SELECT id FROM sessions").fetchone()[0]
        row = conn.execute("SELECT id, tool_use_id FROM tool_uses ORDER BY id LIMIT 1").fetchone()
        queue_store.enqueue(conn, sid, "observation", {"tool_use_row_id": row[0]},
                            dedup_key=row[1])  # fmt: skip
        queue_store.claim(conn)
    db.close()
    with running_worker() as second:
        wait_drained(second)
        after = second.client.get("/api/observations").json()["items"]
    assert sorted(o["content_hash"] for o in after) == sorted(o["content_hash"] for o in before)


def test_no_llm_call_after_the_session_ended_and_drained(
    worker: RunningWorker, scripted: dict
) -> None:
    llm = use(scripted, Scripted("llm", tokens=10))
    configure(worker, provider="llm")
    send_session(worker, events=2)
    worker.client.post("/api/sessions/end", json={"host_session_id": "s1"}).raise_for_status()
    wait_drained(worker)
    calls = len(llm.calls)
    assert calls >= 1
    time.sleep(1.0)  # several dispatcher rounds
    assert len(llm.calls) == calls
    assert worker.client.get("/api/stats").json()["active_consumers"] == 0


def test_queued_events_wake_the_dispatcher_from_the_loop_and_from_a_thread(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No poll would find the work (an hour apart): only ingest's wake starts it, whether the
    event was taken on the event loop (an inline route) or on a thread."""
    from claude_mem.worker.ingest import ToolEvent

    monkeypatch.setattr(consumer, "POLL_S", 3600.0)
    with running_worker() as worker:
        send_session(worker, events=1)  # the ingest route runs inline, on the loop
        wait_drained(worker)
        ingest = worker.state.ingest
        assert ingest is not None
        ingest.observation(ToolEvent(  # this test's thread: not the loop
            host_session_id="s1", cwd="/w/proj", tool_name="Edit", tool_use_id="s1-thread",
            tool_input={"file_path": "/w/proj/src/other.py"}, tool_response={"success": True},
        ))  # fmt: skip
        wait_drained(worker)
        items = worker.client.get("/api/observations").json()["items"]
    assert len(items) == 2


def test_no_provider_sees_calls_to_memorys_own_tools(worker: RunningWorker, scripted: dict) -> None:
    model = use(scripted, Scripted("model"))
    configure(worker, provider="model")
    send_session(worker, events=1)
    for n, name in enumerate(
        ("mcp__claude-mem-py__search", "mcp__plugin_claude-mem-py_x__timeline")
    ):
        worker.client.post("/api/sessions/observations", json={
            "host_session_id": "s1", "cwd": "/w/proj", "tool_name": name,
            "tool_use_id": f"s1-m{n}", "tool_input": {"query": "parser"},
            "tool_response": {"content": []}}).raise_for_status()  # fmt: skip
    wait_drained(worker)
    titles = [item["title"] for item in worker.client.get("/api/observations").json()["items"]]
    assert titles == ["model saw Edit"]
    assert [len(call) for call in model.calls] == [1]
