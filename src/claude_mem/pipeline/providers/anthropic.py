"""The Anthropic Messages API as a compressor (`POST {base}/v1/messages`), with no SDK.

Requests are non-streaming by default. Some gateways stream whatever was asked, so a reply
whose content type is `text/event-stream` is read as the Messages stream (text deltas,
usage from `message_start` and `message_delta`); `stream=True` asks for that form outright.
An `error` event inside a stream is classified like the HTTP error of the same type.
A completion that asks for its system prompt to be cached sends it as one block marked
`cache_control: ephemeral`, so the questions after the first read a corpus from the cache.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from claude_mem.pipeline.providers.base import ProviderError, configured_model
from claude_mem.pipeline.providers.llm import (
    Completion,
    HttpCall,
    LLMProvider,
    Reply,
    classify_http,
    int_or_none,
    iter_sse,
    text_of,
)
from claude_mem.settings import Settings

if TYPE_CHECKING:
    import httpx2

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "DEFAULT_MODEL", "AnthropicProvider", "create"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-haiku-4-5"
API_VERSION = "2023-06-01"

# Error `type` → the HTTP status Anthropic uses for it, for errors that arrive without one
# (inside a stream, or in a 200 body from a gateway).
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def _usage_in(usage: Mapping[str, Any]) -> int | None:
    """Input tokens including prompt-cache reads and writes (all of them are billed)."""
    parts = [
        int_or_none(usage.get(key))
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    ]
    if parts[0] is None:
        return None
    return sum(part or 0 for part in parts)


class AnthropicProvider(LLMProvider):
    name = "anthropic"
    key_setting = "CLAUDE_MEM_ANTHROPIC_API_KEY"
    caches_prompts = True

    def __init__(self, *, stream: bool = False, **options: Any) -> None:
        options.setdefault("model", DEFAULT_MODEL)
        options["base_url"] = options.get("base_url") or DEFAULT_BASE_URL
        super().__init__(**options)
        self.stream = stream

    def build_call(self, completion: Completion) -> HttpCall:
        base = self.base_url.removesuffix("/v1")  # tolerate a base given with the version
        headers = {
            "x-api-key": self.api_key,
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "text/event-stream" if self.stream else "application/json",
        }
        system: str | list[dict[str, Any]] = completion.system
        if completion.cache_system:
            cached = {"type": "ephemeral"}
            system = [{"type": "text", "text": completion.system, "cache_control": cached}]
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_output_tokens,
            "temperature": self.temperature,
            "system": system,
            "messages": [{"role": "user", "content": completion.user}],
            "stream": self.stream,
        }
        return HttpCall(f"{base}/v1/messages", headers, body)

    def _error(self, error: object, status: int | None = None) -> ProviderError:
        detail = error if isinstance(error, dict) else {}
        kind = str(detail.get("type", ""))
        body = json.dumps({"type": "error", "error": detail})
        return classify_http(self.name, status or _ERROR_STATUS.get(kind, 500), body)

    def read_reply(self, data: Any) -> Reply:
        if not isinstance(data, dict):
            raise ProviderError("unrecoverable", f"{self.name}: reply is not a JSON object")
        if data.get("type") == "error":
            raise self._error(data.get("error"))
        content = data.get("content")
        usage = found if isinstance(found := data.get("usage"), dict) else {}
        model = data.get("model")
        return Reply(
            text=text_of(content) if isinstance(content, list) else "",
            input_tokens=_usage_in(usage),
            output_tokens=int_or_none(usage.get("output_tokens")),
            model=model if isinstance(model, str) and model else None,
        )

    async def read_stream(self, response: httpx2.Response) -> Reply:
        """Assemble a reply from the Messages event stream; an unfinished stream is transient."""
        reply = Reply(text="")
        texts: list[str] = []
        async for event, data in iter_sse(response.aiter_lines()):
            try:
                payload = json.loads(data)
            except ValueError:
                continue
            if not isinstance(payload, dict):
                continue
            kind = payload.get("type", event)
            if kind == "message_start":
                message = payload.get("message")
                message = message if isinstance(message, dict) else {}
                usage = found if isinstance(found := message.get("usage"), dict) else {}
                reply.input_tokens = _usage_in(usage)
                reply.output_tokens = int_or_none(usage.get("output_tokens"))
                model = message.get("model")
                reply.model = model if isinstance(model, str) and model else None
            elif kind == "content_block_delta":
                delta = payload.get("delta")
                if isinstance(delta, dict) and delta.get("type") == "text_delta":
                    text = delta.get("text")
                    if isinstance(text, str):
                        texts.append(text)
            elif kind == "message_delta":
                counts = payload.get("usage")
                if isinstance(counts, dict):
                    reply.output_tokens = int_or_none(counts.get("output_tokens"))
                    if int_or_none(counts.get("input_tokens")) is not None:
                        reply.input_tokens = _usage_in(counts)
            elif kind == "error":
                raise self._error(payload.get("error"))
            elif kind == "message_stop":
                reply.text = "".join(texts)
                return reply
        raise ProviderError("transient", f"{self.name}: the stream ended before message_stop")


def create(settings: Settings) -> AnthropicProvider:
    """The provider as configured (the registry's entry point)."""
    return AnthropicProvider(
        api_key=settings.get_str("CLAUDE_MEM_ANTHROPIC_API_KEY"),
        model=configured_model(settings, "anthropic") or DEFAULT_MODEL,
        base_url=settings.get_str("CLAUDE_MEM_ANTHROPIC_BASE_URL"),
        **LLMProvider.settings_options(settings),
    )
