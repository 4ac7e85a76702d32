"""What the session-start context is made of: the rows it reads from the store, once."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from claude_mem.settings import Settings
from claude_mem.store.context_queries import commits_held, recent
from claude_mem.text import FUNCTION_WORDS

# Decisions' most: this share of the rows (here) and of the token budget (`timeline`), so
# however many are on record the newest work keeps the rest.
DECISION_SHARE = 0.4
POOL = 4  # current decisions read per row they may take, of which the most relevant are kept
RECENT_WORK = 20  # the newest observations whose titles and files say what the work is now
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")


@dataclass(frozen=True, slots=True)
class Memory:
    """A project's recent memory. `projects` lists the parent first for a worktree; the last
    one is the project the agent works in. `decisions` are current ones, however old, the
    most relevant to the newest work first; `observations` the newest others, newest first;
    none of them is superseded. `commits`: how many commits of the projects' git history
    memory holds, counted only when there is nothing else (history is not shown here)."""

    projects: tuple[str, ...]
    observations: list[dict[str, Any]]
    summaries: list[dict[str, Any]]
    decisions: list[dict[str, Any]] = field(default_factory=list)
    commits: int = 0

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
        times = [max(int(row["created_at"]) for row in rows) for rows in groups if rows]
        return max(times, default=0)


def gather(conn: sqlite3.Connection, projects: tuple[str, ...], settings: Settings) -> Memory:
    """CLAUDE_MEM_CONTEXT_OBSERVATIONS observations in all: at most DECISION_SHARE of them
    current decisions (the most relevant), the newest others in the rest; and SESSION_COUNT
    summaries (at least one when the last summary is shown)."""
    limit = settings.get_int("CLAUDE_MEM_CONTEXT_OBSERVATIONS")
    sessions = settings.get_int("CLAUDE_MEM_CONTEXT_SESSION_COUNT")
    if settings.get_bool("CLAUDE_MEM_CONTEXT_SHOW_LAST_SUMMARY"):
        sessions = max(sessions, 1)
    seats = int(limit * DECISION_SHARE)
    newest = recent(conn, "observations", projects, limit)
    current = recent(conn, "observations", projects, seats * POOL, decisions=True)
    decisions = most_relevant(current, newest, seats)
    decided = {obs["id"] for obs in decisions}
    others = [obs for obs in newest if obs["id"] not in decided][: limit - len(decisions)]
    summaries = recent(conn, "session_summaries", projects, sessions)
    memory = Memory(projects, others, summaries, decisions)
    if memory.empty:
        return Memory(projects, [], [], [], commits_held(conn, projects))
    return memory


def most_relevant(
    decisions: list[dict[str, Any]], newest: list[dict[str, Any]], seats: int
) -> list[dict[str, Any]]:
    """The `seats` decisions sharing most subject words (of titles and file paths) with the
    newest work, the newer first among equals: the rules the work at hand runs into."""
    work: set[str] = set()
    for obs in newest[:RECENT_WORK]:
        work |= _subject(obs)
    shared = {d["id"]: len(_subject(d) & work) for d in decisions}
    ranked = sorted(
        decisions, key=lambda d: (-shared[d["id"]], -int(d["created_at"]), -int(d["id"]))
    )
    return ranked[:seats]


def _subject(obs: dict[str, Any]) -> set[str]:
    """The words of an observation's title and file paths (no stemming: this runs on every
    session start, over every decision read)."""
    files = [*(obs.get("files_modified") or ()), *(obs.get("files_read") or ())]
    text = " ".join([str(obs.get("title") or ""), *map(str, files)]).lower()
    return set(_WORD.findall(text)) - FUNCTION_WORDS
