"""Session-start context: a compact, deterministic index of a project's recent memory."""

from __future__ import annotations

import sqlite3
import time

from claude_mem.settings import Settings
from claude_mem.store.observations import list_observations
from claude_mem.store.summaries import list_summaries

TYPE_MARKS = {
    "bugfix": "●",
    "feature": "◆",
    "refactor": "↻",
    "change": "✓",
    "discovery": "○",
    "decision": "⚖",
}
SUMMARY_LABELS = (
    ("request", "Request"),
    ("learned", "Learned"),
    ("completed", "Completed"),
    ("next_steps", "Next steps"),
)


def render(
    conn: sqlite3.Connection,
    projects: tuple[str, ...],
    settings: Settings,
    *,
    now: float | None = None,
    warning: str | None = None,
) -> str:
    """The context text for `projects` (the last one is the primary); never empty.

    `warning` (compression failing) comes first, so the agent can tell the user.
    """
    text = _render(conn, projects, settings, time.time() if now is None else now)
    return f"{warning}\n{text}" if warning else text


def _render(
    conn: sqlite3.Connection, projects: tuple[str, ...], settings: Settings, now: float
) -> str:
    primary = projects[-1]
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(now))
    limit = settings.get_int("CLAUDE_MEM_CONTEXT_OBSERVATIONS")
    observations = list_observations(conn, projects=projects, limit=limit) if limit else []
    summaries = list_summaries(conn, projects=projects, limit=1)
    if not observations and not summaries:
        return (
            f"# [{primary}] claude-mem: no memory yet for this project.\n"
            "Work from this session on is remembered and offered to the next one."
        )
    lines = [
        f"# [{primary}] recent memory, {stamp}",
        "Legend: " + " ".join(f"{mark} {kind}" for kind, mark in TYPE_MARKS.items()),
        "Format: ID TIME TYPE TITLE | details: get_observations([IDs]) | search: search(query)",
    ]
    day = ""
    for obs in reversed(observations):
        when = time.gmtime(obs["created_at"] / 1000)
        label = time.strftime("%b %d, %Y", when)
        if label != day:
            day = label
            lines += ["", f"### {label}"]
        mark = TYPE_MARKS.get(obs["type"], "•")
        lines.append(
            f"{obs['id']} {time.strftime('%H:%M', when)} {mark} {obs['title'] or 'Untitled'}"
        )
    if summaries and settings.get_bool("CLAUDE_MEM_CONTEXT_SHOW_LAST_SUMMARY"):
        lines += ["", "## Last session summary"]
        summary = summaries[0]
        lines += [f"**{label}**: {summary[key]}" for key, label in SUMMARY_LABELS if summary[key]]
    return "\n".join(lines)
