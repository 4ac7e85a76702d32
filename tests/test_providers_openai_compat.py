"""The OpenAI-compatible provider against the loopback Chat Completions mock."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest

from claude_mem import settings as settings_mod
from claude_mem.pipeline.providers import openai_compat
from claude_mem.pipeline.providers.base import (
    AgentWords,
    ProviderError,
    Result,
    SessionContext,
    SummaryInput,
    ToolEvent,
    Turn,
)
from tests.llm_mocks import OpenAIMock, answer, error, openai_mock, raw, slow

XML = """```xml
<observation>
  <type>Feature</type>
  <title>Added CSV export</title>
  <subtitle>Reports can be downloaded</subtitle>
  <facts><fact>export.py writes RFC 4180 CSV</fact></facts>
  <concepts><concept>what-changed</concept><concept>What-Changed: again</concept></concepts>
</observation>
```"""
SUMMARY = "<summary><request>Export</request><next_steps>Add XLSX</next_steps></summary>"
CTX = SessionContext(5, "reports", "codex", prompts=("add csv export",))
EVENTS = [ToolEvent(21, "Write", {"file_path": "export.py", "content": "import csv"}, "ok")]
PRIVATE = "the private salary table"
SECRETS = ("sk-proj-" + "P" * 40, "ghp_" + "H" * 36)


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def provider(api: OpenAIMock, **options: Any) -> openai_compat.OpenAICompatibleProvider:
    options.setdefault("sleep", Sleeps())
    options.setdefault("timeout", 5.0)
    options.setdefault("model", "llama3.1")
    return openai_compat.OpenAICompatibleProvider(base_url=api.url, **options)


def run(coro: Coroutine[Any, Any, Result]) -> Result:
    return asyncio.run(coro)


def compress(p: openai_compat.OpenAICompatibleProvider) -> Result:
    return run(p.compress(EVENTS, CTX))


def failure(p: openai_compat.OpenAICompatibleProvider) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        compress(p)
    return caught.value


def test_good_answer_becomes_drafts() -> None:
    with openai_mock() as api:
        api.script(answer(XML, usage=(300, 50)))
        result = compress(provider(api, api_key="local-key"))
        [request] = api.calls()
    [obs] = result.observations
    assert (obs.type, obs.title, obs.subtitle) == (
        "feature",
        "Added CSV export",
        "Reports can be downloaded",
    )
    assert obs.facts == ["export.py writes RFC 4180 CSV"]
    assert obs.concepts == ["what-changed"]
    assert obs.source_event_ids == [21]
    assert (result.input_tokens, result.output_tokens, result.model) == (300, 50, "llama3.1")
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer local-key"
    body = request.json
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("llama3.1", 0.2, 2048)
    assert body["stream"] is False


def test_local_server_needs_no_key() -> None:
    with openai_mock() as api:
        api.script(answer(XML))
        compress(provider(api))
        assert "authorization" not in api.calls()[0].headers


def test_prose_is_an_empty_result() -> None:
    with openai_mock() as api:
        api.script(answer("I could not find anything notable."), answer(""))
        p = provider(api)
        assert compress(p).observations == []
        assert compress(p).observations == []


def test_malformed_xml_is_best_effort() -> None:
    with openai_mock() as api:
        api.script(
            answer("<observation><type>change<title>x</observation>"),
            answer("<observation><narrative>half a narr"),
        )
        p = provider(api)
        assert compress(p).observations == []
        assert compress(p).observations == []


def test_429_is_retried_after_retry_after() -> None:
    with openai_mock() as api:
        api.script(error(429, "Rate limit reached", headers={"retry-after": "3"}), answer(XML))
        sleeps = Sleeps()
        result = compress(provider(api, sleep=sleeps))
    assert sleeps.delays == [3.0]
    assert len(result.observations) == 1


def test_insufficient_quota_429_is_quota() -> None:
    with openai_mock() as api:
        api.script(
            error(429, "You exceeded your current quota", options={"code": "insufficient_quota"})
        )
        err = failure(provider(api))
        assert len(api.calls()) == 1
    assert err.kind == "quota"


def test_401_is_auth_and_not_retried() -> None:
    with openai_mock(default=error(401, "Incorrect API key provided")) as api:
        assert failure(provider(api, api_key="bad")).kind == "auth"
        assert len(api.calls()) == 1


def test_500_twice_then_success() -> None:
    with openai_mock() as api:
        api.script(error(500), error(503), answer(XML))
        result = compress(provider(api))
        assert len(api.calls()) == 3
    assert len(result.observations) == 1


def test_persistent_500_is_transient() -> None:
    with openai_mock(default=error(500)) as api:
        err = failure(provider(api, attempts=3))
        assert len(api.calls()) == 3
    assert err.kind == "transient"


def test_timeout_is_transient() -> None:
    with openai_mock(default=slow(5)) as api:
        err = failure(provider(api, timeout=0.2, attempts=1))
    assert err.kind == "transient"


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (error(404, "The model `nope` does not exist"), "setup_required"),
        (error(400, "This model's maximum context length is 8192 tokens"), "unrecoverable"),
        (error(400, "invalid model ID"), "setup_required"),
        (raw(200, {"error": {"message": "Invalid API key", "code": 401}}), "auth"),
        (raw(200, {"error": {"message": "upstream unavailable", "code": 502}}), "transient"),
        (raw(200, b"not json"), "unrecoverable"),
    ],
)
def test_error_classification(reply: Any, kind: str) -> None:
    with openai_mock() as api:
        api.script(reply)
        assert failure(provider(api, attempts=1)).kind == kind


def test_missing_usage_is_estimated_and_content_parts_are_read() -> None:
    body = {
        "choices": [{"message": {"role": "assistant", "content": [{"type": "text", "text": XML}]}}]
    }
    with openai_mock() as api:
        api.script(raw(200, body))
        result = compress(provider(api))
    assert len(result.observations) == 1
    assert result.input_tokens > 100
    assert result.output_tokens == -(-len(XML) // 4)
    assert result.model == "llama3.1"


def test_summarize() -> None:
    with openai_mock() as api:
        api.script(answer(SUMMARY))
        result = run(provider(api).summarize(SummaryInput("Exported."), CTX))
    assert result.summary is not None
    assert result.summary.next_steps == "Add XLSX"


def test_request_bodies_hold_no_private_or_secret_text() -> None:
    events = [
        ToolEvent(1, "Bash", {"command": f"OPENAI_API_KEY={SECRETS[0]} ./run"}, "done"),
        ToolEvent(2, "Read", {"file_path": "a.md"}, f"x <private>{PRIVATE}</private> visible"),
        ToolEvent(3, "Bash", {"command": "gh auth", "token": SECRETS[1]}, f"<private>{PRIVATE}"),
    ]
    with openai_mock() as api:
        api.script(answer(XML), answer(SUMMARY))
        p = provider(api, api_key="k")
        run(p.compress(events, CTX))
        run(p.summarize(SummaryInput(f"<private>{PRIVATE}</private>", tuple(events)), CTX))
        bodies = [r.text for r in api.requests]
    assert len(bodies) == 2
    for body in bodies:
        assert "visible" in body
        assert PRIVATE not in body
        for secret in SECRETS:
            assert secret not in body


def test_setup_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    with openai_mock() as api:
        monkeypatch.setenv("CLAUDE_MEM_OPENAI_BASE_URL", api.url)
        err = failure(openai_compat.create(settings_mod.load()))
        assert err.kind == "setup_required"
        assert "CLAUDE_MEM_OPENAI_MODEL" in err.message
        monkeypatch.delenv("CLAUDE_MEM_OPENAI_BASE_URL")
        monkeypatch.setenv("CLAUDE_MEM_OPENAI_MODEL", "gpt-4o-mini")
        err = failure(openai_compat.create(settings_mod.load()))
        assert err.kind == "setup_required"
        assert "CLAUDE_MEM_OPENAI_API_KEY" in err.message
        assert "settings.json" in err.message
        assert api.requests == []


def test_create_reads_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "openai-compatible")
    monkeypatch.setenv("CLAUDE_MEM_MODEL", "qwen2.5-coder")
    monkeypatch.setenv("CLAUDE_MEM_OPENAI_API_KEY", "env-key")
    with openai_mock() as api:
        monkeypatch.setenv("CLAUDE_MEM_OPENAI_BASE_URL", api.url + "/")
        p = openai_compat.create(settings_mod.load())
        api.script(answer(XML))
        result = compress(p)
        [request] = api.calls()
    assert p.name == "openai-compatible"
    assert request.json["model"] == "qwen2.5-coder"
    assert request.headers["authorization"] == "Bearer env-key"
    assert result.model == "qwen2.5-coder"


UNITS = """<observation><type>bugfix</type><tool_calls>1, 3-4</tool_calls>
<title>Float sum made round() give 1.72; totals now sum Decimals</title>
<facts><fact>test_total failed: 1.72 != 1.73</fact></facts></observation>
<observation><type>decision</type><tool_calls>2</tool_calls>
<title>Totals round half-up, never banker's</title>
<narrative>The user set the rule: round half-up.</narrative></observation>
<observation><type>decision</type><title>Chat rule with no calls</title></observation>"""
TURN_EVENTS = [
    ToolEvent(41, "Read", {"file_path": "invoice.py"}, "def total(): ...", tool_use_id="tu_1"),
    ToolEvent(42, "Grep", {"pattern": "round("}, "invoice.py:9", tool_use_id="tu_2"),
    ToolEvent(43, "Bash", {"command": "pytest -q"}, "1 failed", tool_use_id="tu_3"),
    ToolEvent(44, "Edit", {"file_path": "invoice.py"}, "ok", tool_use_id="tu_4"),
]
TURN_CTX = SessionContext(
    5,
    "invoicer",
    "claude-code",
    turn=Turn(
        1,
        "why is the total 1.72? and totals round half-up, never banker's",
        (
            AgentWords("Reading the total first.", "tu_1"),
            AgentWords("The float sum drops a cent before round().", "tu_4"),
        ),
        "Fixed: the total sums Decimals.",
    ),
)


def test_a_turn_is_sent_in_order_and_units_keep_their_calls() -> None:
    with openai_mock() as api:
        api.script(answer(UNITS))
        result = run(provider(api).compress(TURN_EVENTS, TURN_CTX))
        [request] = api.calls()
    prompt = request.json["messages"][1]["content"]
    words = prompt.index("The float sum drops a cent before round().")
    assert prompt.index('<tool_event call="3">') < words < prompt.index('<tool_event call="4">')
    assert "why is the total 1.72?" in prompt
    assert "Fixed: the total sums Decimals." in prompt
    assert [o.source_event_ids for o in result.observations] == [
        [41, 43, 44],
        [42],
        [41, 42, 43, 44],
    ]
    assert result.observations[1].type == "decision"


def test_a_turn_without_calls_is_still_asked() -> None:
    chat = SessionContext(5, "p", "codex", turn=Turn(2, "no: retry timeouts twice, never more"))
    with openai_mock() as api:
        api.script(
            answer("<observation><type>decision</type><title>Retry twice</title></observation>")
        )
        p = provider(api)
        result = run(p.compress([], chat))
        assert run(p.compress([], CTX)).observations == []  # nothing to ask about
        assert len(api.calls()) == 1
    [draft] = result.observations
    assert (draft.type, draft.source_event_ids) == ("decision", [])
