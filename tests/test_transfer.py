"""`claude-mem export` / `claude-mem import FILE` through the CLI on real databases: a round
trip into a fresh data dir gives identical rows and identical search results, importing twice
adds nothing, projects can be picked, and bad input changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from claude_mem.records import Observation, Summary
from claude_mem.search.hybrid import HybridSearcher
from claude_mem.store.db import Database, open_database
from claude_mem.store.observations import insert_observation
from claude_mem.store.search_queries import SearchFilters
from claude_mem.store.sessions import add_prompt, complete_session, ensure_session
from claude_mem.store.summaries import insert_summary
from claude_mem.transfer.records import FORMAT, VERSION
from tests.net import free_port, worker_pids
from tests.test_worker_lifecycle import _dir_env

BIN = Path(sys.executable).with_name("claude-mem")
T0 = 1_767_225_600_000
PRIVATE = "my private api plan"
QUERIES = ["rounding", "csv export", "preview markdown", "cart", ""]
TABLES = ("sessions", "user_prompts", "observations", "session_summaries")


def cli(*args: str, data: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ) | {"CLAUDE_MEM_DATA_DIR": str(data)}
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, env=env,
                          input=stdin, timeout=60, check=False)  # fmt: skip


def seed(db: Database) -> None:
    with db.write() as conn:
        for n, (project, host) in enumerate([("shop", "s-1"), ("shop", "s-2"), ("blog", "b-1")]):
            sid = ensure_session(conn, platform="claude-code" if n < 2 else "codex",
                                 host_session_id=host, project=project, cwd=f"/src/{project}",
                                 now=T0 + n * 1000)  # fmt: skip
            add_prompt(conn, sid, f"work on {project} <private>{PRIVATE}</private>", now=T0 + n)
            add_prompt(conn, sid, f"<private>{PRIVATE}</private>", now=T0 + n + 1)
            add_prompt(conn, sid, f"follow-up on {project}", now=T0 + n + 2)
            if n == 0:
                complete_session(conn, sid, reason="exit", now=T0 + 5000)
            for k, (kind, title, story) in enumerate([
                ("bugfix", f"Fixed {project} cart rounding", "Float sums drifted by a cent."),
                ("feature", f"CSV export for {project}", "Orders export to CSV files."),
                ("discovery", f"Markdown preview in {project}", "Posts render a preview."),
            ]):  # fmt: skip
                insert_observation(conn, Observation(
                    session_id=sid, project=project, type=kind, title=title, subtitle="sub",
                    narrative=story, facts=[f"fact {k}"], concepts=["gotcha"],
                    files_read=[f"src/{k}.py"], files_modified=[f"src/m{k}.py"],
                    prompt_number=k + 1, discovery_tokens=100 * k, agent_type="helper",
                    agent_id=f"a{k}", generated_by="local", created_at=T0 + n * 10_000 + k,
                    source="git" if k == 2 else "hooks",
                ))  # fmt: skip
            insert_summary(conn, Summary(
                session_id=sid, project=project, request=f"improve {project}",
                investigated="code", learned="rounding", completed="fixed", next_steps="tests",
                notes="n", prompt_number=3, discovery_tokens=50, generated_by="local",
                created_at=T0 + n * 10_000 + 9,
            ))  # fmt: skip


def dump(data: Path) -> dict[str, list[dict[str, Any]]]:
    os.environ["CLAUDE_MEM_DATA_DIR"] = str(data)
    with open_database() as db:
        conn = db.read()
        return {
            t: [dict(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY id")] for t in TABLES
        }


def searches(data: Path) -> list[Any]:
    os.environ["CLAUDE_MEM_DATA_DIR"] = str(data)
    with open_database() as db:
        searcher = HybridSearcher(db)
        found = [asdict(searcher.search(q, limit=50)) for q in QUERIES]
        found.append(asdict(searcher.search("cart", SearchFilters(projects=("blog",)))))
        found.append(asdict(searcher.timeline(("observation", 2), before=3, after=3)))  # type: ignore[arg-type]  # the anchor exists
    return found


def test_round_trip_into_a_fresh_data_dir_is_identical_and_idempotent(
    data_dir: Path, tmp_path: Path
) -> None:
    with open_database() as db:
        seed(db)
    exported = cli("export", data=data_dir)
    assert exported.returncode == 0, exported.stderr
    lines = exported.stdout.splitlines()
    header = json.loads(lines[0])
    assert (header["format"], header["version"]) == (FORMAT, VERSION)
    assert header["counts"] == {"session": 3, "prompt": 9, "observation": 9, "summary": 3}
    assert len(lines) == 1 + 24
    assert [json.loads(line)["kind"] for line in lines[1:4]] == ["session"] * 3
    assert PRIVATE not in exported.stdout
    records = [json.loads(line) for line in lines[1:]]
    sources = sorted(r["source"] for r in records if r["kind"] == "observation")
    assert sources == ["git"] * 3 + ["hooks"] * 6  # and re-imported as they were (dump below)
    assert "exported 3 sessions, 9 prompts, 9 observations, 3 summaries" in exported.stderr

    dump_file = tmp_path / "memory.jsonl"
    dump_file.write_text(exported.stdout)
    fresh = tmp_path / "fresh"
    imported = cli("import", str(dump_file), "--json", data=fresh)
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["imported"] == header["counts"]

    assert dump(fresh) == dump(data_dir)
    assert searches(fresh) == searches(data_dir)

    again = json.loads(cli("import", "-", "--json", data=fresh, stdin=exported.stdout).stdout)
    assert again["imported"] == {"session": 0, "prompt": 0, "observation": 0, "summary": 0}
    assert again["skipped"] == header["counts"]
    assert dump(fresh) == dump(data_dir)

    # Into a database that already holds other memory: ids are mapped, nothing collides.
    other = tmp_path / "other"
    os.environ["CLAUDE_MEM_DATA_DIR"] = str(other)
    with open_database() as db, db.write() as conn:
        sid = ensure_session(conn, platform="x", host_session_id="pre", project="pre")
        insert_observation(conn, Observation(session_id=sid, project="pre", type="change",
                                                title="already here"))  # fmt: skip
    assert cli("import", str(dump_file), data=other).returncode == 0
    mapped = dump(other)
    assert len(mapped["observations"]) == 10

    def owners(tables: dict[str, list[dict[str, Any]]]) -> list[tuple[str, str]]:
        hosts = {s["id"]: s["host_session_id"] for s in tables["sessions"]}
        return sorted((hosts[o["session_id"]], o["title"]) for o in tables["observations"])

    assert owners(mapped) == sorted([*owners(dump(data_dir)), ("pre", "already here")])
    assert {s["id"] for s in mapped["sessions"]} == {1, 2, 3, 4}  # new ids, mapped


def test_export_of_one_project(data_dir: Path, tmp_path: Path) -> None:
    with open_database() as db:
        seed(db)
    out = tmp_path / "blog.jsonl"
    done = cli("export", "--project", "blog", "-o", str(out), data=data_dir)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records[0]["projects"] == ["blog"]
    assert records[0]["counts"] == {"session": 1, "prompt": 3, "observation": 3, "summary": 1}
    assert {r.get("project") for r in records[1:] if "project" in r} == {"blog"}
    fresh = tmp_path / "fresh"
    assert cli("import", str(out), data=fresh).returncode == 0
    assert {s["project"] for s in dump(fresh)["sessions"]} == {"blog"}


def test_export_of_an_unknown_project_is_an_error_naming_the_known_ones(
    data_dir: Path, tmp_path: Path
) -> None:
    with open_database() as db:
        seed(db)
    out = tmp_path / "nosuch.jsonl"
    done = cli("export", "--project", "blog", "--project", "nosuch", "-o", str(out), data=data_dir)
    assert done.returncode == 1
    assert "no project nosuch" in done.stderr
    assert "blog" in done.stderr.split("known:")[1]
    assert not out.exists()  # nothing written, nothing truncated


def test_a_truncated_export_is_refused_naming_what_is_missing_unless_partial(
    data_dir: Path, tmp_path: Path
) -> None:
    with open_database() as db:
        seed(db)
    lines = cli("export", data=data_dir).stdout.splitlines()
    kinds = [json.loads(line).get("kind") for line in lines]
    cut = kinds.index("observation") + 1  # the header, sessions, prompts and one observation
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines[:cut]) + "\n")
    fresh = tmp_path / "fresh"

    refused = cli("import", str(path), data=fresh)
    assert refused.returncode == 2
    assert "8 of 9 observations missing, 3 of 3 summaries missing" in refused.stderr
    assert "nothing imported; `--partial` imports what it holds" in refused.stderr
    assert all(rows == [] for rows in dump(fresh).values())

    taken = cli("import", str(path), "--partial", data=fresh)
    assert taken.returncode == 0, taken.stderr
    assert "1 observation, 0 summaries" in taken.stdout
    assert "incomplete (8 of 9 observations missing, 3 of 3 summaries missing)" in taken.stdout
    assert len(dump(fresh)["observations"]) == 1
    again = json.loads(cli("import", str(path), "--partial", "--json", data=fresh).stdout)
    assert again["mismatch"]["observation"] == {"expected": 9, "found": 1}
    assert (
        "--partial only applies to a FILE"
        in cli("import", "--from-claude-mem", str(path), "--partial", data=fresh).stderr
    )


def header(**overrides: Any) -> str:
    return json.dumps({"format": FORMAT, "version": VERSION} | overrides)


SESSION = json.dumps({"kind": "session", "id": 7, "platform": "claude-code",
                      "host_session_id": "h", "project": "p", "started_at": T0,
                      "updated_at": T0})  # fmt: skip
OBSERVATION = json.dumps({"kind": "observation", "id": 1, "session_id": 7, "project": "p",
                          "type": "bugfix", "title": f"t <private>{PRIVATE}</private>",
                          "created_at": T0})  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the input is empty"),
        ('{"hello": 1}', "line 1: not a claude-mem-py export header"),
        (header(format="something-else"), "format 'something-else' is not"),
        (header(version=VERSION + 1), "written by a newer claude-mem-py"),
        (f"{header()}\n{SESSION}\n{{broken", "line 3: "),
        (f"{header()}\n{SESSION}\n" + '{"kind": "observation", "id": 1}', "line 3: "),
        (f"{header()}\n" + '{"kind": "tool_use", "id": 1}', "line 2: "),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    text: str, message: str, data_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(text)
    done = cli("import", str(path), data=data_dir)
    assert done.returncode == 2
    assert message in done.stderr
    assert all(rows == [] for rows in dump(data_dir).values())


def test_input_is_cleaned_and_orphans_are_counted(data_dir: Path, tmp_path: Path) -> None:
    orphan = OBSERVATION.replace('"session_id": 7', '"session_id": 99')
    text = "\n".join([header(), SESSION, OBSERVATION, orphan.replace('"id": 1', '"id": 2')])
    path = tmp_path / "in.jsonl"
    path.write_text(text + "\n\n")
    result = json.loads(cli("import", str(path), "--json", data=data_dir).stdout)
    assert result["imported"]["observation"] == 1
    assert result["orphans"] == 1
    [obs] = dump(data_dir)["observations"]
    assert obs["title"] == "t"  # private text never reaches the database
    assert obs["source"] == "import"  # an export without the field (an older one)
    assert obs["superseded_by"] is None  # likewise: current
    assert "--map-project only applies" in cli("import", str(path), "--map-project", "a=b",
                                               data=data_dir).stderr  # fmt: skip
    assert "give a FILE" in cli("import", data=data_dir).stderr


def test_superseded_links_are_mapped_to_our_ids_and_outside_ones_dropped(
    data_dir: Path, tmp_path: Path
) -> None:
    def obs(source_id: int, title: str, successor: int | None) -> str:
        return json.dumps({"kind": "observation", "id": source_id, "session_id": 7,
                           "project": "p", "type": "decision", "title": title,
                           "created_at": T0 + source_id, "superseded_by": successor,
                           "valid_to": T0 + 99 if successor else None})  # fmt: skip

    with open_database() as db, db.write() as conn:  # ids here are taken: the import maps
        sid = ensure_session(conn, platform="x", host_session_id="pre", project="pre")
        for n in range(3):
            insert_observation(conn, Observation(session_id=sid, project="pre", type="change",
                                                 title=f"already here {n}"))  # fmt: skip
    lines = [header(), SESSION, obs(40, "retry twice", 41), obs(41, "retry three times", 42),
             obs(42, "retry twice again", None), obs(43, "keep the header", 99)]  # fmt: skip
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines))
    for _ in range(2):  # a second import adds nothing and keeps the links
        assert cli("import", str(path), data=data_dir).returncode == 0
        rows = {o["title"]: o for o in dump(data_dir)["observations"]}
        assert rows["retry twice"]["superseded_by"] == rows["retry three times"]["id"]
        assert rows["retry three times"]["superseded_by"] == rows["retry twice again"]["id"]
        assert rows["retry twice again"]["superseded_by"] is None
        assert rows["keep the header"]["superseded_by"] is None  # #99 is not in the input
        # Each held from its time until its successor's, set with the link (never as given).
        assert {t: (o["valid_from"] - T0, o["valid_to"]) for t, o in rows.items()
                if o["project"] == "p"} == {
            "retry twice": (40, T0 + 41), "retry three times": (41, T0 + 42),
            "retry twice again": (42, None), "keep the header": (43, None),
        }  # fmt: skip
    # Exported again, the links name the exported ids, and a fresh import maps them back.
    exported = cli("export", "--project", "p", data=data_dir)
    fresh = tmp_path / "fresh"
    assert cli("import", "-", data=fresh, stdin=exported.stdout).returncode == 0
    again = {o["title"]: o for o in dump(fresh)["observations"]}
    assert again["retry twice"]["superseded_by"] == again["retry three times"]["id"]
    assert again["retry three times"]["superseded_by"] == again["retry twice again"]["id"]
    assert {t: (o["valid_from"], o["valid_to"]) for t, o in again.items()} == {
        t: (o["valid_from"], o["valid_to"]) for t, o in rows.items() if t in again
    }


def test_an_import_beside_another_data_dirs_worker_says_nothing_about_that_worker(
    tmp_path: Path,
) -> None:
    """Another data dir's worker on the configured port is a normal setup (this data dir's own
    worker starts on a free port): a successful import does not go on about it."""
    port = free_port()
    theirs, ours = _dir_env(tmp_path / "a", port), _dir_env(tmp_path / "b", port)
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([header(counts={"session": 1, "observation": 1}), SESSION,
                               OBSERVATION]))  # fmt: skip
    try:
        theirs.start()
        done = ours.cli("import", str(path))
    finally:
        theirs.cli("worker", "stop", timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"imported from {path}: 1 session, 0 prompts, 1 observation, 0 summaries "
        "(0 already present)",
        "No worker runs for this data dir: the new rows are embedded for semantic search once "
        "it starts (`claude-mem worker start`).",
    ]
    assert done.stderr == ""
    assert worker_pids(tmp_path, below=True) == []
