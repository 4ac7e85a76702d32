"""POST /api/memory: explicit memories are validated, private parts never stored, never a 500."""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mem import paths
from tests.worker_fixtures import RunningWorker


def save(worker: RunningWorker, **body: object) -> dict:
    response = worker.client.post("/api/memory", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_saves_an_observation_in_a_manual_session(worker: RunningWorker) -> None:
    first = save(
        worker,
        text="We pin mcp>=2,<3 because v2 renamed FastMCP.\nSecond line.",
        type="decision",
        concepts=["why-it-exists"],
        project="proj",
    )
    assert first["created"] is True
    assert first["project"] == "proj"
    assert first["title"] == "We pin mcp>=2,<3 because v2 renamed FastMCP."
    obs = worker.client.get(f"/api/observations/{first['id']}").json()
    assert obs["type"] == "decision"
    assert obs["concepts"] == ["why-it-exists"]
    assert obs["narrative"].endswith("Second line.")
    assert obs["generated_by"] == "manual"
    assert obs["source"] == "manual"
    session = worker.client.get(f"/api/sessions/{obs['session_id']}").json()["session"]
    assert session["platform"] == "manual"
    assert session["project"] == "proj"

    second = save(worker, text="Another memory", title="Explicit title", project="proj")
    assert second["session_id"] == first["session_id"]  # one manual session per project
    assert second["title"] == "Explicit title"
    again = save(worker, text="Another memory", title="Explicit title", project="proj")
    assert again == second | {"created": False}  # the same memory twice is stored once
    other = save(worker, text="Elsewhere", project="other")
    assert other["session_id"] != first["session_id"]


def test_project_from_cwd_and_default(worker: RunningWorker, tmp_path: Path) -> None:
    folder = tmp_path / "my-repo"
    folder.mkdir()
    assert save(worker, text="x", cwd=str(folder))["project"] == "my-repo"
    assert save(worker, text="y")["project"] == "unknown-project"


def test_excluded_project_is_refused(worker: RunningWorker, tmp_path: Path) -> None:
    folder = tmp_path / "secret-repo"
    folder.mkdir()
    changed = worker.client.post(
        "/api/settings", json={"values": {"CLAUDE_MEM_EXCLUDED_PROJECTS": "**/secret-*"}}
    )
    assert changed.status_code == 200, changed.text
    response = worker.client.post("/api/memory", json={"text": "x", "cwd": str(folder)})
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "project_excluded"


def test_private_text_is_never_stored(worker: RunningWorker) -> None:
    saved = save(
        worker,
        text="Public part. <private>hunter2-password</private> End.",
        title="<private>secret title</private>",
        concepts=["ok", "<private>hidden-concept</private>"],
        project="proj",
    )
    obs = worker.client.get(f"/api/observations/{saved['id']}").json()
    assert "hunter2" not in obs["narrative"]
    assert obs["narrative"].startswith("Public part.")
    assert "secret" not in saved["title"]
    assert "secret" not in obs["title"]
    assert obs["concepts"] == ["ok"]
    whole = worker.client.post(
        "/api/memory", json={"text": "<private>all of it</private>", "project": "proj"}
    )
    assert whole.status_code == 400
    assert whole.json()["code"] == "empty_memory"
    stored = b"".join(
        p.read_bytes() for p in paths.db_path().parent.glob(paths.db_path().name + "*")
    )
    for secret in (b"hunter2", b"secret title", b"hidden-concept", b"all of it"):
        assert secret not in stored  # not in the database file, its WAL or journal


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"text": ""},
        {"text": 5},
        {"text": "x", "type": "poem"},
        {"text": "x", "concepts": "not-a-list"},
        {"text": "x", "concepts": [""]},
        {"text": "x", "unknown": 1},
        {"text": "x" * 20_001},
        {"text": "x", "project": ""},
    ],
)
def test_invalid_bodies_are_400(worker: RunningWorker, body: dict) -> None:
    response = worker.client.post("/api/memory", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "invalid_body"


def test_needs_the_token(worker: RunningWorker) -> None:
    import httpx2

    response = httpx2.post(f"{worker.base}/api/memory", json={"text": "x"})
    assert response.status_code == 401
