"""A loopback Gemini API: `POST /v1beta/models/{model}:generateContent`, `GET /v1beta/models`.

Errors follow Google's `{"error": {"code", "message", "status", "details"}}`; `Reply.options`
may carry `details` (e.g. from `retry_info`/`quota_failure`) and `state` (the status name).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from tests.llm_mocks.server import (
    MockServer,
    RecordedRequest,
    Reply,
    Response,
    body_response,
    json_response,
)

__all__ = ["GeminiMock", "gemini_mock", "quota_failure", "retry_info"]

STATES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_GENERATE = re.compile(r"/v1beta/models/([^/:]+):generateContent")


def retry_info(delay: str) -> dict[str, Any]:
    return {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}


def quota_failure(quota_id: str) -> dict[str, Any]:
    violation = {"quotaMetric": "generativelanguage.googleapis.com/generate_content_requests"}
    violation["quotaId"] = quota_id
    return {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]}


def error_body(status: int, message: str, options: dict[str, Any]) -> dict[str, Any]:
    error: dict[str, Any] = {
        "code": status,
        "message": message,
        "status": options.get("state", STATES.get(status, "UNKNOWN")),
    }
    if options.get("details"):
        error["details"] = options["details"]
    return {"error": error}


class GeminiMock(MockServer):
    def route(self, request: RecordedRequest) -> Response:
        m = _GENERATE.fullmatch(request.path)
        if request.method == "POST" and m:
            return self._generate(request, m[1])
        if request.method == "GET" and request.path == "/v1beta/models":
            models = [{"name": "models/gemini-flash-latest", "displayName": "Gemini Flash"}]
            return json_response(200, {"models": models})
        if request.path in ("", "/") and request.method in ("HEAD", "GET"):
            return json_response(200, {"ok": True, "mock": "gemini"})
        return json_response(404, error_body(404, f"{request.path} not found", {}))

    def _generate(self, request: RecordedRequest, model: str) -> Response:
        reply = self.next_reply(request)
        if not self.wait(reply):
            raise ConnectionAbortedError
        if reply.body is not None:
            return body_response(reply)
        if reply.status != 200:
            error = error_body(reply.status, reply.message, reply.options)
            return json_response(reply.status, error, reply.headers)
        body: dict[str, Any] = {
            "candidates": [
                {
                    "content": {"parts": [{"text": reply.text}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "modelVersion": model,
            "responseId": f"mock-{self.next_id()}",
        }
        if reply.usage is not None:
            body["usageMetadata"] = {
                "promptTokenCount": reply.usage[0],
                "candidatesTokenCount": reply.usage[1],
                "totalTokenCount": sum(reply.usage),
            }
        return json_response(200, body, reply.headers)


@contextlib.contextmanager
def gemini_mock(default: Reply | None = None) -> Iterator[GeminiMock]:
    """A running Gemini mock; `.url` is the base URL (no /v1beta)."""
    mock = GeminiMock(default)
    with mock:
        yield mock
