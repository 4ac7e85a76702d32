"""Loopback wire mocks of the LLM APIs our providers (and CLIs) speak.

    with anthropic_mock() as api:
        api.script(answer("<observation>…</observation>"), error(429, headers={"retry-after": "2"}))
        provider = AnthropicProvider(api_key="k", base_url=api.url)
        ...
        api.requests  # every request, with path, headers and JSON body

Each mock serves 127.0.0.1 only; a scripted reply is used once, then the default answers.
"""

from tests.llm_mocks.anthropic import AnthropicMock, anthropic_mock
from tests.llm_mocks.gemini import GeminiMock, gemini_mock, quota_failure, retry_info
from tests.llm_mocks.openai import OpenAIMock, openai_mock
from tests.llm_mocks.server import MockServer, RecordedRequest, Reply, answer, error, raw, slow

__all__ = [
    "AnthropicMock",
    "GeminiMock",
    "MockServer",
    "OpenAIMock",
    "RecordedRequest",
    "Reply",
    "answer",
    "anthropic_mock",
    "error",
    "gemini_mock",
    "openai_mock",
    "quota_failure",
    "raw",
    "retry_info",
    "slow",
]
