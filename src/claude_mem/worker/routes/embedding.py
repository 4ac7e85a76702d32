"""Reindexing in the worker: `claude-mem reindex` asks here when a worker runs, so the
embedder that already owns the vectors redoes them (no second process racing it), then polls
the progress."""

from __future__ import annotations

from typing import Literal

import msgspec

from claude_mem.search.embedding_task import Embedding, EmbeddingFailed
from claude_mem.store.search_queries import KINDS
from claude_mem.worker.api import ApiError, Call, Endpoint

Kind = Literal["observation", "summary", "prompt"]


class ReindexRequest(msgspec.Struct):
    kinds: list[Kind] = []  # empty: every kind
    resume: bool = False  # keep vectors the current model already made


class ReindexProgress(msgspec.Struct):
    state: str  # queued | running | done | failed
    kinds: list[str]
    resume: bool
    total: int
    done: int
    model_id: str | None
    error: str | None


def _embedding(call: Call) -> Embedding:
    embedding = call.state.embedding
    if embedding is None:
        raise ApiError(409, "embeddings are off (CLAUDE_MEM_EMBEDDING_MODEL=none)", "conflict")
    return embedding


def start_reindex(call: Call) -> ReindexProgress:
    body: ReindexRequest = call.body
    try:
        job = _embedding(call).request_reindex(tuple(body.kinds or KINDS), body.resume)
    except EmbeddingFailed as exc:
        raise ApiError(409, str(exc), "conflict") from None
    return msgspec.convert(job.snapshot(), ReindexProgress)


def reindex_progress(call: Call) -> ReindexProgress:
    job = _embedding(call).reindex
    if job is None:
        raise ApiError(404, "no reindex was asked of this worker", "not_found")
    return msgspec.convert(job.snapshot(), ReindexProgress)


ENDPOINTS = [
    Endpoint("POST", "/api/embedding/reindex", start_reindex,
             "Embed records again with the current model, in the worker's embedder (the job "
             "in progress if one runs)", "embedding",
             body=ReindexRequest, response=ReindexProgress, errors=(400, 409)),
    Endpoint("GET", "/api/embedding/reindex", reindex_progress,
             "Progress of the last reindex asked of this worker", "embedding",
             response=ReindexProgress, errors=(404, 409)),
]  # fmt: skip
