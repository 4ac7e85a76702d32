"""A loopback Anthropic Messages API: `POST /v1/messages`, JSON or the SSE stream.

Shapes follow the public API closely enough for real clients (including a CLI pointed at it
with ANTHROPIC_BASE_URL): messages carry id/type/role/model/content/stop_reason/usage; a
`stream: true` request gets message_start, content_block_start, ping, content_block_delta
(text_delta)…, content_block_stop, message_delta (stop_reason + usage), message_stop;
errors are `{"type": "error", "error": {"type": …, "message": …}}` with the usual status.
Also served: `POST /v1/messages/count_tokens`, `GET /v1/models`, `HEAD|GET /` (200) and a
404 not_found_error for anything else. Query strings (`?beta=true`) are ignored.

Reply options (`Reply.options`): `stream_error` = an error dict sent as an `error` event
after the first delta; `cut_stream` = True to stop before message_stop; `stop_reason`;
`tool_uses` = a list of `{"id", "name", "input"}` tool calls (see `tool_use()`).

Scripted tool calls, to drive an agent (e.g. the real Claude Code CLI) through tool turns:

    api.script(tool_use("Bash", {"command": "ls"}), tool_use("Read", {"file_path": p}),
               answer("Done: ..."))

A tool_use reply's content is an optional text block, then one `tool_use` block per call,
and its stop_reason is "tool_use". Streamed, each call is a content_block_start carrying the
block with an empty `input`, `input_json_delta` deltas whose `partial_json` pieces join into
the input's JSON, and a content_block_stop; message_delta then says `stop_reason: tool_use`.
The agent runs the tool and sends its next request with the `tool_result`; the next
scripted reply answers it. `tool_result_ids(request)` lists the tool results a request
carries, so a `when=` can wait for the right turn.
"""

from __future__ import annotations

import contextlib
import json
import math
import uuid
from collections.abc import Iterator, Mapping
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

__all__ = ["ERROR_TYPES", "AnthropicMock", "anthropic_mock", "tool_result_ids", "tool_use"]

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
MODELS = ("claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-1")


def tool_use(
    name: str,
    tool_input: Mapping[str, Any],
    *,
    text: str = "",
    tool_id: str | None = None,
    calls: list[tuple[str, Mapping[str, Any]]] | None = None,
    **kwargs: Any,
) -> Reply:
    """A reply in which the model calls tool `name` with `tool_input` (then stops for it).

    `text` comes first as a text block when given; `calls` adds more (name, input) calls to
    the same turn. Ids are `toolu_mock_<hex>` unless `tool_id` names the first one.
    """
    pairs = [(name, tool_input), *(calls or [])]
    uses = []
    for n, (tool_name, value) in enumerate(pairs):
        ident = tool_id if (n == 0 and tool_id) else f"toolu_mock_{uuid.uuid4().hex[:20]}"
        uses.append({"id": ident, "name": tool_name, "input": dict(value)})
    reply = Reply(text=text, **kwargs)
    reply.options = {"stop_reason": "tool_use", **reply.options, "tool_uses": uses}
    return reply


def tool_result_ids(request: RecordedRequest) -> list[str]:
    """The `tool_use_id`s of the tool_result blocks sent since the model's last turn.

    That is every message after the last assistant message: the CLI may add messages of its
    own (e.g. a `system` reminder) after the user turn that carries the results.
    """
    payload = request.json if isinstance(request.json, dict) else {}
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return []
    ids: list[str] = []
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") == "assistant":
            break
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                ids.append(str(block.get("tool_use_id")))
    return ids


def _tool_uses(reply: Reply) -> list[dict[str, Any]]:
    uses = reply.options.get("tool_uses")
    return list(uses) if isinstance(uses, list) else []


