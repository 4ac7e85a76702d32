"""Nothing lost while the worker is down: a killed worker's missed events come back from the
session's transcript, and events hooks could not deliver at all come back from the spool."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_mem import __version__, paths
from claude_mem.worker import lifecycle
from tests.net import DeadPort, free_port, worker_pids
from tests.polling import wait_until
from tests.test_hooks_process import answer, base_env, hook
from tests.worker_process import run_cli

SESSION = "9d1c2b4e-0000-4a5b-8c7d-recovery0001"


class Transcript:
    """A Claude Code transcript written line by line as the CLI writes it."""

    def __init__(self, path: Path, cwd: str) -> None:
        self.path, self.cwd = path, cwd
        path.write_text("")

    def _line(self, kind: str, content: object, **extra: object) -> None:
        line = {"type": kind, "message": {"role": kind, "content": content}, "cwd": self.cwd,
                "sessionId": SESSION, "isSidechain": False, **extra}  # fmt: skip
        with self.path.open("a") as handle:
            handle.write(json.dumps(line) + "\n")

    def prompt(self, text: str) -> None:
        self._line("user", text)

    def say(self, text: str) -> None:
        self._line("assistant", [{"type": "text", "text": text}])

    def call(self, n: int) -> dict[str, Any]:
        """Tool call `n` (a Bash command) and its result; the PostToolUse payload it makes."""
        tool_input = {"command": f"echo step-{n}", "description": f"Step {n}"}
        response = {"stdout": f"step-{n}", "stderr": "", "interrupted": False}
        self._line("assistant", [{"type": "tool_use", "id": f"toolu_rec_{n}", "name": "Bash",
                                  "input": tool_input}])  # fmt: skip
        self._line("user", [{"tool_use_id": f"toolu_rec_{n}", "type": "tool_result",
                             "content": f"step-{n}"}], toolUseResult=response)  # fmt: skip
        return {
            "session_id": SESSION, "transcript_path": str(self.path), "cwd": self.cwd,
            "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": tool_input,
            "tool_response": response, "tool_use_id": f"toolu_rec_{n}",
        }  # fmt: skip


def query(data_dir: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{data_dir / 'claude-mem.db'}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def tool_rows(data_dir: Path) -> list[tuple[str, int]]:
    """The stored tool events; none while a starting worker has not made its tables yet."""
    try:
        return query(data_dir, "SELECT tool_use_id, prompt_number FROM tool_uses ORDER BY id")
    except sqlite3.OperationalError:
        return []


@pytest.fixture
def env(data_dir: Path, tmp_path: Path) -> Iterator[dict[str, str]]:
    """What a Claude Code hook process gets; the workers it starts are killed afterwards."""
    home = tmp_path / "home"
    home.mkdir()
    data_dir.mkdir(mode=0o700, exist_ok=True)
    (data_dir / "install-version").write_text(__version__ + "\n")
    vars = base_env(data_dir, free_port(), home)
    vars.update(
        CLAUDE_MEM_EMBEDDING_MODEL="none",
        CLAUDE_MEM_GIT_HISTORY="false",
        CLAUDE_MEM_HOOK_TIMEOUT_MS="30000",
        CLAUDE_MEM_HOOK_FAIL_LOUD_THRESHOLD="1000",
    )
    yield vars
    run_cli("worker", "stop", env=vars)
    leaked = worker_pids(data_dir)
    for pid in leaked:
        os.kill(pid, signal.SIGKILL)
    assert not leaked, f"worker processes leaked: {leaked}"


def fire(event: str, payload: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    done = hook("claude-code", event, payload, env)
    assert done.returncode == 0, done.stderr
    return answer(done)


def test_a_worker_killed_half_way_loses_nothing_and_doubles_nothing(
    env: dict[str, str], tmp_path: Path, data_dir: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    talk = Transcript(tmp_path / "home" / f"{SESSION}.jsonl", str(project))
    base = {"session_id": SESSION, "transcript_path": str(talk.path), "cwd": str(project)}
    fire("session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"}, env)
    fire("user-prompt-submit", {**base, "prompt": "List the steps"}, env)
    talk.prompt("List the steps")
    for n in (1, 2):  # delivered while the worker runs
        fire("post-tool-use", talk.call(n), env)
    pid = lifecycle.read_pid_info()["pid"]  # type: ignore[index]  # the worker wrote it
    os.kill(int(pid), signal.SIGKILL)
    assert wait_until(lambda: not worker_pids(data_dir))
    for n in (3, 4):  # an http hook would be dropped now: only the transcript has these
        talk.call(n)
    talk.say("Steps 1 to 4 ran.")
    # The next prompt's command hook restarts the worker, which recovers before taking it.
    fire("user-prompt-submit", {**base, "prompt": "Now the rest"}, env)
    talk.prompt("Now the rest")
    fire("post-tool-use", talk.call(5), env)
    expected = [("toolu_rec_1", 1), ("toolu_rec_2", 1), ("toolu_rec_3", 1), ("toolu_rec_4", 1),
                ("toolu_rec_5", 2)]  # fmt: skip
    assert wait_until(lambda: sorted(tool_rows(data_dir)) == expected), tool_rows(data_dir)
    prompts = query(data_dir, "SELECT prompt_number, text FROM user_prompts ORDER BY 1")
    assert prompts == [(1, "List the steps"), (2, "Now the rest")]
    recovered = query(data_dir, "SELECT tool_response FROM tool_uses WHERE tool_use_id = ?",
                      "toolu_rec_3")  # fmt: skip
    assert json.loads(recovered[0][0])["stdout"] == "step-3"  # the tool's response, as a hook
    # Restarting again (cleanly, then killed) re-reads nothing twice.
    assert run_cli("worker", "restart", env=env).returncode == 0
    fire("user-prompt-submit", {**base, "prompt": "And once more"}, env)
    assert sorted(tool_rows(data_dir)) == expected
    queued = query(data_dir, "SELECT COUNT(*) FROM queue WHERE kind = 'observation'")[0][0]
    linked = query(data_dir, "SELECT COUNT(*) FROM tool_uses WHERE observation_id IS NOT NULL")
    assert queued + linked[0][0] <= len(expected)


def test_events_fired_while_no_worker_can_start_all_arrive_once_it_can(
    env: dict[str, str], data_dir: Path, dead: DeadPort
) -> None:
    """The spool: a foreign program holds the port, so neither reaching nor starting works."""
    from tests.agent_hooks import AGENT_HOOKS, read_capture

    down = {**env, "CLAUDE_MEM_WORKER_PORT": str(dead.port), "CLAUDE_MEM_HOOK_TIMEOUT_MS": "500"}
    sent = read_capture(AGENT_HOOKS / "claude-code-2.1.332.jsonl")
    for event, payload in sent:  # the real Claude Code payloads, every event of a session
        done = hook("claude-code", event, payload, down)
        assert (done.returncode, done.stderr) == (0, b""), (event, done.stderr)
    spooled = (data_dir / "spool.jsonl").read_bytes().splitlines()
    kinds = [json.loads(line)["path"] for line in spooled]
    assert kinds == ["/api/sessions/init", "/api/sessions/observations",
                     "/api/sessions/observations", "/api/sessions/summarize",
                     "/api/sessions/end"]  # fmt: skip  # no context query, no file gate
    assert os.stat(data_dir / "spool.jsonl").st_mode & 0o777 == 0o600
    assert worker_pids(data_dir) == []
    dead.close()
    up = {**env, "CLAUDE_MEM_WORKER_PORT": str(dead.port)}
    assert run_cli("worker", "start", env=up).returncode == 0
    ids = sorted(p["tool_use_id"] for e, p in sent if e == "PostToolUse")
    arrived = lambda: sorted(r[0] for r in tool_rows(data_dir)) == ids  # noqa: E731
    assert wait_until(arrived), tool_rows(data_dir)
    assert wait_until(lambda: not (data_dir / "spool.jsonl").exists())
    prompts = query(data_dir, "SELECT prompt_number, text FROM user_prompts")
    assert prompts == [(1, "List the files here, then read README.txt")]
    status = query(data_dir, "SELECT status FROM sessions")
    assert status == [("completed",)]
    # A second start finds nothing left to take.
    assert run_cli("worker", "restart", env=up).returncode == 0
    assert wait_until(lambda: lifecycle.probe(dead.port, 2.0) is not None)
    assert sorted(r[0] for r in tool_rows(data_dir)) == ids
    assert len(query(data_dir, "SELECT id FROM user_prompts")) == 1


def test_a_full_spool_warns_once_counts_and_the_hook_still_exits_0(
    env: dict[str, str], data_dir: Path, dead: DeadPort
) -> None:
    down = {**env, "CLAUDE_MEM_WORKER_PORT": str(dead.port), "CLAUDE_MEM_HOOK_TIMEOUT_MS": "500",
            "CLAUDE_MEM_SPOOL_MAX_BYTES": "1500"}  # fmt: skip
    payload = {"session_id": "full-1", "cwd": "/home/dev/proj", "tool_name": "Bash",
               "tool_input": {"command": "ls"}, "tool_response": "x" * 600}  # fmt: skip
    kept = hook("claude-code", "post-tool-use", {**payload, "tool_use_id": "t1"}, down)
    assert (kept.returncode, kept.stderr) == (0, b"")
    lines = []
    for n in range(2, 5):
        done = hook("claude-code", "post-tool-use", {**payload, "tool_use_id": f"t{n}"}, down)
        assert done.returncode == 0
        lines += done.stderr.decode().splitlines()
    assert len(lines) == 1, lines  # one clear warning, then drops are only counted
    assert lines[0].startswith("claude-mem: the worker is down and the spool is full")
    state = json.loads((data_dir / "state" / "spool.json").read_text())
    assert state["dropped"] == 3
    assert len((data_dir / "spool.jsonl").read_bytes().splitlines()) == 1
    doctor = run_cli("doctor", "--json", env=down)
    check = next(c for c in json.loads(doctor.stdout) if c["check"] == "spool")
    assert check["status"] == "fail"
    assert check["detail"].startswith("3 events dropped (the spool is full")


def test_malformed_spool_lines_are_skipped_and_counted(data_dir: Path) -> None:
    from claude_mem.store import Database
    from tests.worker_fixtures import running_worker

    paths.ensure_data_dir()
    event = {"host_session_id": "m-1", "tool_name": "Read", "tool_use_id": "ok-1",
             "tool_input": {"file_path": "/tmp/a.py"}, "cwd": "/home/dev/proj"}  # fmt: skip
    good = {"v": 1, "at": 1, "method": "POST", "path": "/api/sessions/observations", "body": event}
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps([1, 2]),
        json.dumps({**good, "path": "/api/admin/shutdown"}),  # never a spooled route
        json.dumps({**good, "body": {"host_session_id": 5}}),  # fields of the wrong type
        json.dumps({**good, "body": {**event, "tool_use_id": "ok-2"}}),
        '{"v": 1, "method": "POST", "path": "/api/sessions/obs',  # a torn last line
    ]
    (data_dir / "spool.jsonl").write_text("\n".join(lines))
    with running_worker() as worker:
        recovery = worker.state.recovery
        assert recovery is not None
        assert wait_until(lambda: recovery.done)
        assert worker.client.get("/api/health").status_code == 200
    with Database() as db:
        ids = [r[0] for r in db.read().execute("SELECT tool_use_id FROM tool_uses ORDER BY id")]
    assert ids == ["ok-1", "ok-2"]
    assert not (data_dir / "spool.jsonl").exists()
    assert not (data_dir / "spool.claimed.jsonl").exists()
    log = "".join(p.read_text() for p in (data_dir / "logs").glob("*.log"))
    assert "spooled events ingested" in log
    assert "malformed=5" in log


@pytest.mark.parametrize("kind", ["fifo", "directory", "symlink"])
def test_something_else_at_the_spool_path_never_hangs_nor_crashes(
    kind: str, env: dict[str, str], data_dir: Path, dead: DeadPort, tmp_path: Path
) -> None:
    from tests.worker_fixtures import running_worker

    where = data_dir / "spool.jsonl"
    target = tmp_path / "elsewhere.jsonl"
    if kind == "fifo":
        os.mkfifo(where)
    elif kind == "directory":
        where.mkdir()
    else:
        target.write_text("")
        where.symlink_to(target)
    down = {**env, "CLAUDE_MEM_WORKER_PORT": str(dead.port), "CLAUDE_MEM_HOOK_TIMEOUT_MS": "500"}
    payload = {"session_id": "f-1", "cwd": "/home/dev/proj", "tool_name": "Bash",
               "tool_input": {"command": "ls"}, "tool_use_id": "t1"}  # fmt: skip
    done = hook("claude-code", "post-tool-use", payload, down)  # a hang fails the run's timeout
    assert done.returncode == 0
    assert b"spool" in done.stderr  # the drop is said once, as for a full spool
    assert json.loads((data_dir / "state" / "spool.json").read_text())["dropped"] == 1
    if kind == "symlink":
        assert target.read_text() == ""  # nothing written through the link
    with running_worker() as worker:  # nor does the worker choke on it at start
        recovery = worker.state.recovery
        assert recovery is not None
        assert wait_until(lambda: recovery.done)
        assert worker.client.get("/api/readiness").status_code == 200
    assert not (data_dir / "spool.claimed.jsonl").exists()


def _init(worker: Any, path: Path, prompt: str) -> None:
    body = {"host_session_id": SESSION, "cwd": "/home/dev/proj", "prompt": prompt,
            "transcript_path": str(path)}  # fmt: skip
    assert worker.client.post("/api/sessions/init", json=body).status_code == 200


def _restart_and_recover() -> None:
    from tests.worker_fixtures import running_worker

    with running_worker() as worker:
        recovery = worker.state.recovery
        assert recovery is not None
        assert wait_until(lambda: recovery.done)


def test_private_and_nomem_turns_stay_unrecorded_and_missed_prompts_come_back(
    data_dir: Path, tmp_path: Path
) -> None:
    from claude_mem.store import Database
    from tests.worker_fixtures import running_worker

    talk = Transcript(tmp_path / "t.jsonl", "/home/dev/proj")
    with running_worker() as worker:  # what the prompt hooks delivered
        _init(worker, talk.path, "List the steps")
        _init(worker, talk.path, "<private></private>")  # the hook's form of a private prompt
    talk.prompt("List the steps")
    talk.call(1)
    talk.prompt("<private>the launch plan</private>")
    talk.call(2)
    talk.prompt("#nomem just this once")  # never sent by the hook: its turn is not memory
    talk.call(3)
    talk.prompt("Back to work")  # its hook never arrived (the spool was full)
    talk.call(4)
    talk.say("Done.")
    talk.prompt("One more thing")  # nothing after it yet: its own hook may be on its way
    _restart_and_recover()
    with Database() as db:
        conn = db.read()
        tools = conn.execute("SELECT tool_use_id, prompt_number FROM tool_uses ORDER BY id")
        assert [tuple(r) for r in tools] == [("toolu_rec_1", 1), ("toolu_rec_4", 3)]
        prompts = conn.execute("SELECT prompt_number, text, is_private FROM user_prompts")
        assert [tuple(r) for r in prompts] == [
            (1, "List the steps", 0),
            (2, "", 1),
            (3, "Back to work", 0),
        ]
        offset = conn.execute("SELECT recovered_offset, recovered_turn FROM sessions").fetchone()
    last_line = talk.path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    assert tuple(offset) == (talk.path.stat().st_size - len(last_line) - 1, 3)
    raw = b"".join(p.read_bytes() for p in data_dir.glob("claude-mem.db*"))
    assert b"launch plan" not in raw
    assert b"step-3" not in raw
    _restart_and_recover()  # read again from the held prompt: nothing doubles
    with Database() as db:
        assert db.read().execute("SELECT COUNT(*) FROM tool_uses").fetchone()[0] == 2
        assert db.read().execute("SELECT COUNT(*) FROM user_prompts").fetchone()[0] == 3
    talk.call(5)  # the held prompt's turn went on: it is taken now
    talk.prompt("#nomem from here")
    talk.call(6)
    _restart_and_recover()  # stops inside the #nomem turn ...
    talk.call(7)
    _restart_and_recover()  # ... which the next start still knows to skip
    with Database() as db:
        tools = db.read().execute("SELECT tool_use_id, prompt_number FROM tool_uses ORDER BY id")
        assert [tuple(r) for r in tools] == [("toolu_rec_1", 1), ("toolu_rec_4", 3),
                                             ("toolu_rec_5", 4)]  # fmt: skip
        assert db.read().execute("SELECT COUNT(*) FROM user_prompts").fetchone()[0] == 4


def test_a_transcript_path_outside_the_rule_is_never_read(data_dir: Path, tmp_path: Path) -> None:
    from claude_mem.store import Database
    from claude_mem.transcripts.reader import read_lines
    from tests.worker_fixtures import running_worker

    allowed = Transcript(tmp_path / "ok.jsonl", "/home/dev/proj")
    allowed.prompt("List the steps")
    allowed.call(1)
    body = allowed.path.read_bytes()
    paths.ensure_data_dir()
    outside = {
        "text file": tmp_path / "notes.txt",
        "data dir": data_dir / "state-copy.jsonl",
        "link to a key": tmp_path / "key.jsonl",
        "link to /etc": tmp_path / "passwd.jsonl",
    }
    outside["text file"].write_bytes(body)
    outside["data dir"].write_bytes(body)
    (tmp_path / "id_ed25519").write_bytes(body)
    outside["link to a key"].symlink_to(tmp_path / "id_ed25519")
    outside["link to /etc"].symlink_to("/etc/passwd")
    assert read_lines(str(allowed.path), 0).lines
    for name, path in outside.items():
        assert read_lines(str(path), 0).lines == [], name
    # An API caller naming such a file gets nothing read from it; the allowed one is.
    for n, path in enumerate([*outside.values(), allowed.path]):
        with running_worker() as worker:
            body_json = {"host_session_id": f"p-{n}", "cwd": "/home/dev/proj",
                         "prompt": "List the steps", "transcript_path": str(path)}  # fmt: skip
            assert worker.client.post("/api/sessions/init", json=body_json).status_code == 200
    _restart_and_recover()
    with Database() as db:
        rows = db.read().execute(
            "SELECT s.transcript_path FROM tool_uses t JOIN sessions s ON s.id = t.session_id"
        )
        assert [r[0] for r in rows] == [str(allowed.path)]


def test_a_crash_half_way_through_the_spool_takes_nothing_twice(data_dir: Path) -> None:
    from claude_mem.store import Database

    def line(route: str, **body: object) -> bytes:
        event = {"host_session_id": "c-1", "cwd": "/home/dev/proj", **body}
        item = {"v": 1, "at": 1_000, "method": "POST", "path": route, "body": event}
        return json.dumps(item).encode() + b"\n"

    lines = [
        line("/api/sessions/init", prompt="First prompt"),
        line("/api/sessions/observations", tool_name="Bash", tool_use_id="c1",
             tool_input={"command": "ls"}),
        line("/api/sessions/init", prompt="Second prompt"),
        line("/api/sessions/observations", tool_name="Bash", tool_use_id="c2",
             tool_input={"command": "pwd"}),
    ]  # fmt: skip
    paths.ensure_data_dir()
    (data_dir / "spool.jsonl").write_bytes(b"".join(lines[:3]))
    _restart_and_recover()  # the worker that died after taking the first three lines
    (data_dir / "spool.claimed.jsonl").write_bytes(b"".join(lines))
    (data_dir / "spool.claimed.offset").write_text(str(sum(map(len, lines[:3]))))
    _restart_and_recover()
    with Database() as db:
        conn = db.read()
        prompts = [tuple(r) for r in conn.execute("SELECT prompt_number, text FROM user_prompts")]
        tools = [tuple(r) for r in conn.execute("SELECT tool_use_id, prompt_number FROM tool_uses")]
    assert prompts == [(1, "First prompt"), (2, "Second prompt")]
    assert tools == [("c1", 1), ("c2", 2)]
    assert not (data_dir / "spool.claimed.jsonl").exists()
    assert not (data_dir / "spool.claimed.offset").exists()


def test_a_turn_of_the_dead_workers_time_is_compressed_whole_with_its_recovered_events(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider_plugin: Any
) -> None:
    from tests.worker_fixtures import running_worker

    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "fixture-metered")
    monkeypatch.setenv("CLAUDE_MEM_TURN_IDLE_S", "3600")  # the turn goes on while it runs
    talk = Transcript(tmp_path / "t.jsonl", "/home/dev/proj")
    with running_worker() as worker:
        _init(worker, talk.path, "List the steps")
        talk.prompt("List the steps")
        for n in (1, 2):
            sent = talk.call(n)
            keys = ("cwd", "tool_name", "tool_input", "tool_response", "tool_use_id")
            body = {"host_session_id": SESSION, "transcript_path": str(talk.path),
                    **{key: sent[key] for key in keys}}  # fmt: skip
            assert worker.client.post("/api/sessions/observations", json=body).status_code == 200
    for n in (3, 4):  # while no worker ran
        talk.call(n)
    monkeypatch.setenv("CLAUDE_MEM_TURN_IDLE_S", "0")  # over by silence once a worker is back
    with running_worker() as worker:
        calls = provider_plugin.METERED_CALLS
        assert wait_until(lambda: sum(map(len, calls)) >= 4, timeout=30), calls
    assert [len(call) for call in calls] == [4]  # one provider call: the whole turn


def test_a_spool_written_while_the_worker_runs_is_taken_in_at_the_next_session(
    data_dir: Path,
) -> None:
    """A hook that timed out on a busy worker spools its event; the worker takes it in when
    the next session starts, not only at its own next start."""
    from claude_mem.hooks import spool
    from tests.worker_fixtures import running_worker

    paths.ensure_data_dir()
    event = {"host_session_id": "late-1", "platform": "claude-code", "tool_name": "Read",
             "tool_use_id": "late-call", "tool_input": {"file_path": "/tmp/a.py"},
             "cwd": "/home/dev/proj"}  # fmt: skip
    with running_worker() as worker:
        recovery = worker.state.recovery
        assert recovery is not None
        assert wait_until(lambda: recovery.done)
        body = json.dumps(event).encode()
        assert spool.append("POST", "/api/sessions/observations", body, 1 << 20) is None
        assert (data_dir / "spool.jsonl").exists()
        assert tool_rows(data_dir) == []  # nothing takes it in by itself...
        start = {"host_session_id": "next-1", "platform": "claude-code",
                 "cwd": "/home/dev/proj", "prompt": "what changed in the parser?"}  # fmt: skip
        assert worker.client.post("/api/sessions/init", json=start).status_code == 200
        # ...until a session starts
        assert wait_until(lambda: [r[0] for r in tool_rows(data_dir)] == ["late-call"])
        assert wait_until(lambda: not (data_dir / "spool.jsonl").exists())
        again = {**start, "host_session_id": "next-2"}
        assert worker.client.post("/api/sessions/init", json=again).status_code == 200
    assert [r[0] for r in tool_rows(data_dir)] == ["late-call"]  # once
