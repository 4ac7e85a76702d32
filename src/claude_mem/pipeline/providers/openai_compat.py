"""Any OpenAI-compatible Chat Completions API as a compressor (`POST {base}/chat/completions`).

This one provider covers OpenAI, OpenRouter, DeepSeek, vLLM, LM Studio, llama.cpp and Ollama
(`http://127.0.0.1:11434/v1`). The model is required (there is no sensible default across
servers). The key may be empty when a base URL is set, since local servers need none; with no
base URL the request goes to OpenAI itself, which does. `max_tokens` is sent rather than
`max_completion_tokens` because every compatible server understands it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from claude_mem.pipeline.providers.base import ProviderError, configured_model, model_key
from claude_mem.pipeline.providers.llm import (
    Completion,
    HttpCall,
    LLMProvider,
    Reply,
    classify_http,
    int_or_none,
    setup_message,
    text_of,
)
from claude_mem.settings import Settings

__all__ = ["DEFAULT_BASE_URL", "OpenAICompatibleProvider", "create"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAICompatibleProvider(LLMProvider):
    name = "openai-compatible"
    key_setting = "CLAUDE_MEM_OPENAI_API_KEY"
    key_required = False

    def __init__(self, **options: Any) -> None:
        options.setdefault("model", "")
        self.custom_base = bool(options.get("base_url"))
        options["base_url"] = options.get("base_url") or DEFAULT_BASE_URL
        super().__init__(**options)

    def setup_problem(self) -> str | None:
        if not self.model:
            return setup_message(
                f"{self.name} needs a model name (for example llama3.1 or gpt-4o-mini)",
                model_key(self.name),
            )
        if not self.api_key and not self.custom_base:
            return setup_message(
                f"{self.name} needs an API key, or a local server's address in"
                " CLAUDE_MEM_OPENAI_BASE_URL",
                self.key_setting,
            )
        return None

    def build_call(self, completion: Completion) -> HttpCall:
        headers = {"content-type": "application/json", "accept": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": completion.system},
                {"role": "user", "content": completion.user},
            ],
            "temperature": self.temperature,
            "max_tokens": self.max_output_tokens,
            "stream": False,
        }
        return HttpCall(f"{self.base_url}/chat/completions", headers, body)

    def _error(self, error: object) -> ProviderError:
        """A gateway error delivered in a 2xx body (`{"error": {...}}`)."""
        detail = error if isinstance(error, dict) else {"message": str(error)}
        code = detail.get("code")
        status = code if isinstance(code, int) and 400 <= code < 600 else 400
        return classify_http(self.name, status, json.dumps({"error": detail}))

    def read_reply(self, data: Any) -> Reply:
        if not isinstance(data, dict):
            raise ProviderError("unrecoverable", f"{self.name}: reply is not a JSON object")
        choices = data.get("choices")
        if data.get("error") and not choices:
            raise self._error(data["error"])
        text = ""
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str):
                text = content
            elif isinstance(content, list):  # content parts, as some servers send
                text = text_of(content)
        usage: Mapping[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
        model = data.get("model")
        return Reply(
            text=text,
            input_tokens=int_or_none(usage.get("prompt_tokens")),
            output_tokens=int_or_none(usage.get("completion_tokens")),
            model=model if isinstance(model, str) and model else None,
        )


def create(settings: Settings) -> OpenAICompatibleProvider:
    """The provider as configured (the registry's entry point)."""
    return OpenAICompatibleProvider(
        api_key=settings.get_str("CLAUDE_MEM_OPENAI_API_KEY"),
        model=configured_model(settings, "openai-compatible"),
        base_url=settings.get_str("CLAUDE_MEM_OPENAI_BASE_URL"),
        **LLMProvider.settings_options(settings),
    )