def _content(reply: Reply) -> list[dict[str, Any]]:
    """The reply's content blocks: its text (if any), then its tool calls."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    for use in _tool_uses(reply):
        blocks.append(
            {"type": "tool_use", "id": use["id"], "name": use["name"], "input": use["input"]}
        )
    return blocks


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


class AnthropicMock(MockServer):
    def route(self, request: RecordedRequest) -> Response:
        if request.path in ("", "/") and request.method in ("HEAD", "GET"):
            return json_response(200, {"ok": True, "mock": "anthropic"})
        if request.method == "POST" and request.path == "/v1/messages":
            return self._messages(request)
        if request.method == "POST" and request.path == "/v1/messages/count_tokens":
            size = len(request.text)
            return json_response(200, {"input_tokens": max(1, math.ceil(size / 4))})
        if request.method == "GET" and request.path == "/v1/models":
            data = [
                {
                    "type": "model",
                    "id": model,
                    "display_name": model,
                    "created_at": "2025-01-01T00:00:00Z",
                }
                for model in MODELS
            ]
            return json_response(
                200, {"data": data, "has_more": False, "first_id": MODELS[0], "last_id": MODELS[-1]}
            )
        message = f"{request.method} {request.path} is not served by this mock"
        return json_response(404, error_body(404, message))

    def _messages(self, request: RecordedRequest) -> Response:
        reply = self.next_reply(request)
        if not self.wait(reply):
            raise ConnectionAbortedError
        headers = {"request-id": f"req_mock_{self.next_id()}", **reply.headers}
        if reply.body is not None:
            reply.headers = headers
            return body_response(reply)
        if reply.status != 200:
            return json_response(reply.status, error_body(reply.status, reply.message), headers)
        payload = request.json if isinstance(request.json, dict) else {}
        model = str(payload.get("model") or MODELS[0])
        message_id = f"msg_mock_{self.next_id():06d}"
        if payload.get("stream"):
            events = self._stream(reply, model, message_id)
            return Response(
                200, headers={"content-type": "text/event-stream", **headers}, events=events
            )
        body: dict[str, Any] = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": _content(reply),
            "stop_reason": reply.options.get("stop_reason", "end_turn"),
            "stop_sequence": None,
        }
        if reply.usage is not None:
            body["usage"] = {"input_tokens": reply.usage[0], "output_tokens": reply.usage[1]}
        return json_response(200, body, headers)

    def _stream(self, reply: Reply, model: str, message_id: str) -> Iterator[bytes]:
        usage_in, usage_out = reply.usage or (0, 0)
        start_usage: dict[str, Any] = {"input_tokens": usage_in, "output_tokens": 1}
        if reply.usage is None:
            start_usage = {}
        yield sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    **({"usage": start_usage} if start_usage else {}),
                },
            },
        )
        uses = _tool_uses(reply)
        index = 0
        if reply.text or not uses:  # a plain answer always has its (maybe empty) text block
            yield sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            yield sse("ping", {"type": "ping"})
            for n, piece in enumerate(chunks(reply.text)):
                delta = {"type": "text_delta", "text": piece}
                yield sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                )
                if n == 0 and reply.options.get("stream_error"):
                    yield sse("error", {"type": "error", "error": reply.options["stream_error"]})
                    return
            yield sse("content_block_stop", {"type": "content_block_stop", "index": 0})
            index = 1
        else:
            yield sse("ping", {"type": "ping"})
        for use in uses:
            yield from self._stream_tool_use(index, use)
            index += 1
        if reply.options.get("cut_stream"):
            return
        message_delta: dict[str, Any] = {
            "type": "message_delta",
            "delta": {
                "stop_reason": reply.options.get("stop_reason", "end_turn"),
                "stop_sequence": None,
            },
        }
        if reply.usage is not None:
            message_delta["usage"] = {"output_tokens": usage_out}
        yield sse("message_delta", message_delta)
        yield sse("message_stop", {"type": "message_stop"})

    @staticmethod
    def _stream_tool_use(index: int, use: dict[str, Any]) -> Iterator[bytes]:
        """One tool_use block: its start (empty input), the input as JSON pieces, its stop."""
        block = {"type": "tool_use", "id": use["id"], "name": use["name"], "input": {}}
        yield sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )
        for piece in chunks(json.dumps(use["input"])):
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield sse("content_block_stop", {"type": "content_block_stop", "index": index})


@contextlib.contextmanager
def anthropic_mock(default: Reply | None = None) -> Iterator[AnthropicMock]:
    """A running Anthropic mock; `.url` is the base URL (ANTHROPIC_BASE_URL style, no /v1)."""
    mock = AnthropicMock(default)
    with mock:
        yield mock
