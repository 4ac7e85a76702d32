"""Four workers, four data dirs, four members of one team on a real PostgreSQL, all writing
at once: every shared memory reaches the server once and every teammate once, and each
worker's search finds the others' (bench/team_bench.py times how soon)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import httpx2

from claude_mem.team import admin
from tests.polling import wait_until
from tests.team_pg import TeamDatabase
from tests.test_team_sync import remember, server_rows, worker_process

WORKERS = 4
EACH = 25
PROJECT = "shop"


def word(worker: int) -> str:
    """A word only worker `worker`'s memories hold, to search the team's copies by."""
    return f"origin{'abcd'[worker]}word"


def write_all(client: httpx2.Client, worker: int) -> None:
    for n in range(EACH):
        text = f"{word(worker)} finding {n}: the cart total rounds half up"
        remember(client, PROJECT, f"w{worker} note {n}", text)


def found(client: httpx2.Client, worker: int) -> set[str]:
    answer = client.get(
        "/api/search", params={"query": word(worker), "project": PROJECT, "limit": 100}
    )
    assert answer.status_code == 200, answer.text
    return {hit["title"] for hit in answer.json()["hits"]}


def test_four_workers_share_everything_once(
    team_db: TeamDatabase, unique_name: Callable[[str], str], tmp_path: Path
) -> None:
    team = unique_name("team")
    admin.init(team_db.owner_url, team)
    urls = [admin.add_member(team_db.owner_url, unique_name(f"m{i}"), team) for i in range(WORKERS)]
    with ExitStack() as stack:
        clients = [
            stack.enter_context(worker_process(tmp_path / f"dev{i}", url))
            for i, url in enumerate(urls)
        ]
        for client in clients:
            assert client.post("/api/team/share", json={"project": PROJECT}).status_code == 200
        with ThreadPoolExecutor(WORKERS) as pool:
            list(pool.map(write_all, clients, range(WORKERS)))

        expected = {i: {f"w{i} note {n}" for n in range(EACH)} for i in range(WORKERS)}
        for reader, client in enumerate(clients):
            for writer in range(WORKERS):
                sees = lambda c=client, w=writer: found(c, w) == expected[w]  # noqa: E731
                assert wait_until(sees, 60), (
                    f"worker {reader} does not find worker {writer}'s memories"
                )

        total, distinct, hashes = server_rows(
            team_db.owner_url,
            "SELECT count(*), count(DISTINCT origin_id), count(DISTINCT content_hash)"
            " FROM claude_mem.records",
        )[0]
        assert (total, distinct, hashes) == (WORKERS * EACH,) * 3
        members = server_rows(
            team_db.owner_url, "SELECT member, count(*) FROM claude_mem.records GROUP BY member"
        )
        assert sorted(count for _, count in members) == [EACH] * WORKERS
        for client in clients:
            titles = [str(o["title"]) for o in observations_of(client)]
            assert sorted(titles) == sorted(t for each in expected.values() for t in each)


def observations_of(client: httpx2.Client) -> list[dict[str, object]]:
    """Every observation the worker holds (own and the team's), page by page."""
    rows: list[dict[str, object]] = []
    while True:
        answer = client.get("/api/observations", params={"limit": 100, "offset": len(rows)})
        assert answer.status_code == 200, answer.text
        page = answer.json()["items"]
        rows.extend(page)
        if len(page) < 100:
            return rows
