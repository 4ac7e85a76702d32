"""Forgetting: one observation, a session, a whole project; from the CLI and the API. The
full-text and vector rows must go with the records, and nothing else may."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest

from claude_mem.cli import main
from claude_mem.records import Summary
from claude_mem.store import Database
from claude_mem.store import vectors as vector_store
from claude_mem.store.forget import forget_project
from claude_mem.store.sessions import add_prompt
from claude_mem.store.summaries import insert_summary
from tests.store_helpers import observation, session
from tests.worker_fixtures import RunningWorker

WORD = {"ledger": "zebraledger", "other": "otterother"}  # a word only each project's rows hold


def fill(db: Database, project: str, host: str) -> dict[str, int]:
    """A session of `project` with a prompt, two observations and a summary, all embedded."""
    word = WORD[project]
    sid = session(db, host, project=project)
    ids = {
        "session": sid,
        "obs": observation(
            db, sid, project=project, title=f"Fixed {word} retry", files_modified=[f"{word}.py"]
        ),
        "obs2": observation(db, sid, project=project, title=f"Read {word} notes"),
    }
    with db.write() as conn:
        ids["prompt"] = add_prompt(conn, sid, f"please fix {word}").prompt_id
        ids["summary"] = insert_summary(
            conn, Summary(session_id=sid, project=project, request=f"fix {word}")
        )
        for kind, key in (("observation", "obs"), ("observation", "obs2"),
                          ("prompt", "prompt"), ("summary", "summary")):  # fmt: skip
            assert vector_store.upsert(conn, kind, ids[key], "m", b"\x00\x00\x80?" * 4)
    return ids


def found(conn: sqlite3.Connection, word: str) -> dict[str, int]:
    """Full-text hits for `word` per table."""
    return {
        table: conn.execute(
            f"SELECT count(*) FROM {table}_fts WHERE {table}_fts MATCH ?", (word,)
        ).fetchone()[0]
        for table in ("observations", "session_summaries", "user_prompts")
    }


def indexed_files(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT path FROM observation_files")}


def vector_rows(conn: sqlite3.Connection) -> set[tuple[str, int]]:
    return {(kind, row_id) for kind, row_id in conn.execute("SELECT kind, row_id FROM vectors")}


def test_forget_project_takes_fulltext_and_vectors_and_spares_others(data_dir: Path) -> None:
    with Database() as db:
        mine = fill(db, "ledger", "a")
        theirs = fill(db, "other", "b")
        with db.write() as conn:
            counts = forget_project(conn, "ledger")
        conn = db.read()
        assert counts == {"sessions": 1, "prompts": 1, "observations": 2, "summaries": 1}
        assert found(conn, WORD["ledger"]) == dict.fromkeys(
            ("observations", "session_summaries", "user_prompts"), 0
        )
        assert found(conn, WORD["other"]) == {
            "observations": 2, "session_summaries": 1, "user_prompts": 1,
        }  # fmt: skip
        assert vector_rows(conn) == {
            ("observation", theirs["obs"]), ("observation", theirs["obs2"]),
            ("prompt", theirs["prompt"]), ("summary", theirs["summary"]),
        }  # fmt: skip
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1
        assert indexed_files(conn) == {"otterother.py"}  # the file-gate index follows
        with db.write() as conn:
            assert forget_project(conn, "ledger") == dict.fromkeys(counts, 0)
        assert db.read().execute("SELECT count(*) FROM observations WHERE id IN (?, ?)",
                                 (mine["obs"], mine["obs2"])).fetchone()[0] == 0  # fmt: skip


def test_api_forgets_observation_session_and_project(worker: RunningWorker) -> None:
    db = worker.state.db
    assert db is not None
    ledger = fill(db, "ledger", "a")
    other = fill(db, "other", "b")
    client = worker.client
    assert client.delete(f"/api/observations/{ledger['obs']}").status_code == 200
    assert ("observation", ledger["obs"]) not in vector_rows(db.read())
    assert found(db.read(), WORD["ledger"])["observations"] == 1
    assert client.delete(f"/api/sessions/{other['session']}").status_code == 200
    assert found(db.read(), WORD["other"]) == dict.fromkeys(
        ("observations", "session_summaries", "user_prompts"), 0
    )
    gone = client.delete("/api/projects", params={"name": "ledger"})
    assert gone.status_code == 200
    assert gone.json() == {
        "project": "ledger", "sessions": 1, "prompts": 1, "observations": 1, "summaries": 1,
    }  # fmt: skip
    assert vector_rows(db.read()) == set()
    assert found(db.read(), WORD["ledger"]) == dict.fromkeys(
        ("observations", "session_summaries", "user_prompts"), 0
    )
    again = client.delete("/api/projects", params={"name": "ledger"})
    assert again.status_code == 404
    assert again.json()["code"] == "not_found"
    assert client.delete("/api/projects").status_code == 400
    assert client.get("/api/projects").json()["projects"] == []


def test_cli_forgets_with_confirmation_or_yes(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with Database() as db:
        ledger = fill(db, "ledger", "a")
        fill(db, "other", "b")
    # Not a terminal and no --yes: refused, nothing deleted.
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["forget", "--project", "ledger"]) == 1
    assert "add --yes" in capsys.readouterr().err

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    assert main(["forget", "--observation", str(ledger["obs"])]) == 1
    out = capsys.readouterr().out
    assert f"Forget observation {ledger['obs']}: Fixed zebraledger retry?" in out
    assert "nothing forgotten" in out
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    assert main(["forget", "--observation", str(ledger["obs"])]) == 0
    assert f"forgot observation {ledger['obs']}" in capsys.readouterr().out
    assert main(["forget", "--observation", str(ledger["obs"]), "--yes"]) == 1
    assert "nothing to forget" in capsys.readouterr().err
    assert main(["forget", "--session", str(ledger["session"]), "--yes"]) == 0
    assert "forgot session a (ledger, 1 prompt, 1 observation)" in capsys.readouterr().out
    assert main(["forget", "--project", "other", "-y"]) == 0
    assert "forgot project other: 1 session, 1 prompt, 2 observations, 1 summary" in (
        capsys.readouterr().out
    )
    with Database() as db:
        conn = db.read()
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
        assert vector_rows(conn) == set()
        assert indexed_files(conn) == set()
        assert found(conn, WORD["other"])["observations"] == 0
