"""The project's git history where it helps: a real repository made with `git`, imported, then
used by a real worker — kept out of the session-start context, labelled as history in search
and injection, linked from a unit that edits code a commit explains, and superseded by a
later session's own decision about the same thing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_mem.history.importer import import_history
from claude_mem.mcp.tools import format_search
from claude_mem.pipeline import consumer
from claude_mem.pipeline.local.decisions import subject_keys
from claude_mem.records import Observation
from claude_mem.store import Database
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session
from claude_mem.store.supersede import settle
from tests.git_repos import Repo, epoch
from tests.worker_fixtures import RunningWorker, running_worker

RETRY = """\
import time


def post(batch):
    for attempt in range(retry_limit()):
        time.sleep(attempt)


def retry_limit():
    # How often a batch is posted again.
    # The gateway counts every attempt.
    # Above its limit it bans the client.
    return {limit}


def batch_size():
    # How many payments go in one batch.
    # The ledger times out on bigger ones.
    # It has no way to say so.
    return {size}
"""
RETRY_MESSAGE = """Keep the retry count at 3

The gateway bans clients above it. We keep it at 3 on purpose, never raise it."""
BATCH_MESSAGE = """Bound the batch size to 100

The ledger times out on bigger batches and never says so."""


@pytest.fixture
def worker(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningWorker]:
    monkeypatch.setattr(consumer, "POLL_S", 0.05)
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    with running_worker() as running:
        yield running


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """ledger: a poster added, its retry count fixed (a decision), then its batch size."""
    ledger = Repo(tmp_path / "ledger")
    post = "src/post.py"
    ledger.commit({post: RETRY.format(limit=5, size=500)}, "Add the batch poster",
                  date=epoch("2023-01-10T10:00:00+00:00"))  # fmt: skip
    ledger.commit({post: RETRY.format(limit=3, size=500)}, RETRY_MESSAGE,
                  date=epoch("2023-04-02T10:00:00+00:00"))  # fmt: skip
    ledger.commit({post: RETRY.format(limit=3, size=100)}, BATCH_MESSAGE,
                  date=epoch("2023-05-01T10:00:00+00:00"))  # fmt: skip
    return ledger.path


def db(worker: RunningWorker) -> Database:
    assert worker.state.db is not None
    return worker.state.db


def imported(worker: RunningWorker, repo: Path) -> dict[str, dict[str, Any]]:
    """Import `repo`'s history; its commit observations by title."""
    assert import_history(db(worker), str(repo)).commits == 3
    rows = (
        db(worker)
        .read()
        .execute(
            "SELECT o.id, o.title, o.type, o.superseded_by, g.sha FROM observations o"
            " JOIN git_commits g ON g.observation_id = o.id"
        )
    )
    return {row["title"]: dict(row) for row in rows}


def session_observation(worker: RunningWorker, host: str, at: int, **fields: Any) -> int:
    """A session's observation in ledger, stored as the pipeline stores one (then settled)."""
    with db(worker).write() as conn:
        sid = ensure_session(conn, platform="claude-code", host_session_id=host,
                             project="ledger")  # fmt: skip
        obs_id, _ = insert_observation(
            conn, Observation(session_id=sid, project="ledger", created_at=at, **fields)
        )
        return settle(conn, obs_id)


def decision(title: str, narrative: str) -> dict[str, Any]:
    return {"type": "decision", "title": title, "narrative": narrative,
            "concepts": subject_keys(f"{title}\n{narrative}", ["src/post.py"], [])}  # fmt: skip


