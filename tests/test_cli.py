from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from claude_mem import cli, log, paths, settings
from claude_mem.store.migrations import MIGRATIONS
from tests.worker_process import CLI
from tests.worker_process import run_cli as run


def test_help_lists_commands() -> None:
    out = run("--help")
    assert out.returncode == 0
    for command in cli.COMMANDS:
        assert command in out.stdout


def test_help_imports_no_heavy_library() -> None:
    code = (
        "import sys; from claude_mem import cli; cli.build_parser();"
        "heavy=[m for m in sys.modules if m.split('.')[0] in ('rich','sqlite3','hypothesis')];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_version() -> None:
    out = run("--version")
    assert out.returncode == 0
    assert out.stdout.startswith("claude-mem-py ")


def test_doctor_on_fresh_data_dir(data_dir: Path) -> None:
    out = run("doctor", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    checks = {item["check"]: item for item in json.loads(out.stdout)}
    assert checks["full-text search"]["status"] == "ok"
    assert checks["database"]["status"] == "ok"
    assert f"latest {MIGRATIONS[-1].name}" in checks["database"]["detail"]
    assert str(data_dir) in checks["data dir"]["detail"]


def test_doctor_checks_a_configured_team_server_that_is_down(data_dir: Path) -> None:
    from tests.net import free_port

    port = free_port()  # nothing listens there
    secret = "s3cret-not-to-show"
    env = {"CLAUDE_MEM_TEAM_URL": f"postgresql://dana:{secret}@127.0.0.1:{port}/team"}
    out = run("doctor", "--json", env=env)
    assert out.returncode == 1, out.stdout
    checks = {item["check"]: item for item in json.loads(out.stdout)}
    team = checks["team"]
    assert team["status"] == "fail"
    assert team["detail"].startswith(
        f"cannot connect to the team server at postgresql://dana:***@127.0.0.1:{port}/team: "
    )
    assert "Connection refused" in team["detail"]
    assert team["detail"].endswith("team memory does not sync meanwhile (`claude-mem team status`)")
    assert "\n" not in team["detail"]
    assert secret not in out.stdout + out.stderr
    assert [item for item in checks.values() if item["status"] == "fail"] == [team]
    assert "team" not in {item["check"] for item in json.loads(run("doctor", "--json").stdout)}


def test_doctor_reports_bad_settings_and_unknown_keys(data_dir: Path) -> None:
    paths.ensure_data_dir()
    paths.settings_path().write_text(
        json.dumps({"CLAUDE_MEM_LOG_LEVEL": "nope", "CLAUDE_MEM_SOMETHING_NEW": 1})
    )
    out = run("doctor")
    assert out.returncode == 1
    assert "CLAUDE_MEM_LOG_LEVEL: 'nope' is not allowed" in out.stdout
    assert "[warn] settings" in out.stdout
    assert "CLAUDE_MEM_SOMETHING_NEW: unknown key" in out.stdout


def test_doctor_fails_on_database_from_newer_version(data_dir: Path) -> None:
    from claude_mem.store import Database
    from claude_mem.store.db import connect

    Database().close()
    conn = connect(paths.db_path())
    conn.execute("INSERT INTO schema_migrations VALUES ('9999_new', 1)")
    conn.close()
    out = run("doctor")
    assert out.returncode == 1
    assert "newer claude-mem" in out.stdout


def test_status_counts(data_dir: Path) -> None:
    from claude_mem.store import Database
    from tests.store_helpers import observation, session

    with Database() as db:
        observation(db, session(db, project="alpha"))
    out = run("status", "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["counts"]["observations"] == 1
    assert info["projects"] == ["alpha"]
    text = run("status").stdout
    assert "memory        1 session, 0 prompts, 1 observation, 0 summaries\n" in text
    assert "alpha" in text


def test_logs_tails_todays_file(data_dir: Path) -> None:
    assert "no log yet" in run("logs").stderr
    for i in range(5):
        log.info("test", f"event {i}")
    out = run("logs", "-n", "2")
    assert out.returncode == 0
    assert [line.split("] ")[1] for line in out.stdout.splitlines()] == ["event 3", "event 4"]


def test_logs_follow_prints_new_lines(data_dir: Path) -> None:
    log.info("test", "before")
    proc = subprocess.Popen(
        [str(CLI), "logs", "-f", "-n", "1"], stdout=subprocess.PIPE, text=True, env=os.environ
    )
    try:
        assert proc.stdout is not None
        assert "before" in proc.stdout.readline()
        time.sleep(0.2)
        log.info("test", "after")
        assert "after" in proc.stdout.readline()
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_settings_set_get_and_validation(data_dir: Path) -> None:
    out = run("settings", "set", "CLAUDE_MEM_CONTEXT_OBSERVATIONS", "30")
    assert out.returncode == 0
    assert run("settings", "get", "CLAUDE_MEM_CONTEXT_OBSERVATIONS").stdout.strip() == "30"
    bad = run("settings", "set", "CLAUDE_MEM_CONTEXT_OBSERVATIONS", "1000")
    assert bad.returncode == 2
    assert "expected a whole number from 0 to 200" in bad.stderr
    assert settings.load()["CLAUDE_MEM_CONTEXT_OBSERVATIONS"] == 30
    assert run("settings", "get", "NOPE").returncode == 2
    listing = run("settings", "list").stdout
    assert "CLAUDE_MEM_CONTEXT_OBSERVATIONS=30  (file)" in listing


def test_settings_list_masks_secrets(data_dir: Path) -> None:
    out = run("settings", "list", env={"CLAUDE_MEM_OPENAI_API_KEY": "sk-live-123"})
    assert "sk-live-123" not in out.stdout
    assert "CLAUDE_MEM_OPENAI_API_KEY=********  (env)" in out.stdout


@pytest.mark.parametrize("argv", [["--help"], []])
def test_main_in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    if argv:
        with pytest.raises(SystemExit) as exit_info:
            cli.main(argv)
        assert exit_info.value.code == 0
    else:
        assert cli.main(argv) == 0
    assert "COMMAND" in capsys.readouterr().out


def test_doctor_reports_dead_letters_and_unknown_provider(data_dir: Path) -> None:
    from claude_mem.store import Database
    from claude_mem.store.queue import claim, enqueue, fail
    from tests.store_helpers import session

    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            item, _ = enqueue(conn, sid, "observation", {}, dedup_key="x")
            claim(conn)
            fail(conn, item, "boom", max_attempts=1)
    out = run("doctor", env={"CLAUDE_MEM_PROVIDER": "nonexistent"})
    assert out.returncode == 1
    assert "[warn] queue              0 pending, 1 dead" in out.stdout
    assert (
        "[FAIL] settings           CLAUDE_MEM_PROVIDER: unknown provider 'nonexistent'; "
        "installed: anthropic, claude-agent-sdk, gemini, local, openai-compatible"
    ) in out.stdout


def test_queue_command_lists_retries_and_drops_dead_rows(data_dir: Path) -> None:
    from claude_mem.store import Database
    from claude_mem.store.queue import claim, counts, enqueue, fail
    from tests.store_helpers import session

    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            ids = [enqueue(conn, sid, "observation", {}, dedup_key=k)[0] for k in "ab"]
            claim(conn)
            for item in ids:
                fail(conn, item, f"provider said no to {item}", max_attempts=1)
    listing = run("queue")
    assert "0 pending, 0 processing, 2 dead" in listing.stdout
    assert f"provider said no to {ids[0]}" in listing.stdout
    assert run("queue", "retry", str(ids[0])).stdout.strip() == "1 dead row queued again"
    refused = run("queue", "drop")  # no ids: nothing is dropped without --all
    assert refused.returncode == 2
    assert "--all" in refused.stderr
    assert "dropped" not in refused.stdout
    missing = run("queue", "drop", "999", str(ids[1]))
    assert missing.returncode == 1
    assert f"no dead row 999 (dead rows: {ids[1]})" in missing.stderr
    not_dead = run("queue", "retry", str(ids[0]))  # queued again above: pending, not dead
    assert not_dead.returncode == 1
    assert f"no dead row {ids[0]}" in not_dead.stderr
    with Database() as db:
        assert counts(db.read()) == {"pending": 1, "processing": 0, "dead": 1}
    assert run("queue", "drop", "--all").stdout.strip() == "1 dead row dropped"
    with Database() as db:
        assert counts(db.read()) == {"pending": 1, "processing": 0, "dead": 0}


def test_usage_command_reports_spend(data_dir: Path) -> None:
    from claude_mem.store import Database, usage
    from tests.store_helpers import session

    assert "compressed offline" in run("usage").stdout
    with Database() as db:
        sid = session(db)
        with db.write() as conn:
            for _ in range(2):
                usage.record(conn, session_id=sid, provider="anthropic", model="haiku",
                             input_tokens=1200, output_tokens=300)  # fmt: skip
    out = run("usage")
    assert "today: 3,000 of 500,000 tokens" in out.stdout
    assert "anthropic" in out.stdout
    assert "2,400" in out.stdout
    data = json.loads(run("usage", "--json").stdout)
    assert data["rows"][0]["calls"] == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["status", "--json"],
        ["search", "rounding bug"],
        ["doctor"],
        ["worker", "start"],
        ["worker", "status"],
        ["settings", "set", "CLAUDE_MEM_LOG_LEVEL", "DEBUG"],
        ["queue"],
        ["export"],
    ],
)
def test_a_data_dir_that_is_a_file_is_one_clear_error(tmp_path: Path, argv: list[str]) -> None:
    not_a_dir = tmp_path / "memory"
    not_a_dir.write_text("")
    out = run(*argv, env={"CLAUDE_MEM_DATA_DIR": str(not_a_dir)})
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stderr == f"error: data dir {not_a_dir} is not a directory\n"
    assert not_a_dir.is_file()


def test_a_file_above_the_data_dir_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = run("status", env={"CLAUDE_MEM_DATA_DIR": str(blocker / "data")})
    assert out.returncode == 1
    assert out.stderr == (
        f"error: data dir {blocker / 'data'} is not a directory ({blocker} is not a directory)\n"
    )


def test_doctor_checks_name_a_data_dir_that_is_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_mem.commands import doctor

    not_a_dir = tmp_path / "memory"
    not_a_dir.write_text("")
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(not_a_dir))
    assert doctor.checks() == [
        {
            "check": "data dir",
            "status": "fail",
            "detail": f"data dir {not_a_dir} is not a directory",
        }
    ]


