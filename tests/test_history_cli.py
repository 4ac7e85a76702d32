"""`claude-mem import --git` as a user runs it: real repositories, a real data dir, the real CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from claude_mem.store import Database
from tests.git_repos import Repo
from tests.test_privacy_turns import stored_bytes
from tests.worker_process import CLI, run_cli


def imported(*args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    done = run_cli("import", "--git", *args, "--json", env=env)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def refused(*args: str, env: dict[str, str] | None = None) -> str:
    """The CLI's complaint: exit 2, nothing on stdout, one line on stderr."""
    done = run_cli("import", *args, env=env)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    return done.stderr.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = Repo(tmp_path / "ledger")
    made.commit({"ledger.py": "def post():\n    return 1\n"}, "Add the ledger\n\nDouble entry.")
    rule = "Fix rounding in post\n\nWe must round half to even: the auditors check it."
    made.commit({"ledger.py": "def post():\n    return 2\n"}, rule)
    made.commit({"notes.md": "x\n"}, "wip")
    return made


def test_import_reports_what_it_read_and_a_rerun_adds_nothing(repo: Repo) -> None:
    first = imported(str(repo.path))
    assert first == {
        "source": str(repo.path),
        "project": "ledger",
        "imported": {"commits": 2, "rewritten": 0},
        "skipped": {"known": 0, "merge": 0, "bot": 0, "format": 0, "trivial": 1, "folded": 0},
        "pending": 0,
        "complete": True,
        "kept": 2,
        "seconds": first["seconds"],
    }
    again = imported(str(repo.path))
    assert again["imported"] == {"commits": 0, "rewritten": 0}
    assert again["complete"] is True
    assert again["kept"] == 2
    with Database() as db:
        rows = db.read().execute("SELECT type, title FROM observations ORDER BY created_at")
        assert [tuple(row) for row in rows] == [
            ("feature", "Add the ledger"),
            ("bugfix", "Fix rounding in post"),
        ]


