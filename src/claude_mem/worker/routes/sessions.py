"""Ingest: hook events arrive here and are durably recorded before the answer goes out.
Each runs on the event loop when the writer is free (`Endpoint.inline`), else on a thread."""

from __future__ import annotations

from claude_mem.worker.api import ApiError, Call, Endpoint
from claude_mem.worker.ingest import (
    Ingest,
    IngestResult,
    SessionEnd,
    SessionInit,
    SummaryRequest,
    ToolEvent,
)


def _ingest(call: Call) -> Ingest:
    ingest = call.state.ingest
    if ingest is None:  # the store closed between the readiness check and here
        raise ApiError(503, "worker is stopping", "starting")
    return ingest


def _run(call: Call, action: str) -> IngestResult:
    try:
        result: IngestResult | None = getattr(_ingest(call), action)(call.body)
    except ValueError as exc:
        raise ApiError(400, str(exc), "invalid_event") from None
    if result is None:
        raise ApiError(404, "no such session", "unknown_session")
    return result


def session_init(call: Call) -> IngestResult:
    return _run(call, "session_init")


def enqueue_observation(call: Call) -> IngestResult:
    return _run(call, "observation")


def enqueue_summary(call: Call) -> IngestResult:
    return _run(call, "summarize")


def end_session(call: Call) -> IngestResult:
    return _run(call, "end")


ENDPOINTS = [
    Endpoint("POST", "/api/sessions/init", session_init,
             "Register a prompt (idempotent per host session; duplicates within 10 s skipped)",
             "ingest", body=SessionInit, response=IngestResult, inline=True),
    Endpoint("POST", "/api/sessions/observations", enqueue_observation,
             "Record a tool event and queue it for compression; answers once it is durable",
             "ingest", body=ToolEvent, response=IngestResult, inline=True),
    Endpoint("POST", "/api/sessions/summarize", enqueue_summary,
             "Queue a session summary from the last assistant message", "ingest",
             body=SummaryRequest, response=IngestResult, inline=True),
    Endpoint("POST", "/api/sessions/end", end_session, "Mark a session completed", "ingest",
             body=SessionEnd, response=IngestResult, errors=(400, 404), inline=True),
]  # fmt: skip