def test_status_counts_the_wal_and_says_whether_the_worker_runs(data_dir: Path) -> None:
    import sqlite3

    from claude_mem.store import Database
    from tests.net import free_port
    from tests.worker_fixtures import running_worker

    with Database():
        pass  # schema in place
    holder = sqlite3.connect(data_dir / "claude-mem.db")
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    holder.execute("CREATE TABLE filler (x)")
    holder.executemany("INSERT INTO filler VALUES (?)", [("x" * 1000,)] * 500)
    holder.commit()
    try:
        wal = (data_dir / "claude-mem.db-wal").stat().st_size
        assert wal > 400_000
        port = {"CLAUDE_MEM_WORKER_PORT": str(free_port())}
        info = json.loads(run("status", "--json", env=port).stdout)
        files = info["database_files"]
        assert files["wal"] == wal
        assert info["database_bytes"] == files["db"] + files["wal"] + files["shm"]
        assert info["worker"]["running"] is False
        text = run("status", env=port).stdout
        assert f"of which {wal:,} in the WAL" in text
        assert "worker        not running" in text
    finally:
        holder.close()
    with running_worker() as worker:
        env = {"CLAUDE_MEM_WORKER_PORT": str(worker.port), "CLAUDE_MEM_EMBEDDING_MODEL": "none"}
        text = run("status", env=env).stdout
        assert f"worker        running, pid {os.getpid()}, port {worker.port}" in text


def test_doctor_says_a_missing_settings_file_is_absent(data_dir: Path) -> None:
    out = run("doctor", "--json")
    settings_checks = [c for c in json.loads(out.stdout) if c["check"] == "settings"]
    assert settings_checks == [
        {
            "check": "settings",
            "status": "ok",
            "detail": f"{data_dir / 'settings.json'} absent; defaults apply",
        }
    ]


def test_viewer_says_when_it_starts_the_worker(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.worker_process import worker_env

    for env in worker_env(data_dir, monkeypatch):
        first = env.cli("viewer")
        assert first.returncode == 0, first.stderr
        assert "/auth?code=" in first.stdout
        health = env.health()
        assert health is not None
        assert f"started the worker (pid {health['pid']}, port {env.port})" in first.stderr
        second = env.cli("viewer")
        assert second.returncode == 0, second.stderr
        assert "started" not in second.stderr