def test_the_human_output_names_the_project_and_the_skips(repo: Repo) -> None:
    done = run_cli("import", "--git", str(repo.path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "2 commits of ledger's history imported (skipped: 1 trivial)"
    )
    again = run_cli("import", "--git", str(repo.path))
    assert again.returncode == 0, again.stderr
    assert again.stdout == "ledger's history is up to date (2 commits in memory): no new commits\n"
    repo.commit({"notes.md": "y\n"}, "wip")  # new, but no memory: said as skipped, not up to date
    third = run_cli("import", "--git", str(repo.path))
    assert third.stdout.splitlines()[0] == (
        "0 commits of ledger's history imported (skipped: 3 known, 1 trivial)"
    )
    repo.commit({"ledger.py": "def post():\n    return 3\n"}, "Post in cents\n\nNo floats.")
    run_cli("import", "--git", str(repo.path))  # new HEAD, one more commit kept
    fourth = run_cli("import", "--git", str(repo.path), "--since", "2023-01-01")
    assert fourth.stdout.startswith("ledger's history is up to date (3 commits in memory)")


def test_the_current_directory_is_the_default(repo: Repo) -> None:
    (repo.path / "src").mkdir()
    done = subprocess.run(
        [str(CLI), "import", "--git", "--json"],
        cwd=repo.path / "src", capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["imported"]["commits"] == 2


def test_since_and_max_through_the_cli(repo: Repo) -> None:
    first = repo.git("rev-list", "--reverse", "HEAD").split()[0]
    assert imported(str(repo.path), "--since", first)["imported"] == {"commits": 1, "rewritten": 0}
    assert imported(str(repo.path), "--max", "3")["skipped"] == {
        "known": 2, "merge": 0, "bot": 0, "format": 0, "trivial": 0, "folded": 0,
    }  # fmt: skip
    assert imported(str(repo.path), "--since", "2001-01-01")["complete"] is False


def test_a_secret_in_an_old_message_never_reaches_the_data_dir(repo: Repo, data_dir: Path) -> None:
    repo.commit(
        {"deploy.sh": "echo deploy\n"},
        "Deploy with key AKIAIOSFODNN7EXAMPLE\n\n"
        "The old server took password=hunter2horse on the command line.\n"
        "<private>the vault is at 10.9.8.7 behind door 42</private>\n"
        "We keep deploys manual.",
    )
    assert imported(str(repo.path))["imported"] == {"commits": 3, "rewritten": 0}
    stored = stored_bytes(data_dir)
    for secret in (b"AKIAIOSFODNN7EXAMPLE", b"hunter2horse", b"10.9.8.7", b"door 42"):
        assert secret not in stored
    with Database() as db:
        row = (
            db.read()
            .execute("SELECT title, narrative FROM observations WHERE title LIKE 'Deploy%'")
            .fetchone()
        )
    assert row[0] == "Deploy with key [REDACTED:aws-access-key]"
    assert "We keep deploys manual." in row[1]


def test_forget_then_import_brings_the_history_back(repo: Repo) -> None:
    imported(str(repo.path))
    done = run_cli("forget", "--project", "ledger", "--yes")
    assert done.returncode == 0, done.stderr
    with Database() as db:
        assert db.read().execute("SELECT count(*) FROM git_commits").fetchone()[0] == 0
    assert imported(str(repo.path))["imported"] == {"commits": 2, "rewritten": 0}


def test_a_repository_with_no_commits_imports_nothing(tmp_path: Path) -> None:
    empty = Repo(tmp_path / "empty")
    done = run_cli("import", "--git", str(empty.path))
    assert done.returncode == 0, done.stderr
    assert "no commits yet" in done.stdout
    assert imported(str(empty.path))["imported"] == {"commits": 0, "rewritten": 0}


def test_errors_are_one_clear_line_and_exit_2(repo: Repo, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert "not a git repository" in refused("--git", str(plain))
    assert "No such file or directory" in refused("--git", str(tmp_path / "missing"))
    assert "--max needs a positive number" in refused("--git", str(repo.path), "--max", "0")
    assert "only apply with --git" in refused("export.jsonl", "--since", "2024-01-01")
    assert "give no FILE" in refused("export.jsonl", "--git", str(repo.path))
    for since in ("not-a-date-or-rev", "deadbeefdeadbeef"):
        message = refused("--git", str(repo.path), "--since", since)
        assert f"--since {since!r} is neither a revision nor a date git reads" in message
    excluded = refused("--git", str(repo.path), env={"CLAUDE_MEM_EXCLUDED_PROJECTS": "**/ledg*"})
    assert "the project is excluded" in excluded
    with Database() as db:
        assert db.read().execute("SELECT count(*) FROM git_commits").fetchone()[0] == 0


def test_status_names_the_histories_read(repo: Repo) -> None:
    before = run_cli("status")
    assert "git history   none read yet" in before.stdout
    imported(str(repo.path), "--max", "2")
    partly = run_cli("status")
    assert "git history   ledger 1 commit (partly)" in partly.stdout  # the newest two: one is wip
    imported(str(repo.path))
    whole = json.loads(run_cli("status", "--json").stdout)
    assert [(h["project"], h["commits"], h["root"]) for h in whole["git_history"]] == [
        ("ledger", 2, str(repo.path))
    ]
    assert "git history   ledger 2 commits\n" in run_cli("status").stdout
    # The commits are memory, but no session the user had: status counts none.
    assert whole["counts"]["sessions"] == 0
    assert whole["recent_sessions"] == []
    assert whole["counts"]["observations"] == 2
    text = run_cli("status").stdout
    assert "memory        0 sessions, 0 prompts, 2 observations, 0 summaries\n" in text
    with Database() as db:
        from claude_mem.store import stats

        assert stats.projects(db.read())[0] | {"last_activity": 0} == {
            "name": "ledger", "sessions": 0, "observations": 2, "last_activity": 0
        }  # fmt: skip
