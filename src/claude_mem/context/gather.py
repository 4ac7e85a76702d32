"""What the session-start context is made of: the rows it reads from the store, once."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from claude_mem.settings import Settings
from claude_mem.store.context_queries import recent


@dataclass(frozen=True, slots=True)
class Memory:
    """A project's recent memory, newest first. `projects` lists the parent first for a
    worktree; the last one is the project the agent works in. `decisions` are the current
    ones, however old, and `observations` the newest others; none of them is superseded."""

    projects: tuple[str, ...]
    observations: list[dict[str, Any]]
    summaries: list[dict[str, Any]]
    decisions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def primary(self) -> str:
        return self.projects[-1]

    @property
    def empty(self) -> bool:
        return not self.observations and not self.summaries and not self.decisions

    @property
    def newest_at(self) -> int:
        """Epoch ms of the newest row (0 when empty)."""
        groups = (self.observations, self.summaries, self.decisions)
        times = [int(rows[0]["created_at"]) for rows in groups if rows]
        return max(times, default=0)


def gather(conn: sqlite3.Connection, projects: tuple[str, ...], settings: Settings) -> Memory:
    """CLAUDE_MEM_CONTEXT_OBSERVATIONS observations in all: the current decisions, newest
    first, then the newest others; and SESSION_COUNT summaries (at least one when the last
    summary is shown)."""
    limit = settings.get_int("CLAUDE_MEM_CONTEXT_OBSERVATIONS")
    sessions = settings.get_int("CLAUDE_MEM_CONTEXT_SESSION_COUNT")
    if settings.get_bool("CLAUDE_MEM_CONTEXT_SHOW_LAST_SUMMARY"):
        sessions = max(sessions, 1)
    decisions = recent(conn, "observations", projects, limit, decisions=True)
    room = limit - len(decisions)  # no other is read when decisions fill it
    decided = {obs["id"] for obs in decisions}
    newest = recent(conn, "observations", projects, limit) if room else []
    others = [obs for obs in newest if obs["id"] not in decided]
    return Memory(
        projects,
        others[:room],
        recent(conn, "session_summaries", projects, sessions),
        decisions,
    )
