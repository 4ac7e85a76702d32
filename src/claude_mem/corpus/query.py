"""Asking a corpus a question with the configured provider.

- `local` (no model): the corpus's best-matching observations, with citations, instead of
  prose. The question is searched whole and word by word (`HybridSearcher`, so vectors help
  when the worker has them) and only observations of the corpus count.
- `claude-agent-sdk` (the `claude` CLI): the corpus is sent once to prime a saved CLI
  session, whose id is stored with the corpus; each question resumes it. When the CLI no
  longer has the session (expired, deleted), the corpus is primed again and the question
  retried, once.
- Any HTTP LLM provider: one call per question with the corpus in the system prompt, cut to
  `CLAUDE_MEM_CORPUS_MAX_TOKENS`, placed first and unchanged between questions so provider
  prompt caches can reuse it; for Anthropic it is marked `cache_control: ephemeral`.

The corpus's system prompt treats every observation as untrusted data (see `render`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from claude_mem import log
from claude_mem.corpus import render
from claude_mem.corpus.build import CorpusError, CorpusFilter, load, search_filters
from claude_mem.pipeline import registry
from claude_mem.pipeline.providers.anthropic import AnthropicProvider
from claude_mem.pipeline.providers.base import Provider, ProviderError
from claude_mem.pipeline.providers.claude_cli import ClaudeCliProvider, SessionExpired
from claude_mem.pipeline.providers.llm import Completion, HttpCall, LLMProvider
from claude_mem.pipeline.providers.local import LocalProvider
from claude_mem.search.hybrid import HybridSearcher, VectorSource
from claude_mem.settings import Settings
from claude_mem.store import corpora
from claude_mem.store.corpora import Corpus
from claude_mem.store.db import Database
from claude_mem.store.observations import get_observations

LOCAL_TOP = 5
SNIPPET_CHARS = 280
MAX_QUESTION = 4000
MAX_WORDS = 12
_STOPWORDS = frozenset(
    ("the", "and", "for", "with", "that", "this", "what", "when", "where", "which", "who",
     "why", "how", "did", "does", "was", "were", "are", "has", "have", "had", "can", "could",
     "should", "would", "our", "their", "there", "from", "into", "about", "any", "all", "not",
     "but", "you", "your", "they", "them", "then", "than", "its", "also", "been", "being")
)  # fmt: skip


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


def _citation(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "type": row["type"],
        "title": row["title"],
        "project": row["project"],
        "date": render.day(row["created_at"]),
    }


def _words(question: str) -> list[str]:
    words = [w.lower() for w in re.findall(r"\w+", question) if len(w) >= 3]
    return list(dict.fromkeys(w for w in words if w not in _STOPWORDS))[:MAX_WORDS]


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


def _local_answer(
    db: Database, corpus: Corpus, question: str, vectors: VectorSource | None
) -> Answer:
    rows = best_matches(db, corpus, question, vectors, LOCAL_TOP)
    if not rows:
        text = (
            f'No observation in corpus "{corpus.name}" matches that question. Try other words, '
            "or configure an LLM provider for prose answers."
        )
        return Answer(corpus.name, question, text, "local")
    lines = [f'Best-matching observations in corpus "{corpus.name}" (local provider, no model):']
    for n, row in enumerate(rows, start=1):
        about = " ".join(str(row["narrative"] or row["subtitle"] or "").split())
        if len(about) > SNIPPET_CHARS:
            about = about[: SNIPPET_CHARS - 1].rstrip() + "…"
        day = render.day(row["created_at"])
        lines.append(f"{n}. [#{row['id']}] {day} · {row['type']} · {row['title'] or 'Untitled'}")
        if about:
            lines.append(f"   {about}")
    return Answer(corpus.name, question, "\n".join(lines), "local", list(map(_citation, rows)))


class _CachedSystemAnthropic(AnthropicProvider):
    """Anthropic with the system prompt sent as one cacheable block: the corpus is read from
    the prompt cache on the questions after the first."""

    def build_call(self, completion: Completion) -> HttpCall:
        call = super().build_call(completion)
        call.body["system"] = [
            {"type": "text", "text": completion.system, "cache_control": {"type": "ephemeral"}}
        ]
        return call


def _cache_friendly(provider: LLMProvider) -> LLMProvider:
    if type(provider) is AnthropicProvider:
        clone = _CachedSystemAnthropic.__new__(_CachedSystemAnthropic)
        clone.__dict__.update(vars(provider))
        return clone
    return provider


async def _llm_answer(
    provider: LLMProvider, corpus: Corpus, question: str, max_tokens: int
) -> Answer:
    knowledge, left_out = render.fit(corpus.rendered, max_tokens)
    system = f"{corpus.system_prompt}\n\n<knowledge-base>\n{knowledge}\n</knowledge-base>"
    reply = await _cache_friendly(provider).complete(Completion(system, question))
    return Answer(corpus.name, question, reply.text.strip(), provider.name, left_out=left_out)


async def _prime(
    db: Database, provider: ClaudeCliProvider, corpus: Corpus, max_tokens: int
) -> tuple[str, int]:
    """A new CLI session holding the corpus; its id is stored with the corpus."""
    knowledge, left_out = render.fit(corpus.rendered, max_tokens)
    _, session = await provider.converse(corpus.system_prompt, render.prime_prompt(knowledge))
    with db.write() as conn:
        corpora.set_session(conn, corpus.name, session, provider.name)
    log.info("corpus", "primed an agent session", corpus=corpus.name, left_out=left_out)
    return session, left_out


async def _agent_answer(
    db: Database, provider: ClaudeCliProvider, corpus: Corpus, question: str, max_tokens: int
) -> Answer:
    answer = Answer(corpus.name, question, "", provider.name)
    session = corpus.session_id if corpus.session_provider == provider.name else None
    if session is not None:
        try:
            reply, answer.session_id = await provider.converse(
                corpus.system_prompt, question, resume=session
            )
            answer.answer = reply.text.strip()
            return answer
        except SessionExpired as exc:
            log.info("corpus", "agent session gone; priming again", corpus=corpus.name,
                     error=exc.message)  # fmt: skip
            answer.session_expired = True
    session, answer.left_out = await _prime(db, provider, corpus, max_tokens)
    answer.primed = True
    reply, answer.session_id = await provider.converse(
        corpus.system_prompt, question, resume=session
    )
    if answer.session_id != session:
        with db.write() as conn:
            corpora.set_session(conn, corpus.name, answer.session_id, provider.name)
    answer.answer = reply.text.strip()
    return answer


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
    budget = settings.get_int("CLAUDE_MEM_CORPUS_MAX_TOKENS")
    try:
        if isinstance(provider, LocalProvider):
            return _local_answer(db, corpus, question, vectors)
        if isinstance(provider, ClaudeCliProvider):
            return await _agent_answer(db, provider, corpus, question, budget)
        if isinstance(provider, LLMProvider):
            return await _llm_answer(provider, corpus, question, budget)
    except ProviderError as exc:
        raise CorpusError(f"{provider.name} could not answer ({exc.kind}): {exc.message}") from None
    raise CorpusError(
        f"provider {provider.name!r} cannot answer corpus questions; use local, anthropic, "
        "openai-compatible, gemini or claude-agent-sdk"
    )
