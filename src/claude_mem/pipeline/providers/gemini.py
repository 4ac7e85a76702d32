"""Google's Gemini API as a compressor (`POST {base}/v1beta/models/{model}:generateContent`).

Gemini reports every limit as 429 RESOURCE_EXHAUSTED with quota wording, so the status and
words alone can't tell "wait a minute" from "come back tomorrow". The error details can: a
`RetryInfo` delay or a per-minute quota id means rate_limit (retry after the delay); a
per-day quota id means quota. With no details, quota words mean quota, else rate_limit.
Gemini answers a bad key with 400 API_KEY_INVALID, which is an auth error here.

Thinking models spend output tokens on thoughts before the answer, so the output limit sent
is the configured one plus `THINKING_ROOM`; thought parts are not part of the reply text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from claude_mem.pipeline.providers.base import ProviderError, configured_model
from claude_mem.pipeline.providers.llm import (
    Completion,
    HttpCall,
    LLMProvider,
    Reply,
    classify_http,
    int_or_none,
)
from claude_mem.pipeline.retry import MAX_RETRY_AFTER, parse_retry_after
from claude_mem.settings import Settings

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_MODEL", "THINKING_ROOM", "GeminiProvider", "create"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
DEFAULT_MODEL = "gemini-flash-latest"
THINKING_ROOM = 6_144
_DELAY = re.compile(r"\s*(\d+(?:\.\d+)?)s\s*")


def _error_detail(body: str) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, dict) else {}


def _retry_delay(details: list[Any]) -> float | None:
    for detail in details:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            m = _DELAY.fullmatch(str(detail.get("retryDelay", "")))
            if m:
                return min(float(m[1]), MAX_RETRY_AFTER)
    return None


def _quota_ids(details: list[Any]) -> list[str]:
    ids: list[str] = []
    for detail in details:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("QuotaFailure"):
            for violation in detail.get("violations") or ():
                if isinstance(violation, dict):
                    ids.append(str(violation.get("quotaId", "")).lower())
    return ids


class GeminiProvider(LLMProvider):
    name = "gemini"
    key_setting = "CLAUDE_MEM_GEMINI_API_KEY"

    def __init__(self, **options: Any) -> None:
        options.setdefault("model", DEFAULT_MODEL)
        options["base_url"] = options.get("base_url") or DEFAULT_BASE_URL
        super().__init__(**options)

    def build_call(self, completion: Completion) -> HttpCall:
        base = self.base_url.removesuffix("/v1beta")
        model = quote(self.model.removeprefix("models/"), safe="-._~")
        headers = {
            "x-goog-api-key": self.api_key,
            "content-type": "application/json",
            "accept": "application/json",
        }
        body = {
            "systemInstruction": {"parts": [{"text": completion.system}]},
            "contents": [{"role": "user", "parts": [{"text": completion.user}]}],
            "generationConfig": {
                "temperature": self.temperature,
                "maxOutputTokens": self.max_output_tokens + THINKING_ROOM,
            },
        }
        return HttpCall(f"{base}/v1beta/models/{model}:generateContent", headers, body)

    def classify(self, status: int, body: str, headers: Mapping[str, str]) -> ProviderError:
        error = _error_detail(body)
        details = found if isinstance(found := error.get("details"), list) else []
        state = str(error.get("status", "")).upper()
        header_delay = parse_retry_after(headers.get("retry-after"))
        delay = _retry_delay(details)
        delay = header_delay if delay is None else delay
        quota_ids = _quota_ids(details)
        text = body[:8_000].lower()
        message = f"{self.name} answered HTTP {status}: {' '.join(body.split())[:300]}"
        if status == 429:
            if any("perday" in quota_id for quota_id in quota_ids):
                return ProviderError("quota", message, status=status, retry_after=delay)
            if delay is not None or any("perminute" in quota_id for quota_id in quota_ids):
                return ProviderError("rate_limit", message, status=status, retry_after=delay)
            if re.search(r"quota|billing|credit", text):
                return ProviderError("quota", message, status=status)
            return ProviderError("rate_limit", message, status=status)
        if state == "RESOURCE_EXHAUSTED" or "quota exceeded" in text:
            return ProviderError("quota", message, status=status, retry_after=delay)
        if "api_key_invalid" in text or "api key not valid" in text or "api key expired" in text:
            return ProviderError("auth", message, status=status)
        return classify_http(self.name, status, body, retry_after=delay)

    def read_reply(self, data: Any) -> Reply:
        if not isinstance(data, dict):
            raise ProviderError("unrecoverable", f"{self.name}: reply is not a JSON object")
        if isinstance(data.get("error"), dict):
            code = data["error"].get("code")
            status = code if isinstance(code, int) and 400 <= code < 600 else 400
            raise self.classify(status, json.dumps({"error": data["error"]}), {})
        candidates = data.get("candidates")
        feedback = data.get("promptFeedback")
        if not candidates and isinstance(feedback, dict) and feedback.get("blockReason"):
            reason = feedback["blockReason"]
            raise ProviderError("unrecoverable", f"{self.name} refused the batch ({reason})")
        texts: list[str] = []
        if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
            content = candidates[0].get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else ():
                if isinstance(part, dict) and not part.get("thought"):
                    text = part.get("text")
                    if isinstance(text, str):
                        texts.append(text)
        usage = data["usageMetadata"] if isinstance(data.get("usageMetadata"), dict) else {}
        output = int_or_none(usage.get("candidatesTokenCount"))
        thoughts = int_or_none(usage.get("thoughtsTokenCount"))
        if output is not None and thoughts:
            output += thoughts  # thinking is billed as output
        model = data.get("modelVersion")
        return Reply(
            text="".join(texts),
            input_tokens=int_or_none(usage.get("promptTokenCount")),
            output_tokens=output,
            model=model if isinstance(model, str) and model else None,
        )


def create(settings: Settings) -> GeminiProvider:
    """The provider as configured (the registry's entry point)."""
    return GeminiProvider(
        api_key=settings.get_str("CLAUDE_MEM_GEMINI_API_KEY"),
        model=configured_model(settings, "gemini") or DEFAULT_MODEL,
        base_url=settings.get_str("CLAUDE_MEM_GEMINI_BASE_URL"),
        **LLMProvider.settings_options(settings),
    )
