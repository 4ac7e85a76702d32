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
    """Own and team records in the database at `path`. The `author` column is team memory's
    (migration 0016_team); it is added here only where the schema does not have it yet."""
    db = Database(path)
    try:
        with db.write() as conn:
            for table in TABLES:
                names = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
                if "author" not in names:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN author TEXT")
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
            ))  # fmt: skip
            own_sum = insert_summary(conn, Summary(
                session_id=own, project=PROJECT, request="Find the double retry",
            ))  # fmt: skip
            team_sum = insert_summary(conn, Summary(
                session_id=team, project=PROJECT, request="Make charges idempotent",
            ))  # fmt: skip
            conn.execute("UPDATE observations SET author = ? WHERE id = ?", (AUTHOR, team_obs))
            conn.execute("UPDATE session_summaries SET author = ? WHERE id = ?", (AUTHOR, team_sum))
    finally:
        db.close()
    return TeamRows(own_obs, own_sum, prompt, team_obs, team_sum, team)
