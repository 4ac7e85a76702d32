"""The `local` provider: the offline, model-free compressor of `claude_mem.pipeline.local`,
behind the provider contract and the registry's entry point. It answers corpus questions
without a model too: with the corpus's best-matching observations, cited, instead of prose."""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_mem.corpus.render import citation, day
from claude_mem.pipeline.local import compress_events, summarize_session
from claude_mem.pipeline.providers.base import (
    CorpusAnswer,
    CorpusContext,
    CorpusQuestion,
    Result,
    SessionContext,
    SummaryInput,
    ToolEvent,
)

if TYPE_CHECKING:
    from claude_mem.settings import Settings

TOP = 5  # observations in a corpus answer
SNIPPET_CHARS = 280  # of each one's narrative


class LocalProvider:
    """The offline, model-free compressor (`CLAUDE_MEM_PROVIDER=local`)."""

    name = "local"
    offline = True
    caches_prompts = False

    async def compress(self, events: list[ToolEvent], ctx: SessionContext) -> Result:
        """Observations by rule; no model was used, so no tokens and no model name."""
        return Result(observations=compress_events(events, ctx))

    async def summarize(self, request: SummaryInput, ctx: SessionContext) -> Result:
        return Result(summary=summarize_session(request, ctx))

    async def answer(self, question: CorpusQuestion, corpus: CorpusContext) -> CorpusAnswer:
        """The best-matching observations, numbered, each with a snippet and a citation."""
        rows = corpus.best_matches(question.question, TOP)
        if not rows:
            return CorpusAnswer(
                f'No observation in corpus "{question.corpus}" matches that question. Try other '
                "words, or configure an LLM provider for prose answers."
            )
        about_corpus = f'corpus "{question.corpus}" (local provider, no model)'
        lines = [f"Best-matching observations in {about_corpus}:"]
        for n, row in enumerate(rows, start=1):
            about = " ".join(str(row["narrative"] or row["subtitle"] or "").split())
            if len(about) > SNIPPET_CHARS:
                about = about[: SNIPPET_CHARS - 1].rstrip() + "…"
            when = day(row["created_at"])
            lines.append(
                f"{n}. [#{row['id']}] {when} · {row['type']} · {row['title'] or 'Untitled'}"
            )
            if about:
                lines.append(f"   {about}")
        return CorpusAnswer("\n".join(lines), [citation(row) for row in rows])


def create(settings: Settings) -> LocalProvider:
    """The registry's factory (entry point `local`); rules need no settings."""
    return LocalProvider()


__all__ = ["LocalProvider", "compress_events", "create", "summarize_session"]
