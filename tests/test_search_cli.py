"""`claude-mem search` (store and worker paths) and the prompt hook's semantic injection."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from claude_mem import cli, settings
from claude_mem.hooks import handlers
from claude_mem.hooks.event import HookEvent
from claude_mem.records import Summary
from claude_mem.store import Database
from claude_mem.store.fulltext import QUERY_CHARS
from claude_mem.store.summaries import insert_summary
from claude_mem.worker.client import Response
from tests.net import free_port
from tests.store_helpers import observation, session
from tests.test_store_fulltext import STACK_TRACE
from tests.worker_fixtures import running_worker

T0 = 1_700_000_000_000


def seed(db: Database) -> int:
    sid = session(db, "s-1", project="proj")
    observation(db, sid, title="Cache warmup", type="feature", created_at=T0)
    return observation(
        db, sid, type="bugfix", title="Fix parse_config_value crash",
        files_modified=["src/conf/loader.py", "src/conf/env.py"], created_at=T0 + 1000,
    )  # fmt: skip


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert cli.main(["search", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_from_the_store_without_a_worker(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "1")  # nothing listens there
    obs_id = seed(Database())
    found = run_json(capsys, "parse_config_value")
    assert found["source"] == "store"
    assert found["mode"] == "fulltext"
    assert found["hits"] == [
        {"id": obs_id, "kind": "observation", "type": "bugfix",
         "title": "Fix parse_config_value crash", "time": T0 + 1000, "project": "proj",
         "files": ["src/conf/loader.py", "src/conf/env.py"], "superseded_by": None,
         "author": None, "label": str(obs_id)}
    ]  # fmt: skip
    assert run_json(capsys, "cache", "--type", "bugfix")["hits"] == []
    assert cli.main(["search", "cache", "--project", "nope", "--json"]) == 2
    out, err = capsys.readouterr()  # as `export --project nope` says it
    assert out == ""
    assert err.endswith("\nclaude-mem search: no project nope in memory (known: proj)\n")
    assert [h["id"] for h in run_json(capsys, "crash", "--type", "BugFix")["hits"]] == [obs_id]
    assert len(run_json(capsys, "", "--since", "2023-11-14", "--limit", "1")["hits"]) == 1
    assert run_json(capsys, 'src/a-b/c.py "NEAR(" AND *')["hits"] == []


def test_table_output_and_errors(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "1")
    monkeypatch.setenv("COLUMNS", "200")
    obs_id = seed(Database())
    assert cli.main(["search", "parse_config_value"]) == 0
    out = capsys.readouterr().out
    for part in (str(obs_id), "bugfix", "Fix parse_config_value crash", "2023-11-14 22:13",
                 "proj", "src/conf/loader.py",
                 "1 result, fulltext search via the store"):  # fmt: skip
        assert part in out
    assert cli.main(["search", "zzzqqq"]) == 0
    assert capsys.readouterr().out == "No results (fulltext search via the store).\n"
    # --since reads dates as `import --git --since` does: T0 is over a year old.
    assert cli.main(["search", "parse_config_value", "--since", "yesterday"]) == 0
    assert capsys.readouterr().out.startswith("No results")
    assert cli.main(["search", "parse_config_value", "--since", "6 months ago"]) == 0
    assert capsys.readouterr().out.startswith("No results")
    assert cli.main(["search", "parse_config_value", "--since", "40 years ago"]) == 0
    assert "1 result" in capsys.readouterr().out
    assert cli.main(["search", "x", "--since", "the day before"]) == 2
    assert "'the day before' is not a date" in capsys.readouterr().err
    assert cli.main(["search", "x", "--limit", "0"]) == 2


def test_a_superseded_hit_names_its_successor(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "1")
    monkeypatch.setenv("COLUMNS", "100")
    db = Database()
    sid = session(db, "s-1", project="proj")
    old = observation(
        db,
        sid,
        type="decision",
        title="Quote every CSV field in exports "
        "without exception, including numeric ids and empty cells",
        created_at=T0,
    )
    new = observation(db, sid, type="decision", title="Quote CSV fields only when needed",
                      created_at=T0 + 1)  # fmt: skip
    with db.write() as conn:
        conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?", (new, old))
    hits = run_json(capsys, "csv")["hits"]
    assert [(h["id"], h["superseded_by"]) for h in hits] == [(new, None), (old, new)]
    assert cli.main(["search", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    stale = next(line for line in lines if line.startswith(f"{old} "))
    assert f"(superseded by #{new}) Quote every CSV" in stale  # kept when the title is cut
    assert "superseded" not in next(line for line in lines if line.startswith(f"{new} "))


def test_unknown_type_is_an_error_naming_the_types(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(free_port()))
    db = Database()
    seed(db)
    observation(db, 1, type="security_note", title="Token scope narrowed", created_at=T0 + 5)
    assert cli.main(["search", "crash", "--type", "nosuchtype"]) == 2
    err = capsys.readouterr().err
    assert "unknown type 'nosuchtype'" in err
    assert "bugfix, feature, refactor, change, discovery, decision" in err
    assert "security_note" in err  # a type found in the store is valid too
    assert len(run_json(capsys, "token", "--type", "security_note")["hits"]) == 1
    with pytest.raises(SystemExit):
        cli.main(["search", "--help"])
    assert "discovery, decision" in " ".join(capsys.readouterr().out.split())


def test_without_a_worker_says_meaning_based_search_needs_it(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(free_port()))  # no worker there
    sid = session(Database(), "s-1", project="proj")
    observation(Database(), sid, title="Totals lost a cent to rounding", created_at=T0)
    assert cli.main(["search", "bug in the sums"]) == 0  # no word of the record
    out, err = capsys.readouterr()
    assert out.startswith("No results")
    assert "meaning-based search needs the worker" in err
    assert "claude-mem worker start" in err
    assert len(err.splitlines()) == 1
    # The note describes the search that ran: any word matches, not every one.
    assert "(any of the words matches, records with more of them first)" in err
    assert "every word" not in err
    assert cli.main(["search", "rounding of the zebra"]) == 0  # one word of the record
    out, err = capsys.readouterr()
    assert "Totals lost a cent to rounding" in out
    assert "any of the words matches" in err
    assert run_json(capsys, "rounding")["hits"]  # JSON stays clean: the note is on stderr
    assert cli.main(["search", "rounding", "--local"]) == 0
    assert capsys.readouterr().err == ""  # asked for the store, and it found something


LONG_FILES = [
    "src/claude_mem/pipeline/providers/openai_compatible_streaming_adapter.py",
    "tests/fixtures/agent-hooks/claude-code-2.1.332-with-a-long-name.jsonl",
    "docs/architecture/search-and-ranking.md",
]


@pytest.mark.parametrize("columns", [80, 120])
def test_table_fits_the_terminal_and_never_splits_a_path(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    columns: int,
) -> None:  # fmt: skip
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "1")
    monkeypatch.setenv("COLUMNS", str(columns))
    db = Database()
    sid = session(db, "s-1", project="a-project-with-a-rather-long-name")
    title = "Streaming adapter " + "retries the request when the upstream closes early " * 4
    observation(db, sid, project="a-project-with-a-rather-long-name", title=title,
                files_modified=LONG_FILES, created_at=T0)  # fmt: skip
    with db.write() as conn:
        insert_summary(
            conn, Summary(session_id=sid, project="p", request="Streaming adapter " + "why? " * 400)
        )
    assert cli.main(["search", "streaming adapter"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= columns, "\n".join(lines)
    assert len(lines) == 1 + 3 + 2  # heading, observation + its files, summary, blank, note
    assert lines[1].endswith("…")  # long text: one line, cut
    assert lines[3].endswith("…")
    for word in " ".join(lines).split():
        if "/" in word:  # every path shown is whole, or its end after "…"
            path = word.rstrip(",")
            assert path in LONG_FILES or any(
                f.endswith(path.removeprefix("…")) for f in LONG_FILES
            ), path


def test_a_pasted_stack_trace_is_clipped_once_and_still_finds(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    obs_id = seed(Database())
    for argv in (["--local"], []):  # the store, then a running worker
        with contextlib.ExitStack() as stack:
            if not argv:
                worker = stack.enter_context(running_worker())
                monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(worker.port))
            assert cli.main(["search", STACK_TRACE, "--json", *argv]) == 0
            out, err = capsys.readouterr()
        found = json.loads(out)
        assert found["source"] == ("store" if argv else "worker")
        assert found["clipped"] is True
        assert [h["id"] for h in found["hits"]] == [obs_id]
        assert err.count(f"note: query clipped to {QUERY_CHARS:,} characters") == 1


def test_through_a_running_worker(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")  # exact hits: full text only
    with running_worker() as worker:
        assert worker.state.db is not None
        obs_id = seed(worker.state.db)
        monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(worker.port))
        found = run_json(capsys, "parse_config_value", "--project", "proj")
        assert found["source"] == "worker"
        assert [h["id"] for h in found["hits"]] == [obs_id]
        assert run_json(capsys, "parse_config_value", "--local")["source"] == "store"
        assert cli.main(["search", "x", "--since", "the day before"]) == 2
        assert cli.main(["search", "x", "--type", "nosuchtype"]) == 2
        assert "unknown type 'nosuchtype': the types are bugfix" in capsys.readouterr().err
        assert run_json(capsys, "parse_config_value", "--since", "yesterday")["hits"] == []
        old = run_json(capsys, "parse_config_value", "--since", "40 years ago", "--type", "BUGFIX")
        assert (old["source"], [h["id"] for h in old["hits"]]) == ("worker", [obs_id])
        assert cli.main(["search", "x", "--project", "nope"]) == 2
        assert "no project nope in memory (known: proj)" in capsys.readouterr().err
        # The worker's own API matches types without regard to case too (MCP, viewer).
        hits = worker.client.get("/api/search", params={"query": "crash", "type": "BugFix"})
        assert [h["id"] for h in hits.json()["hits"]] == [obs_id]


SYMPTOM = (
    "A customer wrote that the invoice they received shows a grand total one cent lower than"
    " it should be. Adding the line amounts by hand gives 1.73, yet the printed invoice says"
    " 1.72. I suspect the way the amounts get added up, or the final rounding to two places,"
    " loses a cent somewhere. Which earlier change dealt with this wrong invoice total, and"
    " what exactly was causing it?"
)


def test_a_long_symptom_in_other_words_finds_its_record_without_vectors(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(SYMPTOM.split()) >= 60
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")
    with running_worker() as worker:
        db = worker.state.db
        assert db is not None
        sid = session(db, "s-1", project="proj")
        target = observation(
            db, sid, type="bugfix", title="Invoice total was a cent short",
            narrative="Summing the line amounts as floats accumulated binary error, so"
            " round(total, 2) printed 1.72 instead of 1.73; amounts are Decimal now.",
            files_modified=["src/invoicer/invoice.py"],
        )  # fmt: skip
        for title, narrative in [
            ("CSV export keeps the header row", "The header row is written even when empty."),
            ("Login token expired too early", "The clock skew made the token look stale."),
            ("Retry webhooks twice", "A failed webhook call is retried twice, never more."),
            ("Invoice PDF uses the new logo", "The printed invoice shows the customer name."),
            ("Cache the exchange rates", "Rates are fetched once per hour and added to a dict."),
        ]:
            observation(db, sid, title=title, narrative=narrative)
        monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", str(worker.port))
        found = run_json(capsys, SYMPTOM)
        question = run_json(capsys, "Why was the printed invoice one cent short of its lines?")
    assert found["source"] == "worker"
    assert found["mode"] == "fulltext"
    assert found["clipped"] is False
    assert found["hits"][0]["id"] == target
    assert question["hits"][0]["id"] == target


# --- semantic injection in the prompt hook ------------------------------------------------


class FakeWorker:
    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.calls: list[tuple[str, str, object]] = []
        self.host, self.port, self.timeout = "127.0.0.1", 1, 0.1

    def call(self, method: str, path: str, payload: object = None) -> Response | None:
        self.calls.append((method, path, payload))
        if path != "/api/context/semantic" or self.answer is None:
            return None
        return Response(200, {}, json.dumps(self.answer).encode())


def prompt_hook(text: str, answer: object, **env: str) -> tuple[str | None, list]:
    worker = FakeWorker(answer)
    ctx = handlers.Context(settings.load(environ=env), worker)  # type: ignore[arg-type]  # stand-in worker
    event = HookEvent(
        "claude-code", "UserPromptSubmit", "prompt", session_id="s", prompt=text, cwd="/w/p"
    )
    return handlers.prompt(event, ctx).context, worker.calls


CONTEXT = {"context": "## Relevant past work\n- #3 2023-11-14 [bugfix] Fix it", "count": 1}
LONG = "why does the config loader crash on an empty env var?"


def test_semantic_injection_is_on_by_default_and_can_be_turned_off() -> None:
    context, calls = prompt_hook(LONG, CONTEXT)
    assert context == CONTEXT["context"]
    context, calls = prompt_hook(LONG, CONTEXT, CLAUDE_MEM_SEMANTIC_INJECT="false")
    assert context is None
    assert [path for _, path, _ in calls] == ["/api/sessions/init"]


def test_semantic_injection_when_enabled() -> None:
    on = {"CLAUDE_MEM_SEMANTIC_INJECT": "true", "CLAUDE_MEM_SEMANTIC_INJECT_LIMIT": "3"}
    context, calls = prompt_hook(LONG, CONTEXT, **on)
    assert context == CONTEXT["context"]
    sent = {"q": LONG, "cwd": "/w/p", "limit": 3, "session": "s", "platform": "claude-code"}
    assert calls[1] == ("POST", "/api/context/semantic", sent)
    # Short prompts, private prompts, no worker and empty answers inject nothing.
    short, short_calls = prompt_hook("yes go on", CONTEXT, **on)
    assert short is None
    assert len(short_calls) == 1
    assert prompt_hook(f"<private>{LONG}</private>", CONTEXT, **on)[0] is None
    assert len(prompt_hook(f"<private>{LONG}</private>", CONTEXT, **on)[1]) == 1
    assert prompt_hook(LONG, None, **on)[0] is None
    assert prompt_hook(LONG, {"context": "", "count": 0}, **on)[0] is None
    assert prompt_hook(LONG, ["odd"], **on)[0] is None
