"""The viewer's HTTP side against a real worker on a loopback port: its files (types, CSP,
ETags), one-time sign-in links, and the cookie that stands in for the token — refused for
requests from other sites, other ports, or without our Origin."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx2

from claude_mem.viewer.assets import ASSETS, STATIC_DIR
from claude_mem.viewer.auth import cookie_name
from tests.worker_fixtures import RunningWorker


def anonymous(worker: RunningWorker) -> httpx2.Client:
    return httpx2.Client(base_url=worker.base, timeout=10, follow_redirects=False)


def sign_in(worker: RunningWorker) -> tuple[httpx2.Client, str]:
    """A browser-like client holding the viewer cookie, and the cookie's value."""
    url = worker.client.post("/api/viewer/links").json()["url"]
    browser = anonymous(worker)
    answer = browser.get(url.removeprefix(worker.base))
    assert answer.status_code == 303
    value = browser.cookies[cookie_name(worker.port)]
    return browser, value


def test_page_and_files_have_their_types_a_strict_csp_and_etags(worker: RunningWorker) -> None:
    with anonymous(worker) as client:
        page = client.get("/")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        csp = page.headers["content-security-policy"]
        assert "script-src 'self';" in csp
        assert "unsafe-inline" not in csp
        assert "unsafe-eval" not in csp
        assert page.headers["x-content-type-options"] == "nosniff"
        assert "<script" not in page.text.replace('<script type="module" src="/static/', "")
        types = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
        for name in ASSETS:
            if name.endswith(".html"):  # pages: `/` and the refused sign-in link's
                continue
            answer = client.get(f"/static/{name}")
            assert answer.status_code == 200, name
            assert answer.headers["content-type"].startswith(types[Path(name).suffix])
            assert answer.headers["cache-control"] == "no-cache"
            again = client.get(f"/static/{name}", headers={"if-none-match": answer.headers["etag"]})
            assert again.status_code == 304
            assert again.content == b""
        assert client.get("/static/missing.js").status_code == 404
        assert client.get("/static/../settings.json").status_code == 404


def test_every_file_the_page_loads_is_shipped() -> None:
    referenced = set(re.findall(r'"/static/([\w.-]+)"', (STATIC_DIR / "index.html").read_text()))
    for script in STATIC_DIR.glob("*.js"):
        referenced |= set(re.findall(r'from "\./([\w.-]+)"', script.read_text()))
    assert referenced
    assert referenced <= set(ASSETS)
    assert {p.name for p in STATIC_DIR.iterdir()} == set(ASSETS)  # nothing unserved


def test_a_link_signs_in_once_and_the_cookie_reads_the_api(worker: RunningWorker) -> None:
    with anonymous(worker) as stranger:
        assert stranger.get("/api/stats").status_code == 401
        assert stranger.post("/api/viewer/links").status_code == 401
        url = worker.client.post("/api/viewer/links").json()["url"]
        assert re.fullmatch(rf"{worker.base}/auth\?code=[\w-]{{32}}", url)
        answer = stranger.get(url.removeprefix(worker.base))
        assert answer.status_code == 303
        assert answer.headers["location"] == "/"
        cookie = answer.headers["set-cookie"]
        for attribute in ("HttpOnly", "SameSite=Strict", "Path=/"):
            assert attribute in cookie
        assert worker.state.token not in cookie
        assert stranger.get("/api/stats").status_code == 200
    with anonymous(worker) as other:
        reused = other.get(url.removeprefix(worker.base))
        assert reused.status_code == 403
        assert "claude-mem viewer" in reused.json()["error"]
        assert other.get("/auth?code=made-up").status_code == 403
        assert other.get("/auth").status_code == 403
        assert other.get("/api/stats").status_code == 401


