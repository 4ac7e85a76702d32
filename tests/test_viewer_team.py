"""Team rows reach the viewer with their author: the feed's search hits (newest first and
ranked), timelines, on a real worker over a real SQLite file; one's own rows carry none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.team_rows import AUTHOR, PROJECT, TeamRows, seed_team_rows
from tests.worker_fixtures import RunningWorker


@pytest.fixture
def rows(data_dir: Path) -> TeamRows:
    return seed_team_rows(data_dir / "claude-mem.db")


def authors(hits: list[dict[str, Any]]) -> dict[tuple[str, int], str | None]:
    return {(hit["kind"], hit["id"]): hit["author"] for hit in hits}


def get(worker: RunningWorker, path: str, **params: Any) -> Any:
    answer = worker.client.get(path, params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_feed_shows_who_wrote_each_team_row(rows: TeamRows, worker: RunningWorker) -> None:
    page = get(worker, "/api/search", project=PROJECT, limit=20)
    assert page["mode"] == "recent"
    assert authors(page["hits"]) == {
        ("observation", rows.team_observation): AUTHOR,
        ("summary", rows.team_summary): AUTHOR,
        ("observation", rows.own_observation): None,
        ("summary", rows.own_summary): None,
        ("prompt", rows.own_prompt): None,
    }


def test_ranked_hits_and_live_catch_up_carry_the_author(
    rows: TeamRows, worker: RunningWorker
) -> None:
    ranked = get(worker, "/api/search", query="idempotency keys", project=PROJECT)
    assert ranked["mode"] == "fulltext"
    assert authors(ranked["hits"])[("observation", rows.team_observation)] == AUTHOR
    # What the feed asks when a live event names the team session.
    live = get(worker, "/api/search", session_id=rows.team_session, kind=["observation", "summary"])
    assert set(authors(live["hits"]).values()) == {AUTHOR}


def test_a_timeline_around_a_team_row_names_its_author(
    rows: TeamRows, worker: RunningWorker
) -> None:
    timeline = get(worker, "/api/timeline", anchor=str(rows.team_observation), depth_before=5,
                   depth_after=5, project=PROJECT)  # fmt: skip
    assert timeline["anchor"]["author"] == AUTHOR
    assert authors(timeline["items"])[("observation", rows.own_observation)] is None
