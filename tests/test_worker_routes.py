from __future__ import annotations

import threading
from pathlib import Path

import pytest

from claude_mem import paths
from claude_mem.records import Observation
from tests.worker_fixtures import RunningWorker, running_worker


def init(worker: RunningWorker, prompt: str, host: str = "s1", cwd: str = "/work/proj") -> dict:
    response = worker.client.post(
        "/api/sessions/init", json={"host_session_id": host, "cwd": cwd, "prompt": prompt}
    )
    assert response.status_code == 200, response.text
    return response.json()


def tool(worker: RunningWorker, **fields: object) -> dict:
    body = {"host_session_id": "s1", "cwd": "/work/proj", "tool_name": "Read"} | fields
    response = worker.client.post("/api/sessions/observations", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_health_and_readiness_need_no_token(worker: RunningWorker) -> None:
    import httpx2

    bare = httpx2.get(f"{worker.base}/api/health")
    assert bare.status_code == 200
    assert bare.json()["ready"] is True
    assert bare.json()["port"] == worker.port
    assert httpx2.get(f"{worker.base}/api/readiness").json() == {"ready": True, "reason": None}


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/api/observations"), ("POST", "/api/sessions/init"), ("GET", "/api/settings")],
)
def test_data_routes_require_the_token(worker: RunningWorker, method: str, path: str) -> None:
    import httpx2

    response = httpx2.request(method, worker.base + path, json={})
    assert response.status_code == 401
    assert "x-claude-mem-token" in response.json()["error"]
    wrong = httpx2.request(
        method, worker.base + path, json={}, headers={"x-claude-mem-token": "nope"}
    )
    assert wrong.status_code == 401


def test_foreign_host_and_origin_refused(worker: RunningWorker) -> None:
    evil_host = worker.client.get("/api/health", headers={"host": "evil.example:80"})
    assert evil_host.status_code == 403
    assert evil_host.json()["code"] == "forbidden_host"
    evil_origin = worker.client.get("/api/stats", headers={"origin": "https://evil.example"})
    assert evil_origin.status_code == 403
    own = worker.client.get("/api/stats", headers={"origin": worker.base})
    assert own.status_code == 200
    assert worker.client.get("/api/health", headers={"host": f"localhost:{worker.port}"}).is_success


def test_session_init_numbers_prompts_and_skips_duplicates(worker: RunningWorker) -> None:
    first = init(worker, "fix the flaky test")
    assert first["status"] == "recorded"
    assert first["prompt_number"] == 1
    assert first["project"] == "proj"
    again = init(worker, "fix the flaky test")
    assert again["status"] == "duplicate"
    assert again["prompt_number"] == 1
    second = init(worker, "now add docs")
    assert second["prompt_number"] == 2
    assert second["session_id"] == first["session_id"]
    prompts = worker.client.get("/api/prompts").json()["items"]
    assert [p["text"] for p in prompts] == ["now add docs", "fix the flaky test"]
    assert prompts[0]["project"] == "proj"


def test_private_prompt_skips_and_makes_its_tool_events_private(worker: RunningWorker) -> None:
    result = init(worker, "<private>client is ACME, budget 2M</private>")
    assert (result["status"], result["reason"]) == ("skipped", "private")
    skipped = tool(worker, tool_use_id="t1", tool_response="ACME budget file")
    assert (skipped["status"], skipped["reason"]) == ("skipped", "private")
    assert worker.client.get("/api/prompts").json()["items"] == []
    init(worker, "public follow-up")
    assert tool(worker, tool_use_id="t2")["status"] == "queued"


def test_protocol_payload_and_media_prompt(worker: RunningWorker) -> None:
    skipped = init(worker, "<task-notification><id>7</id></task-notification>")
    assert skipped == {"status": "skipped", "reason": "internal_protocol"}
    media = init(worker, "   ")
    assert media["status"] == "recorded"
    assert worker.client.get("/api/prompts").json()["items"][0]["text"] == "[media prompt]"


def test_observation_is_durably_queued_once(worker: RunningWorker) -> None:
    init(worker, "read things")
    first = tool(worker, tool_use_id="toolu_1", tool_input={"file_path": "a.py"})
    assert first["status"] == "queued"
    again = tool(worker, tool_use_id="toolu_1", tool_input={"file_path": "a.py"})
    assert again["status"] == "duplicate"
    assert again["queue_id"] == first["queue_id"]
    # No tool_use_id: the same content gets the same synthetic id.
    a = tool(worker, tool_name="Bash", tool_input={"command": "ls"}, tool_response="x")
    b = tool(worker, tool_name="Bash", tool_input={"command": "ls"}, tool_response="x")
    assert (a["status"], b["status"]) == ("queued", "duplicate")
    assert worker.client.get("/api/stats").json()["counts"]["tool_uses"] == 2


