"""`claude-mem show ID…` and `search --full`: whole records from a real store, with and
without a running worker; a teammate's pulled record shows its author in search and show.
(A team server's `T<id>`: tests/test_team_search.py::test_cli_search_team.)"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from claude_mem import cli
from claude_mem.records import Summary
from claude_mem.store import Database
from claude_mem.store.sessions import add_prompt
from claude_mem.store.summaries import insert_summary
from tests.net import free_port
from tests.store_helpers import observation, session
from tests.worker_fixtures import running_worker

T0 = 1_700_000_000_000
NARRATIVE = "parse_config_value split on every '=' so values holding one lost their tail."
FACTS = ["values may contain '='", "split at the first '=' only"]


def seed(db: Database) -> tuple[int, int, int]:
    """An observation, a summary and a prompt of one session: their ids."""
    sid = session(db, "s-1", project="proj")
    obs = observation(
        db, sid, type="bugfix", title="Fix parse_config_value crash", subtitle="config loader",
        narrative=NARRATIVE, facts=FACTS, concepts=["gotcha"],
        files_modified=["src/conf/loader.py"], files_read=["src/conf/env.py"], created_at=T0,
    )  # fmt: skip
    with db.write() as conn:
        prompt = add_prompt(conn, sid, "Why do config values lose their tail?", now=T0).prompt_id
        summary = insert_summary(
            conn, Summary(session_id=sid, project="proj", request="Fix config parsing",
                          learned="Values may hold '='.", completed="Split once.",
                          created_at=T0 + 1000),
        )  # fmt: skip
    assert summary is not None
    return obs, summary, prompt


def shown(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["show", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("worker", [False, True])
def test_show_prints_each_kind_whole(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    worker: bool,
) -> None:  # fmt: skip
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(free_port()))  # no worker there
    with contextlib.ExitStack() as stack:
        if worker:
            running = stack.enter_context(running_worker())
            monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(running.port))
        obs, summary, prompt = seed(Database())
        code, out, err = shown(capsys, str(obs), f"S{summary}", f"#P{prompt}")
    assert (code, err) == (0, "")
    assert out.splitlines()[:4] == [
        f"{obs}  ·  bugfix  ·  2023-11-14 22:13 UTC  ·  project proj",
        "Fix parse_config_value crash",
        "config loader",
        "",
    ]
    for part in (NARRATIVE, "Facts:\n  - values may contain '='\n  - split at the first '=' only",
                 "Files modified: src/conf/loader.py", "Files read: src/conf/env.py",
                 "Concepts: gotcha",
                 f"S{summary}  ·  summary  ·  2023-11-14 22:13 UTC  ·  project proj",
                 "Request:\n  Fix config parsing\nLearned:\n  Values may hold '='.",
                 f"P{prompt}  ·  prompt 1 of session 1  ·  2023-11-14 22:13 UTC  ·  project proj"
                 "\nWhy do config values lose their tail?"):  # fmt: skip
        assert part in out
    assert cli.main(["show", f"s{summary}", str(obs), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["errors"] == []
    assert [(r["label"], r["kind"]) for r in found["records"]] == [
        (f"S{summary}", "summary"), (str(obs), "observation")
    ]  # fmt: skip
    assert found["records"][1]["narrative"] == NARRATIVE
    assert found["records"][1]["facts"] == FACTS


def test_an_id_that_names_nothing_is_an_error_and_the_others_are_still_shown(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(free_port()))
    obs, _, _ = seed(Database())
    code, out, err = shown(capsys, "999", str(obs), "S999", "abc")
    assert code == 1
    assert out.startswith(f"{obs}  ·  bugfix")
    assert err.splitlines() == [
        "claude-mem show: 'abc' is not a record id: 12 (observation), S3 (summary), P7 (prompt)"
        " or T12 (team server)",
        "claude-mem show: no observation 999",
        "claude-mem show: no summary S999",
    ]
    assert cli.main(["show", "P999", "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == {"records": [], "errors": ["no prompt P999"]}
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "show whole records by the ids search prints" in capsys.readouterr().out


def test_search_full_shows_each_hit_whole(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(free_port()))
    obs, _, _ = seed(Database())
    assert cli.main(["search", "parse_config_value", "--full"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{obs}  ·  bugfix  ·  ")
    assert NARRATIVE in out
    assert "  - split at the first '=' only" in out
    assert out.endswith("\n\n1 result, fulltext search via the store\n")
    assert cli.main(["search", "parse_config_value", "--full", "--json"]) == 0
    hit = json.loads(capsys.readouterr().out)["hits"][0]
    assert (hit["label"], hit["record"]["narrative"], hit["record"]["facts"]) == (
        str(obs), NARRATIVE, FACTS
    )  # fmt: skip
    assert cli.main(["search", "parse_config_value", "--json"]) == 0
    assert "record" not in json.loads(capsys.readouterr().out)["hits"][0]


def test_a_teammates_record_shows_its_author_beside_its_id(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(free_port()))
    monkeypatch.setenv("COLUMNS", "160")
    db = Database()
    seed(db)
    sid = session(db, "team", project="proj")
    theirs = observation(
        db, sid, type="decision", title="Config values keep every '='", source="team",
        author="alice", origin_id="m2/observation/5", created_at=T0 + 5000,
    )  # fmt: skip
    assert cli.main(["search", "config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "Type", "Time", "(UTC)", "Project", "Author", "Title"]
    row = next(line for line in lines if line.startswith(f"{theirs} "))
    assert row.split()[5] == "alice"  # its own column, the ID kept
    assert row.endswith("  Config values keep every '='")
    assert cli.main(["search", "config", "--json"]) == 0
    by_label = {hit["label"]: hit for hit in json.loads(capsys.readouterr().out)["hits"]}
    assert by_label[str(theirs)]["author"] == "alice"
    assert all(hit["author"] is None for label, hit in by_label.items() if label != str(theirs))
    code, out, _ = shown(capsys, str(theirs))
    assert code == 0
    assert out.splitlines()[0].endswith("  ·  project proj  ·  by alice")
    # With no teammate's record among the hits, no Author column.
    assert cli.main(["search", "parse_config_value"]) == 0
    assert "Author" not in capsys.readouterr().out
