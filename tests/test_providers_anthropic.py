"""The Anthropic provider against the loopback Messages API mock (JSON and SSE)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest

from claude_mem import settings as settings_mod
from claude_mem.pipeline.providers import anthropic
from claude_mem.pipeline.providers.base import (
    ProviderError,
    Result,
    SessionContext,
    SummaryInput,
    ToolEvent,
)
from tests.llm_mocks import AnthropicMock, answer, anthropic_mock, error, raw, slow

XML = """<observation>
  <type>bugfix</type>
  <title>Fixed cart rounding</title>
  <facts><fact>total() now uses Decimal</fact><fact>Rounding is half-up</fact></facts>
  <narrative>Float sums drifted by a cent.</narrative>
  <concepts><concept>Problem-Solution: floats</concept><concept>bugfix</concept></concepts>
  <files_modified><file>claimed/by/model.py</file></files_modified>
</observation>
<observation><type>discovery</type><title>Prices are stored in cents</title></observation>"""
SUMMARY = "<summary><request>Fix totals</request><completed>Rounding fixed</completed></summary>"
CTX = SessionContext(3, "shop", "claude-code", prompts=("fix the cart",))
EVENTS = [
    ToolEvent(11, "Read", {"file_path": "cart.py"}, "def total(): ...", cwd="/shop"),
    ToolEvent(12, "Edit", {"file_path": "cart.py", "old_string": "a", "new_string": "b"}, "ok"),
]
PRIVATE = "the private launch plan"
SECRETS = ("sk-ant-api03-" + "K" * 40, "ghp_" + "G" * 36)


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def provider(api: AnthropicMock, **options: Any) -> anthropic.AnthropicProvider:
    options.setdefault("sleep", Sleeps())
    options.setdefault("timeout", 5.0)
    return anthropic.AnthropicProvider(api_key="test-key", base_url=api.url, **options)


def run(coro: Coroutine[Any, Any, Result]) -> Result:
    return asyncio.run(coro)


def compress(p: anthropic.AnthropicProvider, events: list[ToolEvent] = EVENTS) -> Result:
    return run(p.compress(events, CTX))


def failure(p: anthropic.AnthropicProvider) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        compress(p)
    return caught.value


def test_good_answer_becomes_drafts() -> None:
    with anthropic_mock() as api:
        api.script(answer(XML, usage=(900, 120)))
        result = compress(provider(api))
        [request] = api.calls("/v1/messages")
    first, second = result.observations
    assert (first.type, first.title) == ("bugfix", "Fixed cart rounding")
    assert first.facts == ["total() now uses Decimal", "Rounding is half-up"]
    assert first.concepts == ["problem-solution"]
    assert not hasattr(first, "files_modified")  # the model's file list is not read
    assert first.source_event_ids == second.source_event_ids == [11, 12]
    assert (second.type, second.title) == ("discovery", "Prices are stored in cents")
    assert (result.input_tokens, result.output_tokens) == (900, 120)
    assert result.model == "claude-haiku-4-5"
    assert request.headers["x-api-key"] == "test-key"
    assert request.headers["anthropic-version"] == "2023-06-01"
    body = request.json
    assert body["model"] == "claude-haiku-4-5"
    assert body["stream"] is False
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 2048
    assert "recorded data" in body["system"]
    assert body["messages"][0]["role"] == "user"
    assert "cart.py" in body["messages"][0]["content"]


def test_prose_and_skip_give_an_empty_result() -> None:
    with anthropic_mock() as api:
        api.script(answer("Nothing much happened here."), answer("<skip/>"), answer(""))
        p = provider(api)
        for _ in range(3):
            result = compress(p)
            assert result.observations == []
            assert result.input_tokens == 120


def test_malformed_xml_is_best_effort() -> None:
    with anthropic_mock() as api:
        api.script(
            answer("<observation><title>Kept</title><facts><fact>a</fact><fact>cut"),
            answer("<observation><<<>>> garbage </observ"),
            answer("\x00\ufffd<observation"),
        )
        p = provider(api)
        assert [o.title for o in compress(p).observations] == ["Kept"]
        assert compress(p).observations == []
        assert compress(p).observations == []


def test_quota_prose_raises() -> None:
    with anthropic_mock() as api:
        api.script(answer("Claude AI usage limit reached|1767225600"))
        assert failure(provider(api)).kind == "quota"


def test_429_is_retried_after_retry_after() -> None:
    with anthropic_mock() as api:
        api.script(error(429, "slow down", headers={"retry-after": "2"}), answer(XML))
        sleeps = Sleeps()
        result = compress(provider(api, sleep=sleeps))
        assert len(api.calls("/v1/messages")) == 2
    assert sleeps.delays == [2.0]
    assert len(result.observations) == 2


def test_401_is_auth_and_not_retried() -> None:
    with anthropic_mock() as api:
        api.script(error(401, "invalid x-api-key"), answer(XML))
        err = failure(provider(api))
        assert len(api.calls()) == 1
    assert (err.kind, err.status) == ("auth", 401)


def test_500_twice_then_success() -> None:
    with anthropic_mock() as api:
        api.script(error(500), error(529, "Overloaded"), answer(XML))
        sleeps = Sleeps()
        result = compress(provider(api, sleep=sleeps))
        assert len(api.calls()) == 3
    assert len(result.observations) == 2
    assert len(sleeps.delays) == 2


def test_persistent_500_is_transient_after_all_attempts() -> None:
    with anthropic_mock(default=error(500, "boom")) as api:
        err = failure(provider(api, attempts=3))
        assert len(api.calls()) == 3
    assert (err.kind, err.status) == ("transient", 500)


def test_timeout_is_transient() -> None:
    with anthropic_mock(default=slow(5, answer(XML))) as api:
        err = failure(provider(api, timeout=0.2, attempts=2))
        assert len(api.calls()) == 2
    assert err.kind == "transient"


def test_connection_refused_is_transient() -> None:
    with anthropic_mock() as api:
        url = api.url
    p = anthropic.AnthropicProvider(api_key="k", base_url=url, sleep=Sleeps(), attempts=2)
    assert failure(p).kind == "transient"


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (error(400, "Your credit balance is too low to access the Anthropic API."), "quota"),
        (error(402, "billing"), "quota"),
        (error(403, "not allowed"), "auth"),
        (error(404, "model: claude-nope"), "setup_required"),
        (error(400, "prompt is too long: 250000 tokens > 200000 maximum"), "unrecoverable"),
        (error(400, "messages: field required"), "unrecoverable"),
        (raw(200, "<html>a captive portal</html>"), "unrecoverable"),
        (
            raw(200, {"type": "error", "error": {"type": "overloaded_error", "message": "x"}}),
            "transient",
        ),
    ],
)
def test_error_classification(reply: Any, kind: str) -> None:
    with anthropic_mock() as api:
        api.script(reply)
        assert failure(provider(api, attempts=1)).kind == kind


def test_missing_usage_is_estimated() -> None:
    with anthropic_mock() as api:
        api.script(answer(XML, usage=None))
        result = compress(provider(api))
        sent = api.calls()[0].json
    chars = len(sent["system"]) + len(sent["messages"][0]["content"])
    assert result.input_tokens == -(-chars // 4)
    assert result.output_tokens == -(-len(XML) // 4)


def test_streaming_reply() -> None:
    with anthropic_mock() as api:
        api.script(answer(XML, usage=(700, 90)))
        result = compress(provider(api, stream=True))
        [request] = api.calls()
    assert request.json["stream"] is True
    assert request.headers["accept"] == "text/event-stream"
    assert [o.title for o in result.observations] == [
        "Fixed cart rounding",
        "Prices are stored in cents",
    ]
    assert (result.input_tokens, result.output_tokens) == (700, 90)


def test_gateway_forcing_a_stream_is_understood() -> None:
    with anthropic_mock() as api:
        api.script(answer(XML))
        p = provider(api)
        # A gateway that streams whatever it is asked: rewrite the request it sees.
        original = p.build_call

        def forced(completion: Any) -> Any:
            call = original(completion)
            call.body["stream"] = True
            return call

        p.build_call = forced  # type: ignore[method-assign]  # streaming forced on one instance
        result = compress(p)
    assert len(result.observations) == 2


def test_stream_error_event_is_classified() -> None:
    with anthropic_mock() as api:
        overloaded = {"type": "overloaded_error", "message": "Overloaded"}
        api.script(answer(XML, options={"stream_error": overloaded}), answer(XML))
        sleeps = Sleeps()
        result = compress(provider(api, stream=True, sleep=sleeps))
    assert len(result.observations) == 2
    assert len(sleeps.delays) == 1
    with anthropic_mock() as api:
        api.script(answer(XML, options={"stream_error": {"type": "authentication_error"}}))
        assert failure(provider(api, stream=True)).kind == "auth"


def test_cut_stream_is_transient() -> None:
    with anthropic_mock(default=answer(XML, options={"cut_stream": True})) as api:
        assert failure(provider(api, stream=True, attempts=2)).kind == "transient"


def test_summarize() -> None:
    request = SummaryInput(last_assistant_message="All done.", events=tuple(EVENTS))
    with anthropic_mock() as api:
        api.script(answer(SUMMARY), answer('<skip_summary reason="trivial"/>'), answer(XML))
        p = provider(api)
        result = run(p.summarize(request, CTX))
        assert result.summary is not None
        assert (result.summary.request, result.summary.completed) == (
            "Fix totals",
            "Rounding fixed",
        )
        assert run(p.summarize(request, CTX)).summary is None
        assert run(p.summarize(request, CTX)).summary is None  # observations instead: no summary
        assert "All done." in api.calls()[0].json["messages"][0]["content"]


def test_no_events_means_no_call() -> None:
    with anthropic_mock() as api:
        assert compress(provider(api), []).observations == []
        assert api.requests == []


def test_request_bodies_hold_no_private_or_secret_text() -> None:
    events = [
        ToolEvent(
            1,
            "Write",
            {"file_path": "plan.md", "content": f"<private>{PRIVATE}</private> public part"},
            f"wrote with key {SECRETS[0]}",
        ),
        ToolEvent(2, "Bash", {"command": f"git push https://x:{SECRETS[1]}@github.com/o/r"}, ""),
        ToolEvent(3, "Bash", {"command": "echo hi", "env": {"GITHUB_TOKEN": SECRETS[1]}}, {}),
    ]
    ctx = SessionContext(1, "p", "claude-code", prompts=(f"go <private>{PRIVATE}</private>",))
    summary = SummaryInput(
        last_assistant_message=f"Used {SECRETS[0]} <private>{PRIVATE}</private>",
        events=tuple(events),
    )
    with anthropic_mock() as api:
        api.script(answer(XML), answer(SUMMARY), answer(XML))
        p = provider(api)
        run(p.compress(events, ctx))
        run(p.summarize(summary, ctx))
        p.stream = True
        run(p.compress(events, ctx))
        bodies = [r.text for r in api.requests]
    assert len(bodies) == 3
    assert all("public part" in body for body in bodies)
    for body in bodies:
        assert PRIVATE not in body
        assert "<private>" not in body
        for secret in SECRETS:
            assert secret not in body


def test_missing_key_is_setup_required(monkeypatch: pytest.MonkeyPatch) -> None:
    with anthropic_mock() as api:
        monkeypatch.setenv("CLAUDE_MEM_ANTHROPIC_BASE_URL", api.url)
        p = anthropic.create(settings_mod.load())
        err = failure(p)
        assert api.requests == []
    assert err.kind == "setup_required"
    assert "CLAUDE_MEM_ANTHROPIC_API_KEY" in err.message
    assert "settings.json" in err.message
    assert "environment" in err.message


def test_create_reads_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_MEM_ANTHROPIC_API_KEY", "from-env")
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "anthropic")  # CLAUDE_MEM_MODEL is the primary's
    monkeypatch.setenv("CLAUDE_MEM_MODEL", "claude-sonnet-4-5")
    monkeypatch.setenv("CLAUDE_MEM_LLM_TIMEOUT_MS", "1500")
    with anthropic_mock() as api:
        monkeypatch.setenv("CLAUDE_MEM_ANTHROPIC_BASE_URL", api.url + "/v1/")
        p = anthropic.create(settings_mod.load())
        p.sleep = Sleeps()
        api.script(answer(XML))
        result = compress(p)
        [request] = api.calls()
    assert p.name == "anthropic"
    assert p.timeout == 1.5
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "from-env"
    assert request.json["model"] == "claude-sonnet-4-5"
    assert result.model == "claude-sonnet-4-5"


def test_mock_serves_what_a_cli_probes() -> None:
    import httpx2

    with anthropic_mock() as api, httpx2.Client(trust_env=False) as client:
        assert client.head(api.url + "/").status_code == 200
        models = client.get(api.url + "/v1/models").json()
        assert models["data"][0]["type"] == "model"
        counted = client.post(api.url + "/v1/messages/count_tokens?beta=true", json={"x": 1})
        assert counted.json()["input_tokens"] >= 1
        missing = client.get(api.url + "/nope")
        assert missing.status_code == 404
        assert missing.json()["error"]["type"] == "not_found_error"
        streamed = client.post(
            api.url + "/v1/messages?beta=true",
            json={"model": "m", "max_tokens": 5, "stream": True, "messages": []},
        )
        events = [line[7:] for line in streamed.text.splitlines() if line.startswith("event: ")]
    assert events[0] == "message_start"
    assert events[-1] == "message_stop"
    assert {"content_block_start", "content_block_stop", "message_delta"} <= set(events)


def test_observations_cover_the_calls_they_name() -> None:
    reply = XML.replace("<type>bugfix</type>", "<type>bugfix</type><tool_calls>2</tool_calls>")
    with anthropic_mock() as api:
        api.script(answer(reply))
        first, second = compress(provider(api)).observations
        [request] = api.calls("/v1/messages")
    assert first.source_event_ids == [12]
    assert second.source_event_ids == [11, 12]  # named none: the whole batch
    text = request.json["messages"][0]["content"]
    assert '<tool_event call="1">' in str(text)
