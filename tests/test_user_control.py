"""The user's switches: `#nomem`, `claude-mem pause|resume`, recall-only and capture-only
modes, and project exclusions on the injection side; all shown by `claude-mem status`.

Real parts throughout: a worker on loopback, the real hook process fed Claude Code payloads,
the CLI's own entry point.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from claude_mem import control
from claude_mem.cli import main
from tests.test_hooks_process import answer, hook
from tests.worker_fixtures import RunningWorker


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "ledger"
    folder.mkdir()
    return folder


@pytest.fixture
def env(hook_env: dict[str, str]) -> dict[str, str]:
    return hook_env


def prompt(env: dict[str, str], cwd: Path, session: str, text: str) -> dict[str, object]:
    payload = {"session_id": session, "cwd": str(cwd), "hook_event_name": "UserPromptSubmit",
               "prompt": text}  # fmt: skip
    done = hook("claude-code", "user-prompt-submit", payload, env)
    assert done.returncode == 0
    return answer(done)


def tool(env: dict[str, str], cwd: Path, session: str, n: int) -> None:
    payload = {
        "session_id": session, "cwd": str(cwd), "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": {"command": f"echo {n}"},
        "tool_response": {"stdout": str(n)}, "tool_use_id": f"toolu_{session}_{n}",
    }  # fmt: skip
    assert hook("claude-code", "post-tool-use", payload, env).returncode == 0


def send(worker: RunningWorker, cwd: Path, session: str, n: int) -> dict[str, object]:
    """A tool event straight to the ingest API (as any intake would send it)."""
    body = {"host_session_id": session, "cwd": str(cwd), "tool_name": "Bash",
            "tool_input": {"command": f"ls {n}"}, "tool_use_id": f"api_{session}_{n}"}  # fmt: skip
    response = worker.client.post("/api/sessions/observations", json=body)
    assert response.status_code == 200
    return response.json()


def captured(worker: RunningWorker) -> tuple[int, list[str]]:
    """(raw tool events stored, prompt texts stored)."""
    stats = worker.client.get("/api/stats").json()["counts"]
    prompts = [p["text"] for p in worker.client.get("/api/prompts").json()["items"]]
    return stats["tool_uses"], prompts


def test_nomem_prompt_pauses_its_session_until_resume(
    worker: RunningWorker, env: dict[str, str], project: Path, data_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    prompt(env, project, "s-1", "Fix the ledger retry cap")
    tool(env, project, "s-1", 1)
    assert captured(worker) == (1, ["Fix the ledger retry cap"])
    out = prompt(env, project, "s-1", "Look at my salary sheet #NoMem please")
    assert "#nomem" in str(out.get("systemMessage"))
    tool(env, project, "s-1", 2)
    prompt(env, project, "s-1", "and the next one")
    prompt(env, project, "s-2", "Other session still remembered")
    tool(env, project, "s-2", 3)
    count, prompts = captured(worker)
    assert count == 2
    assert sorted(prompts) == ["Fix the ledger retry cap", "Other session still remembered"]
    assert "salary" not in (data_dir / "claude-mem.db").read_bytes().decode("latin-1")
    assert send(worker, project, "s-1", 4)["reason"] == "paused"  # the worker enforces it too
    assert main(["resume", "--session", "s-1"]) == 0
    assert "capture resumed for session" in capsys.readouterr().out
    tool(env, project, "s-1", 5)
    assert captured(worker)[0] == 3


def test_pause_and_resume_most_recent_session_and_all(
    worker: RunningWorker, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["pause"]) == 1  # nothing recorded yet
    assert "no active session" in capsys.readouterr().err
    send(worker, project, "old", 1)
    send(worker, project, "new", 1)
    assert main(["pause"]) == 0
    said = capsys.readouterr().out
    assert "capture paused for session new (ledger, claude-code)" in said
    assert send(worker, project, "new", 2)["reason"] == "paused"
    assert send(worker, project, "old", 2)["status"] == "queued"
    assert main(["pause", "--all"]) == 0
    assert "capture paused for every session" in capsys.readouterr().out
    assert send(worker, project, "old", 3)["reason"] == "paused"
    assert send(worker, project, "brand-new", 1)["reason"] == "paused"
    assert main(["status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["paused_all"] is True
    assert status["paused_sessions"] == ["new"]
    assert main(["status"]) == 0
    assert "capture PAUSED for every session" in capsys.readouterr().out
    assert main(["resume", "--session", "2"]) == 0
    assert main(["resume", "--all"]) == 0
    assert control.pauses() == {"all": None, "sessions": {}}
    assert send(worker, project, "new", 3)["status"] == "queued"
    assert main(["resume", "--all"]) == 0
    assert "nothing was paused" in capsys.readouterr().out


def end(worker: RunningWorker, session: str) -> None:
    body = {"host_session_id": session, "platform": "claude-code", "reason": "exit"}
    assert worker.client.post("/api/sessions/end", json=body).status_code == 200


def test_pause_refuses_unknown_sessions_skips_ended_ones_and_its_undo_undoes(
    worker: RunningWorker, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    send(worker, project, "working", 1)
    send(worker, project, "finished", 1)
    end(worker, "finished")
    assert main(["pause", "--session", "999"]) == 1
    out, err = capsys.readouterr()
    assert "no session 999" in err
    assert "paused" not in out
    assert control.pauses()["sessions"] == {}
    assert main(["pause"]) == 0  # the newest session has ended: the one still going is paused
    said = capsys.readouterr().out
    assert "capture paused for session working (ledger, claude-code)" in said
    assert send(worker, project, "working", 2)["reason"] == "paused"
    # status names it by the same id, and that id is what --session takes
    assert main(["status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["paused_sessions"] == ["working"]
    assert main(["status"]) == 0
    assert "working" in capsys.readouterr().out
    # the undo it printed undoes exactly that, even after another session was paused
    undo = re.search(r"`(claude-mem resume[^`]*)`", said)
    assert undo is not None, said
    assert main(["pause", "--session", "finished"]) == 0
    capsys.readouterr()
    assert main(shlex.split(undo.group(1))[1:]) == 0
    assert "capture resumed for session working" in capsys.readouterr().out
    assert send(worker, project, "working", 3)["status"] == "queued"
    assert list(control.pauses()["sessions"]) == ["finished"]
    end(worker, "working")
    assert main(["pause"]) == 1
    assert "no active session" in capsys.readouterr().err


FIRST, SECOND = "5f2c1a9e-7d41-4c0e-9b1a-2e6f3d8c0a11", "5f2c77d0-0b9e-4f6a-8e2d-91c4a7b5e302"


def test_one_session_name_everywhere_and_a_plain_resume_lifts_pause_all(
    worker: RunningWorker, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    send(worker, project, FIRST, 1)
    send(worker, project, SECOND, 1)
    # status lists the sessions by the agent's id, the name every command takes
    assert main(["status"]) == 0
    text = capsys.readouterr().out
    assert f"sessions      {SECOND}  ledger, claude-code, active\n" in text
    assert f"              {FIRST}  ledger, claude-code, active\n" in text
    assert main(["status", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["recent_sessions"]
    assert [(s["id"], s["paused"]) for s in listed] == [(SECOND, False), (FIRST, False)]
    # the start of an id names the one session whose id starts so; a shared start is refused
    assert main(["pause", "--session", "5f2c"]) == 1
    assert f"5f2c starts several sessions' ids ({SECOND}, {FIRST})" in capsys.readouterr().err
    assert main(["pause", "--session", "5f2c1"]) == 0
    assert f"capture paused for session {FIRST} (ledger, claude-code)" in capsys.readouterr().out
    assert list(control.pauses()["sessions"]) == [FIRST]
    assert main(["resume", "--session", "5f2c1a"]) == 0
    assert f"capture resumed for session {FIRST}" in capsys.readouterr().out
    control.pause("9d0e-not-stored-yet", reason="#nomem")  # a #nomem before its session is stored
    assert main(["resume", "--session", "9d0e"]) == 0
    assert "capture resumed for session 9d0e-not-stored-yet" in capsys.readouterr().out
    # a plain resume lifts `pause --all`, even with no session going; one paused alone stays so
    assert main(["pause", "--session", SECOND]) == 0
    assert main(["pause", "--all"]) == 0
    end(worker, FIRST)
    end(worker, SECOND)
    capsys.readouterr()
    assert main(["resume"]) == 0
    said = capsys.readouterr().out
    assert "capture resumed for every session" in said
    assert f"still paused on their own: {SECOND}" in said
    assert control.pauses()["all"] is None
    assert list(control.pauses()["sessions"]) == [SECOND]
    assert send(worker, project, "brand-new", 1)["status"] == "queued"
    assert main(["resume"]) == 0  # no global pause now: the session paused last
    assert f"capture resumed for session {SECOND}" in capsys.readouterr().out
    # forget takes the same names (and still the number the viewer shows)
    assert main(["forget", "--session", "5f2c7", "--yes"]) == 0
    assert f"forgot session {SECOND} (ledger, 0 prompts, " in capsys.readouterr().out
    assert main(["forget", "--session", "5f2c", "--yes"]) == 0  # only one id starts so now
    assert f"forgot session {FIRST}" in capsys.readouterr().out
    assert main(["forget", "--session", "nope", "--yes"]) == 1
    assert "no session nope is recorded; `claude-mem status` lists" in capsys.readouterr().err


def set_mode(worker: RunningWorker, mode: str) -> None:
    response = worker.client.post("/api/settings", json={"values": {"CLAUDE_MEM_MODE": mode}})
    assert response.status_code == 200


def inject(worker: RunningWorker, cwd: Path) -> str:
    return worker.client.get("/api/context/inject", params={"cwd": str(cwd)}).text


def test_recall_only_and_capture_only_modes(
    worker: RunningWorker, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    send(worker, project, "s-1", 1)
    from claude_mem.records import Observation
    from claude_mem.store.observations import insert_observation

    db = worker.state.db
    assert db is not None
    with db.write() as conn:
        insert_observation(conn, Observation(session_id=1, project="ledger", type="bugfix",
                                                title="Fixed the retry cap"))  # fmt: skip
    set_mode(worker, "recall-only")
    assert send(worker, project, "s-1", 2)["reason"] == "recall_only"
    assert "Fixed the retry cap" in inject(worker, project)
    assert main(["status"]) == 0
    assert "recall-only: injecting, capturing nothing" in capsys.readouterr().out
    set_mode(worker, "capture-only")
    assert send(worker, project, "s-1", 3)["status"] == "queued"
    assert inject(worker, project) == ""
    start = worker.client.get("/api/context/session-start", params={"cwd": str(project)}).json()
    assert start == {"context": "", "terminal": "", "tokens": 0, "dropped": 0}
    assert main(["status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mode"] == "capture-only"
    set_mode(worker, "normal")
    start = worker.client.get("/api/context/session-start", params={"cwd": str(project)}).json()
    assert "Fixed the retry cap" in start["context"]
    assert "Fixed the retry cap" in start["terminal"]


def test_excluded_projects_get_no_injection(worker: RunningWorker, project: Path) -> None:
    from claude_mem.records import Observation
    from claude_mem.store.observations import insert_observation

    send(worker, project, "s-1", 1)
    db = worker.state.db
    assert db is not None
    with db.write() as conn:
        insert_observation(conn, Observation(session_id=1, project="ledger", type="bugfix",
                                                title="Fixed the retry cap"))  # fmt: skip
    assert "Fixed the retry cap" in inject(worker, project)
    (project / ".claude-mem-ignore").write_text("")
    assert inject(worker, project) == ""
    big = project / "notes.md"
    big.write_text("x" * 2000)
    file_query: dict[str, str | int] = {"path": str(big), "cwd": str(project), "mtime_ms": 0}
    assert worker.client.get("/api/context/file", params=file_query).text == ""
    (project / ".claude-mem-ignore").unlink()
    response = worker.client.post(
        "/api/settings", json={"values": {"CLAUDE_MEM_EXCLUDED_PROJECTS": "ledg*"}}
    )
    assert response.status_code == 200
    assert inject(worker, project) == ""
