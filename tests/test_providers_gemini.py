"""The Gemini provider against the loopback generateContent mock."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest

from claude_mem import settings as settings_mod
from claude_mem.pipeline.providers import gemini
from claude_mem.pipeline.providers.base import (
    ProviderError,
    Result,
    SessionContext,
    SummaryInput,
    ToolEvent,
)
from tests.llm_mocks import (
    GeminiMock,
    answer,
    error,
    gemini_mock,
    quota_failure,
    raw,
    retry_info,
    slow,
)

XML = """<observation>
  <type>decision</type>
  <title>Chose SQLite over Postgres</title>
  <facts><fact>One file, no server</fact></facts>
  <narrative>The tool runs on laptops; a server would be a burden.</narrative>
  <concepts><concept>trade-off</concept><concept>Why-It-Exists</concept><concept>decision</concept></concepts>
</observation>"""
SUMMARY = "<summary><learned>WAL mode matters</learned></summary>"
CTX = SessionContext(9, "store", "gemini-cli", prompts=("pick a database",))
EVENTS = [ToolEvent(31, "WebSearch", {"query": "sqlite vs postgres"}, "results…")]
PRIVATE = "the private roadmap"
SECRETS = ("AIza" + "S" * 35, "ghp_" + "J" * 36)


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def provider(api: GeminiMock, **options: Any) -> gemini.GeminiProvider:
    options.setdefault("sleep", Sleeps())
    options.setdefault("timeout", 5.0)
    return gemini.GeminiProvider(api_key="g-key", base_url=api.url, **options)


def run(coro: Coroutine[Any, Any, Result]) -> Result:
    return asyncio.run(coro)


def compress(p: gemini.GeminiProvider) -> Result:
    return run(p.compress(EVENTS, CTX))


def failure(p: gemini.GeminiProvider) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        compress(p)
    return caught.value


def test_good_answer_becomes_drafts() -> None:
    with gemini_mock() as api:
        api.script(answer(XML, usage=(410, 66)))
        result = compress(provider(api))
        [request] = api.calls()
    [obs] = result.observations
    assert (obs.type, obs.title) == ("decision", "Chose SQLite over Postgres")
    assert obs.concepts == ["trade-off", "why-it-exists"]
    assert obs.source_event_ids == [31]
    assert (result.input_tokens, result.output_tokens) == (410, 66)
    assert result.model == "gemini-flash-latest"
    assert request.path == "/v1beta/models/gemini-flash-latest:generateContent"
    assert request.headers["x-goog-api-key"] == "g-key"
    body = request.json
    assert "recorded data" in body["systemInstruction"]["parts"][0]["text"]
    assert body["contents"][0]["role"] == "user"
    assert body["generationConfig"]["temperature"] == 0.2
    assert body["generationConfig"]["maxOutputTokens"] == 2048 + gemini.THINKING_ROOM


def test_prose_is_an_empty_result() -> None:
    with gemini_mock() as api:
        api.script(answer("This was just a search."), answer("<skip/>"))
        p = provider(api)
        assert compress(p).observations == []
        assert compress(p).observations == []


def test_malformed_xml_is_best_effort() -> None:
    with gemini_mock() as api:
        api.script(answer("<observation><title>Partial</title><narrative>cut off"))
        assert [o.title for o in compress(provider(api)).observations] == ["Partial"]


def test_thought_parts_are_ignored_and_counted() -> None:
    body = {
        "candidates": [
            {"content": {"parts": [{"text": "<observation>", "thought": True}, {"text": XML}]}}
        ],
        "usageMetadata": {
            "promptTokenCount": 10,
            "candidatesTokenCount": 5,
            "thoughtsTokenCount": 7,
        },
    }
    with gemini_mock() as api:
        api.script(raw(200, body))
        result = compress(provider(api))
    assert len(result.observations) == 1
    assert (result.input_tokens, result.output_tokens) == (10, 12)


def test_429_with_retry_info_is_retried_after_its_delay() -> None:
    limited = error(
        429,
        "You exceeded your current quota, please check your plan and billing details.",
        options={
            "details": [
                quota_failure("GenerateRequestsPerMinutePerProjectPerModel"),
                retry_info("4s"),
            ]
        },
    )
    with gemini_mock() as api:
        api.script(limited, answer(XML))
        sleeps = Sleeps()
        result = compress(provider(api, sleep=sleeps))
    assert sleeps.delays == [4.0]
    assert len(result.observations) == 1


def test_429_with_retry_after_header() -> None:
    with gemini_mock() as api:
        api.script(error(429, "Resource exhausted.", headers={"retry-after": "1"}), answer(XML))
        sleeps = Sleeps()
        compress(provider(api, sleep=sleeps))
    assert sleeps.delays == [1.0]


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (error(429, "Too many requests"), "rate_limit"),
        (
            error(
                429,
                "Quota exceeded for metric",
                options={
                    "details": [quota_failure("GenerateRequestsPerDayPerProjectPerModel-FreeTier")]
                },
            ),
            "quota",
        ),
        (
            error(
                429, "You exceeded your current quota, please check your plan and billing details."
            ),
            "quota",
        ),
        (
            error(500, "Quota exceeded for this project", options={"state": "RESOURCE_EXHAUSTED"}),
            "quota",
        ),
        (error(400, "API key not valid. Please pass a valid API key."), "auth"),
        (error(403, "Permission denied"), "auth"),
        (error(404, "models/nope is not found for API version v1beta"), "setup_required"),
        (
            error(
                400, "The input token count (2000000) exceeds the maximum number of tokens allowed"
            ),
            "unrecoverable",
        ),
        (error(503, "The model is overloaded."), "transient"),
        (raw(200, {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}), "unrecoverable"),
    ],
)
def test_error_classification(reply: Any, kind: str) -> None:
    with gemini_mock() as api:
        api.script(reply)
        assert failure(provider(api, attempts=1)).kind == kind


def test_401_is_auth_and_not_retried() -> None:
    with gemini_mock(default=error(401, "Request had invalid authentication credentials.")) as api:
        assert failure(provider(api)).kind == "auth"
        assert len(api.calls()) == 1


def test_500_twice_then_success() -> None:
    with gemini_mock() as api:
        api.script(error(500), error(500), answer(XML))
        sleeps = Sleeps()
        result = compress(provider(api, sleep=sleeps))
        assert len(api.calls()) == 3
    assert len(sleeps.delays) == 2
    assert len(result.observations) == 1


def test_persistent_500_is_transient() -> None:
    with gemini_mock(default=error(500)) as api:
        err = failure(provider(api))
        assert len(api.calls()) == 3
    assert err.kind == "transient"


def test_timeout_is_transient() -> None:
    with gemini_mock(default=slow(5)) as api:
        assert failure(provider(api, timeout=0.2, attempts=1)).kind == "transient"


def test_missing_usage_is_estimated() -> None:
    with gemini_mock() as api:
        api.script(answer(XML, usage=None))
        result = compress(provider(api))
    assert result.output_tokens == -(-len(XML) // 4)
    assert result.input_tokens > 100


def test_summarize() -> None:
    with gemini_mock() as api:
        api.script(answer(SUMMARY))
        result = run(provider(api).summarize(SummaryInput("Decided."), CTX))
    assert result.summary is not None
    assert result.summary.learned == "WAL mode matters"


def test_request_bodies_hold_no_private_or_secret_text() -> None:
    events = [
        ToolEvent(
            1,
            "Edit",
            {"file_path": "road.md", "new_string": f"<private>{PRIVATE}</private>ok"},
            "done",
        ),
        ToolEvent(
            2, "Bash", {"command": f"curl 'https://x?key={SECRETS[0]}'"}, f"token={SECRETS[1]}"
        ),
    ]
    with gemini_mock() as api:
        api.script(answer(XML), answer(SUMMARY))
        p = provider(api)
        run(p.compress(events, CTX))
        run(
            p.summarize(
                SummaryInput(f"{SECRETS[1]} <private>{PRIVATE}</private>", tuple(events)), CTX
            )
        )
        bodies = [r.text for r in api.requests]
    assert len(bodies) == 2
    for body in bodies:
        assert "road.md" in body
        assert PRIVATE not in body
        for secret in SECRETS:
            assert secret not in body


def test_missing_key_is_setup_required(monkeypatch: pytest.MonkeyPatch) -> None:
    with gemini_mock() as api:
        monkeypatch.setenv("CLAUDE_MEM_GEMINI_BASE_URL", api.url)
        err = failure(gemini.create(settings_mod.load()))
        assert api.requests == []
    assert err.kind == "setup_required"
    assert "CLAUDE_MEM_GEMINI_API_KEY" in err.message


def test_create_reads_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_MEM_GEMINI_API_KEY", "env-g")
    monkeypatch.setenv("CLAUDE_MEM_GEMINI_MODEL", "models/gemini-2.5-flash")
    with gemini_mock() as api:
        monkeypatch.setenv("CLAUDE_MEM_GEMINI_BASE_URL", api.url + "/v1beta")
        p = gemini.create(settings_mod.load())
        api.script(answer(XML))
        result = compress(p)
        [request] = api.calls()
    assert p.name == "gemini"
    assert request.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert request.headers["x-goog-api-key"] == "env-g"
    assert result.model == "gemini-2.5-flash"


def test_a_fallback_never_gets_the_primary_providers_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from claude_mem.pipeline.providers import anthropic
    from claude_mem.pipeline.providers.base import configured_model, model_key

    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "anthropic")
    monkeypatch.setenv("CLAUDE_MEM_FALLBACK_PROVIDERS", "gemini,local")
    monkeypatch.setenv("CLAUDE_MEM_MODEL", "claude-sonnet-4-5")
    loaded = settings_mod.load()
    assert anthropic.create(loaded).model == "claude-sonnet-4-5"
    assert gemini.create(loaded).model == gemini.DEFAULT_MODEL  # not the Claude model
    monkeypatch.setenv("CLAUDE_MEM_GEMINI_MODEL", "gemini-2.5-pro")
    monkeypatch.setenv("CLAUDE_MEM_ANTHROPIC_MODEL", "claude-opus-4-1")
    loaded = settings_mod.load()
    assert gemini.create(loaded).model == "gemini-2.5-pro"
    assert anthropic.create(loaded).model == "claude-opus-4-1"  # its own key wins
    assert model_key("openai-compatible") == "CLAUDE_MEM_OPENAI_MODEL"
    assert model_key("claude-agent-sdk") == "CLAUDE_MEM_CLAUDE_AGENT_SDK_MODEL"
    assert configured_model(loaded, "openai-compatible") == ""