def test_commits_stay_out_of_the_session_start_context(worker: RunningWorker, repo: Path) -> None:
    commits = imported(worker, repo)
    assert commits[RETRY_MESSAGE.splitlines()[0]]["type"] == "decision"
    session_observation(
        worker, "s1", 1_700_000_000_000, type="change", title="Logged each posted batch",
        files_modified=["src/post.py"],
    )  # fmt: skip
    text = worker.client.get("/api/context/inject", params={"cwd": str(repo)}).text
    assert "Logged each posted batch" in text
    for title in commits:
        assert title not in text  # neither the decision nor the other commits
    # History alone makes no session-start context.
    other = Repo(repo.parent / "quiet")
    other.commit({"a.py": "x = 3\n"}, RETRY_MESSAGE, date=epoch("2023-04-02T10:00:00+00:00"))
    import_history(db(worker), str(other.path))
    quiet = worker.client.get("/api/context/inject", params={"cwd": str(other.path)}).text
    assert "Keep the retry count" not in quiet


def test_search_hits_are_labelled_as_history_everywhere_they_are_shown(
    worker: RunningWorker, repo: Path
) -> None:
    commits = imported(worker, repo)
    retry = commits["Keep the retry count at 3"]
    own = session_observation(worker, "s1", 1_700_000_000_000, type="discovery",
                              title="The gateway retry count is read at start")  # fmt: skip
    params = {"query": "gateway retry count", "project": "ledger"}
    hits = worker.client.get("/api/search", params=params).json()["hits"]
    by_id = {hit["id"]: hit for hit in hits}
    assert by_id[retry["id"]]["source"] == "git"
    assert by_id[retry["id"]]["commit"] == retry["sha"]
    assert by_id[own]["source"] == "hooks"
    assert by_id[own]["commit"] is None
    label = f"decision · history {retry['sha'][:7]}"
    text = worker.client.get("/api/search", params={**params, "format": "text"}).json()["text"]
    row = next(line for line in text.splitlines() if line.startswith(f"| #{retry['id']} |"))
    assert f"| {label} |" in row
    mine = next(line for line in text.splitlines() if line.startswith(f"| #{own} |"))
    assert "| discovery |" in mine
    assert "history" not in mine
    mcp = format_search(worker.client.get("/api/search", params=params).json(), "gateway")
    assert f"  {label}  Keep the retry count at 3" in mcp
    injected = worker.client.post(
        "/api/context/semantic", json={"q": "why is the gateway retry count 3?", "cwd": str(repo)}
    ).json()["context"]
    assert f"[{label}] Keep the retry count at 3" in injected


def test_a_commit_without_a_body_is_injected_with_its_hash_once(
    worker: RunningWorker, repo: Path
) -> None:
    poster = imported(worker, repo)["Add the batch poster"]  # a subject, no body
    injected = worker.client.post(
        "/api/context/semantic", json={"q": "when was the batch poster added?", "cwd": str(repo)}
    ).json()["context"]
    lines = injected.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith(f"- #{poster['id']} "))
    assert f"history {poster['sha'][:7]}] Add the batch poster" in lines[at]
    assert poster["sha"] not in injected  # the short hash is enough: never the full one beside
    assert lines[at + 1].startswith("  added src/post.py (+")  # the gist: what it changed


def start(worker: RunningWorker, repo: Path, prompt: str) -> None:
    body = {"host_session_id": "s-edit", "cwd": str(repo), "prompt": prompt}
    worker.client.post("/api/sessions/init", json=body).raise_for_status()


def edit_event(repo: Path, n: int, old: str, new: str) -> dict[str, Any]:
    return {"host_session_id": "s-edit", "cwd": str(repo), "tool_name": "Edit",
            "tool_use_id": f"t{n}",
            "tool_input": {"file_path": str(repo / "src" / "post.py"), "old_string": old,
                           "new_string": new},
            "tool_response": {"success": True}}  # fmt: skip


def stored_units(worker: RunningWorker) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 15
    while True:
        queue = worker.client.get("/api/stats").json()["queue"]
        if queue["pending"] == 0 and queue["processing"] == 0:
            break
        assert time.monotonic() < deadline, queue
        time.sleep(0.05)
    items = worker.client.get("/api/observations", params={"project": "ledger"}).json()["items"]
    return [item for item in items if item["source"] != "git"]