def test_skip_tools_and_excluded_projects(worker: RunningWorker, tmp_path: Path) -> None:
    assert tool(worker, tool_name="TodoWrite")["reason"] == "tool_excluded"
    repo = tmp_path / "secret-repo"
    repo.mkdir()
    (repo / ".claude-mem-ignore").write_text("")
    result = init(worker, "hello", cwd=str(repo))
    assert (result["status"], result["reason"]) == ("skipped", "project_excluded")


def test_giant_tool_output_is_truncated_not_lost(worker: RunningWorker) -> None:
    init(worker, "big read")
    huge = "line of output\n" * 400_000  # ~6 MB
    result = tool(worker, tool_use_id="big", tool_response={"stdout": huge})
    assert result["status"] == "queued"
    from claude_mem.store.tool_uses import get_tool_use

    assert worker.state.db is not None
    row = get_tool_use(worker.state.db.read(), result["tool_use_row_id"])
    assert row is not None
    stdout = row["tool_response"]["stdout"]
    assert "…[truncated" in stdout
    assert stdout.startswith("line of output")
    assert len(stdout) < 70_000


def test_oversize_field_is_cleaned_before_it_is_cut(worker: RunningWorker) -> None:
    """The private block's opening tag falls where the cut removes text and its content where
    the cut keeps it: cutting first would keep the secret without its tag."""
    from claude_mem.store.limits import FIELD_CHARS, HEAD_SHARE

    init(worker, "big read")
    kept_tail = FIELD_CHARS - int(FIELD_CHARS * HEAD_SHARE)
    private = "QZSECRETVALUE</private>"
    stdout = "a" * FIELD_CHARS + "<private>" + private + "c" * (kept_tail - len(private) - 3)
    result = tool(worker, tool_use_id="cut", tool_response={"stdout": stdout})
    assert result["status"] == "queued"
    db = worker.state.db
    assert db is not None
    db.checkpoint()
    raw = b"".join(p.read_bytes() for p in db.path.parent.glob(db.path.name + "*"))
    assert b"QZSECRETVALUE" not in raw
    from claude_mem.store.tool_uses import get_tool_use

    row = get_tool_use(db.read(), result["tool_use_row_id"])
    assert row is not None
    assert "…[truncated" in row["tool_response"]["stdout"]


