"""Knowledge corpora over HTTP: build, list, show, rebuild, delete, query (`claude_mem.corpus`).

Builds and queries use the worker's embeddings when loaded (hybrid search); a query answers
with the configured provider and may take as long as the model does.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Annotated, Any

import msgspec

from claude_mem.corpus import build as corpus
from claude_mem.corpus.build import CorpusNotFound
from claude_mem.corpus.names import MAX_NAME
from claude_mem.corpus.query import MAX_QUESTION, ask
from claude_mem.search.hybrid import VectorSource
from claude_mem.worker.api import ApiError, Call, Endpoint

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME)]
Value = Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]
Values = Annotated[list[Value], msgspec.Meta(max_length=50)]


class BuildBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: Name
    description: Annotated[str, msgspec.Meta(max_length=2000)] = ""
    project: Value | None = None
    types: Values = []
    concepts: Values = []
    files: Values = []
    query: Annotated[str, msgspec.Meta(max_length=4000)] | None = None
    since: Annotated[str, msgspec.Meta(max_length=40)] | None = None
    until: Annotated[str, msgspec.Meta(max_length=40)] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=corpus.MAX_LIMIT)] | None = None


class QueryBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    question: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_QUESTION)]


class DateRange(msgspec.Struct):
    earliest: int | None
    latest: int | None


class Stats(msgspec.Struct):
    observation_count: int
    date_range: DateRange
    type_breakdown: dict[str, int]
    token_estimate: int


class CorpusInfo(msgspec.Struct, kw_only=True):
    name: str
    description: str
    filter: dict[str, Any]
    stats: Stats
    session_id: str | None
    session_provider: str | None
    created_at: int
    updated_at: int


class CorpusDetail(CorpusInfo, kw_only=True):
    system_prompt: str
    observation_ids: list[int]
    rendered: str


class CorpusList(msgspec.Struct):
    corpora: list[CorpusInfo]


class Deleted(msgspec.Struct):
    deleted: str


class Citation(msgspec.Struct):
    id: int
    type: str
    title: str
    project: str
    date: str


class AnswerBody(msgspec.Struct, kw_only=True):
    corpus: str
    question: str
    answer: str
    provider: str
    citations: list[Citation]
    session_id: str | None
    primed: bool
    session_expired: bool
    left_out: int


def _vectors(call: Call) -> VectorSource | None:
    return getattr(call.state, "embedding", None)


def _failure(exc: ValueError) -> ApiError:
    if isinstance(exc, CorpusNotFound):
        return ApiError(404, str(exc), "not_found")
    return ApiError(400, str(exc), "invalid_corpus")


def _info(found: Any) -> CorpusInfo:
    return msgspec.convert(corpus.describe(found), CorpusInfo)


def build_corpus(call: Call) -> CorpusInfo:
    body: BuildBody = call.body
    db = call.state.db
    assert db is not None
    try:
        filt = corpus.CorpusFilter.parse(
            project=body.project, types=body.types, concepts=body.concepts, files=body.files,
            query=body.query, since=body.since, until=body.until, limit=body.limit,
        )  # fmt: skip
        made = corpus.build(db, body.name, filt, description=body.description,
                            vectors=_vectors(call))  # fmt: skip
    except ValueError as exc:
        raise _failure(exc) from None
    return _info(made)


def list_corpora(call: Call) -> CorpusList:
    from claude_mem.store.corpora import list_all  # noqa: PLC0415

    assert call.state.db is not None
    return CorpusList([_info(c) for c in list_all(call.state.db.read())])


def show_corpus(call: Call) -> CorpusDetail:
    assert call.state.db is not None
    try:
        found = corpus.load(call.state.db, call.params["name"])
    except ValueError as exc:
        raise _failure(exc) from None
    detail = corpus.describe(found) | {
        "system_prompt": found.system_prompt,
        "observation_ids": found.observation_ids,
        "rendered": found.rendered,
    }
    return msgspec.convert(detail, CorpusDetail)


def rebuild_corpus(call: Call) -> CorpusInfo:
    assert call.state.db is not None
    try:
        return _info(corpus.rebuild(call.state.db, call.params["name"], vectors=_vectors(call)))
    except ValueError as exc:
        raise _failure(exc) from None


def delete_corpus(call: Call) -> Deleted:
    assert call.state.db is not None
    try:
        corpus.delete(call.state.db, call.params["name"])
    except ValueError as exc:
        raise _failure(exc) from None
    return Deleted(call.params["name"])


def query_corpus(call: Call) -> AnswerBody:
    """In a handler thread with its own event loop: a model may take a while, and the local
    answer searches SQLite; neither may hold up the worker's loop."""
    body: QueryBody = call.body
    db = call.state.db
    assert db is not None
    try:
        answer = asyncio.run(ask(db, call.params["name"], body.question, call.state.settings,
                                 vectors=_vectors(call)))  # fmt: skip
    except ValueError as exc:
        raise _failure(exc) from None
    return msgspec.convert(asdict(answer), AnswerBody)


ENDPOINTS = [
    Endpoint("POST", "/api/corpus", build_corpus,
             "Build (or replace) a knowledge corpus from an observation filter", "corpus",
             body=BuildBody, response=CorpusInfo),
    Endpoint("GET", "/api/corpus", list_corpora, "Knowledge corpora and their stats", "corpus",
             response=CorpusList, errors=()),
    Endpoint("GET", "/api/corpus/{name}", show_corpus,
             "One corpus with its system prompt and rendered knowledge", "corpus",
             response=CorpusDetail, errors=(400, 404)),
    Endpoint("DELETE", "/api/corpus/{name}", delete_corpus, "Delete a corpus", "corpus",
             response=Deleted, errors=(400, 404)),
    Endpoint("POST", "/api/corpus/{name}/rebuild", rebuild_corpus,
             "Build a corpus again from its saved filter", "corpus",
             response=CorpusInfo, errors=(400, 404)),
    Endpoint("POST", "/api/corpus/{name}/query", query_corpus,
             "Answer a question from a corpus with the configured provider", "corpus",
             body=QueryBody, response=AnswerBody, errors=(400, 404)),
]  # fmt: skip