def test_a_unit_that_edits_code_a_commit_explains_names_the_commit(
    worker: RunningWorker, repo: Path
) -> None:
    commits = imported(worker, repo)
    retry, batch = commits["Keep the retry count at 3"], commits["Bound the batch size to 100"]
    client = worker.client
    start(worker, repo, "raise the retry limit")
    event = edit_event(repo, 1, "def retry_limit():\n    return 3",
                       "def retry_limit():\n    return 4")  # fmt: skip
    client.post("/api/sessions/observations", json=event).raise_for_status()
    (unit,) = stored_units(worker)
    facts = [f for f in unit["facts"] if f.startswith("explained by commit")]
    # The newest commit with a reason is the batch one; the retry one touches what it edits.
    assert "retry_limit" in " ".join(unit["facts"])
    assert facts == [f"explained by commit {retry['sha'][:7]}: Keep the retry count at 3"]
    assert batch["sha"][:7] not in " ".join(unit["facts"])


def test_a_unit_naming_no_symbol_gets_the_newest_commit_with_a_reason(
    worker: RunningWorker, repo: Path
) -> None:
    commits = imported(worker, repo)
    batch = commits["Bound the batch size to 100"]
    client = worker.client
    start(worker, repo, "reword a comment")
    event = edit_event(repo, 2, "# It has no way to say so.", "# It cannot say so.")
    client.post("/api/sessions/observations", json=event).raise_for_status()
    (unit,) = stored_units(worker)
    facts = [f for f in unit["facts"] if f.startswith("explained by commit")]
    assert facts == [f"explained by commit {batch['sha'][:7]}: Bound the batch size to 100"]


def test_a_file_no_commit_changed_gets_no_link(worker: RunningWorker, repo: Path) -> None:
    imported(worker, repo)
    client = worker.client
    start(worker, repo, "add notes")
    event = edit_event(repo, 3, "a", "b")
    event["tool_input"]["file_path"] = str(repo / "NOTES.md")
    client.post("/api/sessions/observations", json=event).raise_for_status()
    (unit,) = stored_units(worker)
    assert not any(f.startswith("explained by commit") for f in unit["facts"])


def test_a_later_sessions_decision_supersedes_the_commits(
    worker: RunningWorker, repo: Path
) -> None:
    commits = imported(worker, repo)
    retry = commits["Keep the retry count at 3"]
    later = session_observation(worker, "s-later", 1_700_000_000_000, **decision(
        "Keep the retry count at 5 now", "The gateway raised its limit, so the retry count "
        "is 5 from now on."))  # fmt: skip
    superseded = (
        db(worker)
        .read()
        .execute("SELECT superseded_by FROM observations WHERE id = ?", (retry["id"],))
    )
    assert superseded.fetchone()[0] == later
    hits = worker.client.get("/api/search", params={"query": "retry count"}).json()["hits"]
    ids = [hit["id"] for hit in hits]
    assert ids.index(later) < ids.index(retry["id"])


def test_history_read_after_the_sessions_takes_its_place_in_time(
    worker: RunningWorker, repo: Path
) -> None:
    """The import stores old commits after newer sessions: time, not insertion, decides."""
    rule = decision("Keep the retry count at 2", "The gateway counts each retry count against us.")
    earlier = session_observation(worker, "s-early", 1_600_000_000_000, **rule)
    retry = imported(worker, repo)["Keep the retry count at 3"]
    assert retry["superseded_by"] is None  # the commit came after that session's decision
    row = db(worker).read().execute("SELECT superseded_by FROM observations WHERE id = ?",
                                    (earlier,)).fetchone()  # fmt: skip
    assert row[0] == retry["id"]


def test_a_sessions_decision_stored_before_the_import_still_supersedes_the_commit(
    worker: RunningWorker, repo: Path
) -> None:
    later = session_observation(worker, "s-later", 1_700_000_000_000, **decision(
        "Keep the retry count at 5 now", "The gateway raised its limit, so the retry count "
        "is 5 from now on."))  # fmt: skip
    retry = imported(worker, repo)["Keep the retry count at 3"]
    assert retry["superseded_by"] == later