def test_body_over_limit_is_413_naming_the_limit(worker: RunningWorker) -> None:
    body = (
        b'{"host_session_id": "s", "tool_name": "x", "tool_response": "'
        + b"a" * (17 * 1024 * 1024)
        + b'"}'
    )
    response = worker.client.post(
        "/api/sessions/observations", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert "16,777,216-byte limit" in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe\xfd", "not valid JSON"),
        (b'{"host_session_id": 5, "tool_name": "x"}', "host_session_id"),
        (b'{"tool_name": "x"}', "host_session_id"),
        (b'{"host_session_id": "", "tool_name": "x"}', "host_session_id"),
        (b'{"host_session_id": "s", "tool_name": "  "}', "tool_name"),
    ],
)
def test_bad_bodies_get_a_clear_400(worker: RunningWorker, body: bytes, fragment: str) -> None:
    response = worker.client.post(
        "/api/sessions/observations", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert fragment in response.json()["error"]


def test_unknown_fields_accepted(worker: RunningWorker) -> None:
    response = worker.client.post(
        "/api/sessions/init",
        json={"host_session_id": "s9", "prompt": "hi", "cwd": "/x/y", "future_field": {"a": 1}},
    )
    assert response.status_code == 200


def test_summarize_rules(worker: RunningWorker) -> None:
    init(worker, "do work")
    post = worker.client.post
    base = {"host_session_id": "s1", "cwd": "/work/proj"}
    assert (
        post(
            "/api/sessions/summarize", json=base | {"agent_id": "a1", "last_assistant_message": "x"}
        ).json()["reason"]
        == "subagent"
    )
    assert (
        post(
            "/api/sessions/summarize",
            json=base | {"last_assistant_message": " <private>x</private> "},
        ).json()["reason"]
        == "empty"
    )
    queued = post(
        "/api/sessions/summarize", json=base | {"last_assistant_message": "Done: fixed it."}
    ).json()
    assert queued["status"] == "queued"
    assert (
        post(
            "/api/sessions/summarize", json=base | {"last_assistant_message": "Done: fixed it."}
        ).json()["status"]
        == "duplicate"
    )


def test_session_end_and_detail_and_delete(worker: RunningWorker) -> None:
    sid = init(worker, "hello")["session_id"]
    ended = worker.client.post(
        "/api/sessions/end", json={"host_session_id": "s1", "reason": "exit"}
    )
    assert ended.json() == {"status": "completed", "session_id": sid}
    missing = worker.client.post("/api/sessions/end", json={"host_session_id": "never"})
    assert missing.status_code == 404
    detail = worker.client.get(f"/api/sessions/{sid}").json()
    assert detail["session"]["status"] == "completed"
    assert [p["text"] for p in detail["prompts"]] == ["hello"]
    assert worker.client.delete(f"/api/sessions/{sid}").json() == {"deleted": True, "id": sid}
    assert worker.client.get(f"/api/sessions/{sid}").status_code == 404
    assert worker.client.delete(f"/api/sessions/{sid}").status_code == 404


def test_observation_reads_by_id_batch_file_and_delete(worker: RunningWorker) -> None:
    from claude_mem.store.observations import insert_observation
    from claude_mem.store.sessions import ensure_session

    db = worker.state.db
    assert db is not None
    with db.write() as conn:
        sid = ensure_session(conn, platform="claude-code", host_session_id="x", project="p")
        ids = [
            insert_observation(
                conn,
                Observation(
                    session_id=sid, project="p", type="change", title=f"t{i}",
                    files_modified=[f"/r/f{i}.py"], files_read=["/r/common.py"],
                ),
            )[0]
            for i in range(3)
        ]  # fmt: skip
    one = worker.client.get(f"/api/observations/{ids[0]}").json()
    assert one["files_modified"] == ["/r/f0.py"]
    batch = worker.client.post("/api/observations/batch", json={"ids": [ids[2], 999, ids[0]]})
    assert [o["id"] for o in batch.json()["items"]] == [ids[2], ids[0]]
    by_file = worker.client.get("/api/observations/by-file", params={"path": ["/r/f1.py"]})
    assert [o["id"] for o in by_file.json()["items"]] == [ids[1]]
    common = worker.client.get("/api/observations/by-file", params={"path": "/r/common.py"})
    assert len(common.json()["items"]) == 3
    page = worker.client.get("/api/observations", params={"limit": 2, "project": "p"}).json()
    assert (len(page["items"]), page["has_more"]) == (2, True)
    assert worker.client.get("/api/observations", params={"limit": 500}).status_code == 400
    assert worker.client.delete(f"/api/observations/{ids[0]}").status_code == 200
    assert worker.client.get(f"/api/observations/{ids[0]}").status_code == 404
    assert worker.client.get("/api/projects").json()["projects"][0]["name"] == "p"


def test_settings_round_trip_and_validation(worker: RunningWorker) -> None:
    changed = worker.client.post(
        "/api/settings", json={"values": {"CLAUDE_MEM_CONTEXT_OBSERVATIONS": 12}}
    )
    assert changed.status_code == 200
    assert changed.json()["values"]["CLAUDE_MEM_CONTEXT_OBSERVATIONS"] == 12
    bad = worker.client.post("/api/settings", json={"values": {"CLAUDE_MEM_LOG_LEVEL": "LOUD"}})
    assert bad.status_code == 400
    assert "CLAUDE_MEM_LOG_LEVEL" in bad.json()["error"]
    assert "DEBUG, INFO" in bad.json()["error"]
    assert paths.settings_path().exists()
    view = worker.client.get("/api/settings").json()
    assert view["sources"]["CLAUDE_MEM_CONTEXT_OBSERVATIONS"] == "file"


def test_logs_route_tails_the_log(worker: RunningWorker) -> None:
    from claude_mem import log

    log.info("test", "marker-line")
    lines = worker.client.get("/api/logs", params={"lines": 5}).json()["lines"]
    assert any("marker-line" in line for line in lines)


def test_context_inject_text(worker: RunningWorker) -> None:
    empty = worker.client.get("/api/context/inject", params={"cwd": "/work/proj"})
    assert empty.headers["content-type"].startswith("text/plain")
    assert "no memory yet" in empty.text
    assert worker.client.get("/api/context/inject").status_code == 400
    from claude_mem.store.observations import insert_observation
    from claude_mem.store.sessions import ensure_session

    db = worker.state.db
    assert db is not None
    with db.write() as conn:
        sid = ensure_session(conn, platform="c", host_session_id="h", project="proj")
        insert_observation(
            conn, Observation(session_id=sid, project="proj", type="bugfix", title="Fixed X")
        )
    text = worker.client.get("/api/context/inject", params={"project": "proj"}).text
    assert "● **Fixed X**" in text  # the newest findings lead, in full


def test_503_until_store_is_open(data_dir: Path) -> None:
    import sqlite3

    paths.ensure_data_dir()
    blocker = sqlite3.connect(paths.db_path(), isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with running_worker(ready=False) as worker:
            health = worker.client.get("/api/health").json()
            assert health["ready"] is False
            waiting = worker.client.get("/api/observations")
            assert waiting.status_code == 503
            assert waiting.json()["code"] == "starting"
            assert worker.client.get("/api/readiness").status_code == 503
            blocker.execute("COMMIT")
            worker.wait_ready(timeout=15)
            assert worker.client.get("/api/observations").status_code == 200
    finally:
        blocker.close()


def test_deeply_nested_body_is_answered_not_crashed(worker: RunningWorker) -> None:
    init(worker, "nesting")
    nested = b"[" * 100_000 + b"]" * 100_000
    body = b'{"host_session_id": "s1", "tool_name": "Read", "tool_input": ' + nested + b"}"
    response = worker.client.post(
        "/api/sessions/observations", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code in (200, 400)
    assert worker.client.get("/api/health").status_code == 200


def test_admin_shutdown_requires_token_and_stops_the_server(data_dir: Path) -> None:
    import httpx2

    with running_worker() as worker:
        assert httpx2.post(f"{worker.base}/api/admin/shutdown").status_code == 401
        response = worker.client.post("/api/admin/shutdown", params={"reason": "test"})
        assert response.json() == {"stopping": True, "pid": worker.state.pid}
        deadline = 50
        while deadline:
            try:
                httpx2.get(f"{worker.base}/api/health", timeout=0.2)
            except httpx2.TransportError:
                break
            threading.Event().wait(0.1)
            deadline -= 1
        assert deadline, "server kept answering after shutdown"


def test_events_from_inside_the_data_dir_are_never_memory(
    worker: RunningWorker, data_dir: Path
) -> None:
    observer = data_dir / "observer-sessions"
    observer.mkdir(parents=True, exist_ok=True)
    result = init(worker, "compress these events", cwd=str(observer))
    assert (result["status"], result["reason"]) == ("skipped", "project_excluded")
    assert tool(worker, cwd=str(observer))["reason"] == "project_excluded"


def test_ingest_waits_on_a_thread_when_another_process_holds_the_database(
    worker: RunningWorker,
) -> None:
    """Ingest runs on the event loop only while the writer is free: behind another process's
    write lock it moves to a thread, so the loop keeps answering and the event still lands."""
    import threading
    import time

    from claude_mem.store.db import connect

    init(worker, "warm the project cache")
    db = worker.state.db
    assert db is not None
    other = connect(db.path)
    other.execute("BEGIN IMMEDIATE")
    answers: list[int] = []
    event = {"host_session_id": "s1", "cwd": "/work/proj", "tool_name": "Read",
             "tool_use_id": "t-locked", "tool_input": {"file_path": "/work/proj/a.py"},
             "tool_response": "x"}  # fmt: skip
    poster = threading.Thread(
        target=lambda: answers.append(
            worker.client.post("/api/sessions/observations", json=event).status_code
        )
    )
    poster.start()
    time.sleep(0.3)
    # The loop is not stuck behind the lock: a stuck inline ingest would fail its write (the
    # lock is held until after this answer), and the event would not land with a 200.
    assert worker.client.get("/api/health").status_code == 200
    assert answers == []  # still waiting for the lock
    other.execute("ROLLBACK")
    other.close()
    poster.join(10)
    assert answers == [200]
    rows = db.read().execute("SELECT count(*) FROM tool_uses WHERE tool_use_id = 't-locked'")
    assert rows.fetchone()[0] == 1
