"""Records as team sync leaves them in the local store, for the viewer's tests: one's own
observation and summary (no author) beside a teammate's (their `author`), in one project."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from claude_mem.records import Observation, Summary
from claude_mem.store import Database
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import add_prompt, ensure_session
from claude_mem.store.summaries import insert_summary

PROJECT = "teamshop"
AUTHOR = "alice"
TABLES = ("observations", "session_summaries")


@dataclass(frozen=True)
class TeamRows:
    own_observation: int
    own_summary: int
    own_prompt: int
    team_observation: int
    team_summary: int
    team_session: int


def seed_team_rows(path: Path) -> TeamRows:
    """Own and team records in the database at `path`, the team's as a pull stores them."""
    db = Database(path)
    try:
        with db.write() as conn:
            own = ensure_session(conn, platform="claude-code", host_session_id="own-1",
                                 project=PROJECT)  # fmt: skip
            team = ensure_session(conn, platform="team", host_session_id="alice-laptop/7",
                                  project=PROJECT)  # fmt: skip
            prompt = add_prompt(conn, own, "Why does checkout retry twice?").prompt_id
            own_obs, _ = insert_observation(conn, Observation(
                session_id=own, project=PROJECT, type="discovery", title="Checkout retries twice",
            ))  # fmt: skip
            team_obs, _ = insert_observation(conn, Observation(
                session_id=team, project=PROJECT, type="decision",
                title="Payments use idempotency keys",
                narrative="Every charge carries a key so a retried request is charged once.",
                source="team", author=AUTHOR, origin_id="alice-laptop/observation/7",
            ))  # fmt: skip
            own_sum = insert_summary(conn, Summary(
                session_id=own, project=PROJECT, request="Find the double retry",
            ))  # fmt: skip
            team_sum = insert_summary(conn, Summary(
                session_id=team, project=PROJECT, request="Make charges idempotent",
                author=AUTHOR, origin_id="alice-laptop/summary/3",
            ))  # fmt: skip
    finally:
        db.close()
    return TeamRows(own_obs, own_sum, prompt, team_obs, team_sum, team)
