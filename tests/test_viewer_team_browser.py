"""Team memory in the web viewer, in real headless Chromium against a real worker process:
team rows show their author, and the Team panel renders `GET /api/team/status`.

The status shapes (configured with errors, not configured, no such route) are answered by
Playwright at the page's own fetch of that one route, so each shape is shown whatever team
the worker is in; everything else comes from the worker. One test reads the worker's real
answer, with no team configured. Screenshots land in test-artifacts/viewer/ (ignored by git)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect, sync_playwright

from tests.net import free_port
from tests.team_rows import AUTHOR, PROJECT, TeamRows, seed_team_rows
from tests.viewer_harness import Worker, launch, start_worker, worker_env

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "viewer"
STATUS_ROUTE = "**/api/team/status"
MARKUP = '<img src=x onerror="window.__pwned=1">'
# 2026-03-02 10:00 UTC and a minute later.
PUSHED_AT = 1_772_445_600_000
PULLED_AT = PUSHED_AT + 60_000
STATUS: dict[str, Any] = {
    "configured": True,
    "server": "postgresql://alice:***@127.0.0.1:5432/team",
    "member": AUTHOR,
    "team": "payments",
    "last_push_at": PUSHED_AT,
    "last_pull_at": PULLED_AT,
    "last_error": f"connection refused {MARKUP}",
    "errors": [
        {"at": PUSHED_AT - 5000, "message": "timeout talking to the server"},
        {"at": PUSHED_AT - 1000, "message": f"connection refused {MARKUP}"},
    ],
    "outbox": 3,
    "lag_s": 1.5,
    "shared_projects": [PROJECT, "billing"],
    "pushed": 1200,
    "pulled": 45,
}

pytestmark = pytest.mark.timeout(90)


@dataclass
class TeamViewer:
    worker: Worker
    context: Any
    rows: TeamRows
    thrown: list[str] = field(default_factory=list)

    def page(self, status: dict[str, Any] | None = None, missing: bool = False) -> Page:
        """A signed-in page; `status` (or a 404 when `missing`) answers the status route."""
        page = self.context.new_page()
        page.on("pageerror", lambda exc: self.thrown.append(str(exc)))
        if status is not None or missing:
            page.route(STATUS_ROUTE, lambda route: answer(route, status))
        return page


def answer(route: Route, status: dict[str, Any] | None) -> None:
    if status is None:  # an older worker: the worker's own 404 shape
        body = {"error": "no route /api/team/status", "code": "not_found"}
        route.fulfill(status=404, content_type="application/json", body=json.dumps(body))
    else:
        route.fulfill(status=200, content_type="application/json", body=json.dumps(status))


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TeamViewer]:
    root = tmp_path_factory.mktemp("team-viewer")
    data_dir, home = root / "data", root / "home"
    home.mkdir()
    data_dir.mkdir(mode=0o700)
    rows = seed_team_rows(data_dir / "claude-mem.db")
    worker, link = start_worker(worker_env(data_dir, free_port(), home))
    try:
        with sync_playwright() as playwright:
            try:
                browser = launch(playwright)
            except FileNotFoundError as exc:
                pytest.fail(str(exc))
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(link)  # signs the context in
            expect(page.locator("#feed .card").first).to_be_visible()
            page.close()
            yield TeamViewer(worker, context, rows)
            browser.close()
    finally:
        worker.stop()


@pytest.fixture(autouse=True)
def nothing_thrown(viewer: TeamViewer) -> Iterator[None]:
    """No uncaught error in any page of a test (a 404 the page handles is not one)."""
    viewer.thrown.clear()
    yield
    assert viewer.thrown == []


def open_at(viewer: TeamViewer, page: Page, path: str = "/") -> Page:
    page.goto(viewer.worker.base + path)
    return page


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def card(page: Page, kind: str, record_id: int) -> Any:
    return page.locator(f'#feed [data-key="{kind}:{record_id}"]')


def test_team_rows_show_their_author_and_own_rows_none(viewer: TeamViewer) -> None:
    page = open_at(viewer, viewer.page())
    rows = viewer.rows
    for kind, record_id in (("observation", rows.team_observation), ("summary", rows.team_summary)):
        expect(card(page, kind, record_id).locator(".author")).to_have_text(f"by {AUTHOR}")
    for kind, record_id in (("observation", rows.own_observation), ("summary", rows.own_summary),
                            ("prompt", rows.own_prompt)):  # fmt: skip
        expect(card(page, kind, record_id)).to_be_visible()
        expect(card(page, kind, record_id).locator(".author")).to_have_count(0)
    shot(page, "team-rows")
    page.close()


def test_detail_and_session_show_the_author(viewer: TeamViewer) -> None:
    page = open_at(viewer, viewer.page(), f"/#/observation/{viewer.rows.team_observation}")
    expect(page.locator("#panel .card-meta .author")).to_have_text(f"by {AUTHOR}")
    expect(page.locator("#panel dt:text-is('Author') + dd")).to_have_text(AUTHOR)
    page.goto(viewer.worker.base + f"/#/session/{viewer.rows.team_session}")
    expect(page.locator("#panel .timeline .author")).to_have_count(2)
    page.close()


def test_the_team_panel_shows_sync_status_and_errors_as_text(viewer: TeamViewer) -> None:
    status = dict(STATUS)
    page = open_at(viewer, viewer.page(status), "/#/team")
    panel = page.locator("#panel")
    expect(page.locator("#panel-title")).to_have_text("Team sync")
    for text in ("postgresql://alice:***@127.0.0.1:5432/team", "payments", "3 records waiting",
                 "1.5 s", "1,200", "45"):  # fmt: skip
        expect(panel).to_contain_text(text)
    expect(panel.locator(".chips li")).to_have_text([PROJECT, "billing"])
    expect(page.locator("#team-last-error")).to_have_text(f"connection refused {MARKUP}")
    errors = panel.locator(".team-errors li")
    expect(errors).to_have_count(2)
    expect(errors.first).to_contain_text(f"connection refused {MARKUP}")  # newest first
    expect(errors.last).to_contain_text("timeout talking to the server")
    expect(panel.locator("time").first).to_have_attribute("datetime", "2026-03-02T10:00:00.000Z")
    assert page.evaluate("window.__pwned") is None
    assert panel.locator("img").count() == 0
    shot(page, "team-sync")
    # The panel follows the worker: the next refresh shows the outbox drained.
    status.update(outbox=0, errors=[], last_error=None)
    expect(panel.locator("dt:text-is('Outbox') + dd")).to_have_text("empty")
    expect(panel).to_contain_text("No errors.")
    page.close()


def test_no_team_gets_a_join_hint_and_an_older_worker_breaks_nothing(viewer: TeamViewer) -> None:
    unconfigured = {**STATUS, "configured": False, "server": None, "member": None, "team": None}
    page = open_at(viewer, viewer.page(unconfigured), "/#/team")
    expect(page.locator("#team-sync .hint")).to_have_text(
        "No team configured: join one with claude-mem team join URL."
    )
    page.close()
    page = open_at(viewer, viewer.page(missing=True), "/#/team")
    expect(page.locator("#panel-title")).to_have_text("Team sync")
    expect(page.locator("#team-sync .hint")).to_contain_text("no team sync")
    expect(card(page, "observation", viewer.rows.team_observation)).to_be_visible()
    page.get_by_role("link", name="Health").click()
    expect(page.locator("#panel")).to_contain_text("Dead letters")
    page.close()


def test_the_workers_own_answer_without_a_team_renders(viewer: TeamViewer) -> None:
    page = open_at(viewer, viewer.page())
    page.get_by_role("link", name="Team").click()
    expect(page.locator("#panel-title")).to_have_text("Team sync")
    expect(page.locator("#team-sync .hint")).to_be_visible()
    page.close()
