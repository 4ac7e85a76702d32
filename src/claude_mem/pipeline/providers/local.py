"""The `local` provider: the offline, model-free compressor of `claude_mem.pipeline.local`,
behind the provider contract and the registry's entry point."""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_mem.pipeline.local import compress_events, summarize_session
from claude_mem.pipeline.providers.base import Result, SessionContext, SummaryInput, ToolEvent

if TYPE_CHECKING:
    from claude_mem.settings import Settings


class LocalProvider:
    """The offline, model-free compressor (`CLAUDE_MEM_PROVIDER=local`)."""

    name = "local"

    async def compress(self, events: list[ToolEvent], ctx: SessionContext) -> Result:
        """Observations by rule; no model was used, so no tokens and no model name."""
        return Result(observations=compress_events(events, ctx))

    async def summarize(self, request: SummaryInput, ctx: SessionContext) -> Result:
        return Result(summary=summarize_session(request, ctx))


def create(settings: Settings) -> LocalProvider:
    """The registry's factory (entry point `local`); rules need no settings."""
    return LocalProvider()


__all__ = ["LocalProvider", "compress_events", "create", "summarize_session"]
