"""Asking a corpus a question with the configured provider.

Whatever the provider, it gets the same `CorpusQuestion` (the corpus's text and system prompt,
the token budget, the session it saved with the corpus, if any) and a `CorpusContext` to search
the corpus or save a session, and answers through the contract's `answer` method; how it
answers is its own (`pipeline/providers/*`). A provider without `answer` is a clear error.

The corpus's system prompt treats every observation as untrusted data (see `render`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from claude_mem.corpus.build import CorpusError, CorpusFilter, load, search_filters
from claude_mem.pipeline import registry
from claude_mem.pipeline.providers.base import CorpusQuestion, Provider, ProviderError
from claude_mem.search.hybrid import HybridSearcher, VectorSource
from claude_mem.settings import Settings
from claude_mem.store import corpora
from claude_mem.store.corpora import Corpus
from claude_mem.store.db import Database
from claude_mem.store.observations import get_observations
from claude_mem.text import STOPWORDS

MAX_QUESTION = 4000
MAX_WORDS = 12


@dataclass(slots=True)
class Answer:
    corpus: str
    question: str
    answer: str
    provider: str
    citations: list[dict[str, Any]] = field(default_factory=list)
    session_id: str | None = None
    primed: bool = False  # this call sent the corpus to a new agent session
    session_expired: bool = False  # the stored session was gone, so it was primed again
    left_out: int = 0  # observations cut to fit the model's budget


def _words(question: str) -> list[str]:
    words = [w.lower() for w in re.findall(r"\w+", question) if len(w) >= 3]
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS))[:MAX_WORDS]


def best_matches(
    db: Database, corpus: Corpus, question: str, vectors: VectorSource | None, top: int
) -> list[dict[str, Any]]:
    """The corpus's observations that best match `question`, best first.

    Reciprocal-rank fusion over the whole question (weight 2: every word present) and each
    significant word alone (weight 1), so a natural question still finds partial matches.
    """
    allowed = set(corpus.observation_ids)
    searcher = HybridSearcher(db, vectors)
    filters = search_filters(CorpusFilter.from_dict(corpus.filter))
    limit = min(max(len(allowed), 1), 200)
    scores: dict[int, float] = {}
    for weight, text in [(2.0, question), *((1.0, word) for word in _words(question))]:
        hits = searcher.search(text, filters, kinds=("observation",), limit=limit).hits
        ranked = [hit.id for hit in hits if hit.id in allowed]
        for rank, obs_id in enumerate(ranked, start=1):
            scores[obs_id] = scores.get(obs_id, 0.0) + weight / (60 + rank)
    best = sorted(scores, key=lambda i: (-scores[i], -i))[:top]
    return get_observations(db.read(), best)


class _Shelf:
    """The `CorpusContext` a provider answers with: search within the corpus, and the
    corpus's saved session, kept under the provider's name."""

    def __init__(
        self, db: Database, corpus: Corpus, vectors: VectorSource | None, provider: str
    ) -> None:
        self.db, self.corpus, self.vectors, self.provider = db, corpus, vectors, provider

    def best_matches(self, question: str, top: int) -> list[Mapping[str, Any]]:
        return list(best_matches(self.db, self.corpus, question, self.vectors, top))

    def save_session(self, session_id: str) -> None:
        with self.db.write() as conn:
            corpora.set_session(conn, self.corpus.name, session_id, self.provider)


async def ask(
    db: Database,
    name: str,
    question: str,
    settings: Settings,
    *,
    provider: Provider | None = None,
    vectors: VectorSource | None = None,
) -> Answer:
    """Answer `question` from corpus `name`; CorpusError for a bad request or a failed
    provider (the message says which and why)."""
    question = question.strip()
    if not question:
        raise CorpusError("ask a question")
    if len(question) > MAX_QUESTION:
        raise CorpusError(f"the question is longer than {MAX_QUESTION} characters")
    corpus = load(db, name)
    if provider is None:
        chosen = settings.get_str("CLAUDE_MEM_PROVIDER")
        try:
            provider = registry.create(chosen, settings)
        except ValueError as exc:
            raise CorpusError(str(exc)) from None
    try:
        answerer = registry.corpus_answerer(provider)
    except ValueError as exc:
        raise CorpusError(str(exc)) from None
    request = CorpusQuestion(
        corpus=corpus.name,
        question=question,
        system_prompt=corpus.system_prompt,
        knowledge=corpus.rendered,
        max_tokens=settings.get_int("CLAUDE_MEM_CORPUS_MAX_TOKENS"),
        session_id=corpus.session_id if corpus.session_provider == provider.name else None,
    )
    try:
        reply = await answerer.answer(request, _Shelf(db, corpus, vectors, provider.name))
    except ProviderError as exc:
        raise CorpusError(f"{provider.name} could not answer ({exc.kind}): {exc.message}") from None
    return Answer(
        corpus.name, question, reply.text, provider.name, citations=reply.citations,
        session_id=reply.session_id, primed=reply.primed,
        session_expired=reply.session_expired, left_out=reply.left_out,
    )  # fmt: skip
