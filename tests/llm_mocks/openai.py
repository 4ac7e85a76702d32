"""A loopback OpenAI-compatible API: `POST /v1/chat/completions` and `GET /v1/models`.

`.url` ends in /v1, like the base URL of OpenAI, Ollama or LM Studio. Errors follow OpenAI's
`{"error": {"message", "type", "param", "code"}}`; a 429 may say `insufficient_quota` via
`Reply.options["code"]`. A `stream: true` request is answered with chat.completion.chunk
events and `data: [DONE]`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from tests.llm_mocks.server import (
    MockServer,
    RecordedRequest,
    Reply,
    Response,
    body_response,
    chunks,
    json_response,
    sse,
)

__all__ = ["OpenAIMock", "openai_mock"]

_ERRORS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}


def error_body(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    kind, default_code = _ERRORS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    return {
        "error": {"message": message, "type": kind, "param": None, "code": code or default_code}
    }


class OpenAIMock(MockServer):
    base_path = "/v1"

    def route(self, request: RecordedRequest) -> Response:
        if request.method == "POST" and request.path == "/v1/chat/completions":
            return self._chat(request)
        if request.method == "GET" and request.path == "/v1/models":
            data = [{"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock"}]
            return json_response(200, {"object": "list", "data": data})
        if request.path in ("", "/") and request.method in ("HEAD", "GET"):
            return json_response(200, {"ok": True, "mock": "openai"})
        return json_response(404, error_body(404, f"Unknown path {request.path}", "not_found"))

    def _chat(self, request: RecordedRequest) -> Response:
        reply = self.next_reply(request)
        if not self.wait(reply):
            raise ConnectionAbortedError
        if reply.body is not None:
            return body_response(reply)
        if reply.status != 200:
            error = error_body(reply.status, reply.message, reply.options.get("code"))
            return json_response(reply.status, error, reply.headers)
        payload = request.json if isinstance(request.json, dict) else {}
        model = str(payload.get("model") or "mock-model")
        ident = f"chatcmpl-mock{self.next_id()}"
        usage = None
        if reply.usage is not None:
            usage = {
                "prompt_tokens": reply.usage[0],
                "completion_tokens": reply.usage[1],
                "total_tokens": sum(reply.usage),
            }
        if payload.get("stream"):
            return Response(
                200,
                headers={"content-type": "text/event-stream", **reply.headers},
                events=self._stream(reply, model, ident, usage),
            )
        body: dict[str, Any] = {
            "id": ident,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": "stop",
                }
            ],
        }
        if usage is not None:
            body["usage"] = usage
        return json_response(200, body, reply.headers)

    def _stream(
        self, reply: Reply, model: str, ident: str, usage: dict[str, int] | None
    ) -> Iterator[bytes]:
        base = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }
        for piece in chunks(reply.text):
            choice = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
            yield sse(None, {**base, "choices": [choice]})
        yield sse(None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if usage is not None:
            yield sse(None, {**base, "choices": [], "usage": usage})
        yield sse(None, "[DONE]")


@contextlib.contextmanager
def openai_mock(default: Reply | None = None) -> Iterator[OpenAIMock]:
    """A running OpenAI-compatible mock; `.url` is the base URL ending in /v1."""
    mock = OpenAIMock(default)
    with mock:
        yield mock