def test_a_link_that_no_longer_works_shows_a_page_saying_what_to_run(
    worker: RunningWorker,
) -> None:
    """A browser opening a used, expired or made-up link gets a page (not JSON) that names the
    command printing a new one; API clients still get the JSON error."""
    url = worker.client.post("/api/viewer/links").json()["url"].removeprefix(worker.base)
    html = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    with anonymous(worker) as browser:
        assert browser.get(url, headers=html).status_code == 303
        for path in (url, "/auth?code=made-up", "/auth"):
            page = browser.get(path, headers=html)
            assert page.status_code == 403, path
            assert page.headers["content-type"] == "text/html; charset=utf-8"
            assert page.headers["cache-control"] == "no-store"
            assert "unsafe-inline" not in page.headers["content-security-policy"]
            assert "<code>claude-mem viewer</code>" in page.text
            assert "expired or already used" in page.text
            assert "{" not in page.text  # no JSON
        assert browser.get(url).json()["code"] == "invalid_link"


def test_the_cookie_counts_only_for_our_own_origin(worker: RunningWorker) -> None:
    browser, value = sign_in(worker)
    ours = f"http://127.0.0.1:{worker.port}"
    try:
        same = {"sec-fetch-site": "same-origin"}
        assert browser.get("/api/stats", headers=same).status_code == 200
        # Another server on 127.0.0.1 is "same-site" (cookies ignore ports): refused.
        for site in ("same-site", "cross-site"):
            assert browser.get("/api/stats", headers={"sec-fetch-site": site}).status_code == 401
        # Writes need our Origin: none (a form or script from nowhere) is refused...
        assert browser.delete("/api/observations/1", headers=same).status_code == 401
        # ...a foreign one never reaches the route...
        other = {"origin": "http://127.0.0.1:1", "sec-fetch-site": "same-site"}
        assert browser.delete("/api/observations/1", headers=other).status_code == 403
        # ...and ours gets through (404: there is no such observation).
        mine = {"origin": ours, **same}
        assert browser.delete("/api/observations/1", headers=mine).status_code == 404
        change = {"values": {"CLAUDE_MEM_CONTEXT_SESSION_COUNT": 4}}
        saved = browser.post("/api/settings", json=change, headers=mine)
        assert saved.status_code == 200
        assert saved.json()["values"]["CLAUDE_MEM_CONTEXT_SESSION_COUNT"] == 4
    finally:
        browser.close()
    with anonymous(worker) as forger:
        forger.cookies.set(
            cookie_name(worker.port), value[:-1] + ("0" if value[-1] != "0" else "1")
        )
        assert forger.get("/api/stats").status_code == 401
        forger.cookies.set(cookie_name(worker.port + 1), value)
        assert forger.get("/api/stats").status_code == 401


def test_meta_lists_platforms_types_and_setting_specs(
    worker: RunningWorker, tmp_path: Path
) -> None:
    event = {"platform": "codex", "host_session_id": "m-1", "cwd": str(tmp_path), "prompt": "hi"}
    assert worker.client.post("/api/sessions/init", json=event).status_code == 200
    meta = worker.client.get("/api/viewer/meta").json()
    assert "bugfix" in meta["types"]
    by_key = {spec["key"]: spec for spec in meta["settings"]}
    count = by_key["CLAUDE_MEM_CONTEXT_SESSION_COUNT"]
    assert (count["kind"], count["minimum"], count["maximum"]) == ("int", 0, 50)
    assert by_key["CLAUDE_MEM_ANTHROPIC_API_KEY"]["secret"] is True
    assert meta["platforms"] == ["codex"]


def test_demo_prints_a_one_time_viewer_link(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = subprocess.run(
        [str(Path(sys.executable).with_name("claude-mem")), "demo"],
        env={**os.environ, "TMPDIR": str(scratch), "CLAUDE_MEM_EMBEDDING_MODEL": "none"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"^Viewer: http://127\.0\.0\.1:\d+/auth\?code=[\w-]{32}\s", done.stdout, re.M)
