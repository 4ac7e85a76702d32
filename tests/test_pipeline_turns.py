"""A prompt turn is compressed as a whole when the agent stops: its tool events together with
the agent's words from the host's transcript, read from a stored offset that commits with the
units it produced."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_mem.pipeline import consumer
from claude_mem.pipeline.providers.base import (
    ObservationDraft,
    Result,
    SessionContext,
    SummaryDraft,
    SummaryInput,
    ToolEvent,
    Turn,
)
from claude_mem.pipeline.turns import assemble, turn_slice
from claude_mem.transcripts import Entry
from claude_mem.worker import lifecycle
from claude_mem.worker.client import WorkerUnavailable, request
from tests.net import free_port
from tests.polling import wait_until
from tests.test_pipeline_consumer import configure, scripted, use
from tests.worker_fixtures import RunningWorker, running_worker, wait_drained
from tests.worker_process import run_cli

__all__ = ["scripted"]  # the fixture, used by name

HOST = "turn-1"
CWD = "/w/proj"


class Recorder:
    """A provider that keeps the turn it was given and makes one unit of all the events."""

    name = "recorder"
    offline = True

    def __init__(self) -> None:
        self.turns: list[tuple[list[str | None], Turn | None]] = []
        self.summarized: list[Turn | None] = []

    async def compress(self, events: list[ToolEvent], ctx: SessionContext) -> Result:
        self.turns.append(([e.tool_use_id for e in events], ctx.turn))
        turn = ctx.turn
        title = turn.words[0].text if turn and turn.words else "no words"
        ids = [e.tool_use_row_id for e in events]
        return Result([ObservationDraft(type="change", title=title, source_event_ids=ids)])

    async def summarize(self, request: SummaryInput, ctx: SessionContext) -> Result:
        self.summarized.append(ctx.turn)
        return Result(summary=SummaryDraft(request="r", learned=ctx.turn.reply if ctx.turn else ""))


class Transcript:
    """A Claude Code transcript file that grows as the session goes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_text("")

    def add(self, record: dict[str, object]) -> None:
        with self.path.open("a") as out:
            out.write(json.dumps(record) + "\n")

    def prompt(self, text: str) -> None:
        self.add({"type": "user", "message": {"role": "user", "content": text}})

    def says(self, text: str, tool: str | None = None) -> None:
        content: list[dict[str, object]] = [{"type": "text", "text": text}]
        if tool:
            content.append({"type": "tool_use", "id": tool, "name": "Edit", "input": {}})
        self.add({"type": "assistant", "message": {"role": "assistant", "content": content}})
        if tool:
            self.add({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tool, "content": "ok"}]}})  # fmt: skip


@pytest.fixture
def worker(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningWorker]:
    monkeypatch.setattr(consumer, "POLL_S", 0.05)
    monkeypatch.delenv("CLAUDE_MEM_TURN_IDLE_S")  # the default: a turn waits for its end
    with running_worker() as running:
        configure(running, turn_idle_s=3600)  # and nothing here waits that long
        yield running


@pytest.fixture
def recorder(worker: RunningWorker, scripted: dict[str, object]) -> Recorder:
    """The Recorder, registered and chosen as the only provider."""
    made = Recorder()
    use(scripted, made)  # type: ignore[arg-type]  # test double
    configure(worker, provider="recorder", fallback_providers="recorder", turn_idle_s=3600)
    return made


def post_prompt(worker: RunningWorker, transcript: Transcript, text: str) -> None:
    transcript.prompt(text)
    worker.client.post("/api/sessions/init", json={
        "host_session_id": HOST, "cwd": CWD, "prompt": text,
        "transcript_path": str(transcript.path)}).raise_for_status()  # fmt: skip


EDIT = {"file_path": f"{CWD}/src/a.py", "old_string": "a", "new_string": "b"}


def post_tool(
    worker: RunningWorker,
    transcript: Transcript,
    words: str,
    tool_id: str,
    *,
    tool: str = "Edit",
    tool_input: object = EDIT,
    tool_response: object = None,
) -> None:
    """The agent's words and its tool call in the transcript, then the call's PostToolUse."""
    transcript.says(words, tool_id)
    worker.client.post("/api/sessions/observations", json={
        "host_session_id": HOST, "cwd": CWD, "tool_name": tool, "tool_use_id": tool_id,
        "tool_input": tool_input,
        "tool_response": {"success": True} if tool_response is None else tool_response,
        "transcript_path": str(transcript.path)}).raise_for_status()  # fmt: skip


def post_stop(worker: RunningWorker, transcript: Transcript, reply: str) -> None:
    transcript.says(reply)
    worker.client.post("/api/sessions/summarize", json={
        "host_session_id": HOST, "cwd": CWD, "last_assistant_message": reply,
        "transcript_path": str(transcript.path)}).raise_for_status()  # fmt: skip


def db_rows(data_dir: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(data_dir / "claude-mem.db") as conn:
        return conn.execute(sql).fetchall()


def test_a_turn_waits_for_its_stop_then_is_compressed_whole_with_the_agents_words(
    worker: RunningWorker, recorder: Recorder, data_dir: Path, tmp_path: Path
) -> None:
    transcript = Transcript(tmp_path / "t.jsonl")
    post_prompt(worker, transcript, "why is the total off by a cent?")
    post_tool(worker, transcript, "The float sum makes round() give 1.72.", "toolu_1")
    post_tool(worker, transcript, "Switching the sum to Decimal.", "toolu_2")
    stats = worker.client.get("/api/stats").json()["queue"]
    assert stats["pending"] == 2
    assert recorder.turns == []
    post_stop(worker, transcript, "Fixed: totals use Decimal now.")
    wait_drained(worker)

    assert len(recorder.turns) == 1  # one call for the whole turn
    ids, turn = recorder.turns[0]
    assert ids == ["toolu_1", "toolu_2"]
    assert turn is not None
    assert turn.closed
    assert turn.prompt == "why is the total off by a cent?"
    assert [(w.text, w.before) for w in turn.words] == [
        ("The float sum makes round() give 1.72.", "toolu_1"),
        ("Switching the sum to Decimal.", "toolu_2"),
        ("Fixed: totals use Decimal now.", None),
    ]
    assert turn.reply == "Fixed: totals use Decimal now."
    assert recorder.summarized == [turn]  # the summary sees the same turn
    [(offset,)] = db_rows(data_dir, "SELECT transcript_offset FROM sessions")
    assert offset == transcript.path.stat().st_size
    linked = db_rows(data_dir, "SELECT count(*) FROM tool_uses WHERE observation_id IS NOT NULL")
    assert linked == [(2,)]


def test_the_next_turn_reads_on_from_the_offset_and_a_chat_turn_is_compressed_too(
    worker: RunningWorker, recorder: Recorder, data_dir: Path, tmp_path: Path
) -> None:
    transcript = Transcript(tmp_path / "t.jsonl")
    post_prompt(worker, transcript, "fix the export")
    post_tool(worker, transcript, "Editing the exporter.", "toolu_1")
    post_stop(worker, transcript, "Done.")
    wait_drained(worker)
    post_prompt(worker, transcript, "no, keep the header row even when the export is empty")
    post_stop(worker, transcript, "Understood: the header row stays, even for an empty export.")
    wait_drained(worker)

    assert len(recorder.turns) == 2
    ids, chat = recorder.turns[1]
    assert ids == []  # no tool calls: the words alone
    assert chat is not None
    assert chat.prompt.startswith("no, keep the header row")
    assert [w.text for w in chat.words] == [
        "Understood: the header row stays, even for an empty export."
    ]
    assert "Editing the exporter." not in [w.text for w in chat.words]  # read once only


def test_an_idle_turn_is_compressed_without_its_stop(
    worker: RunningWorker, recorder: Recorder, tmp_path: Path
) -> None:
    transcript = Transcript(tmp_path / "t.jsonl")
    post_prompt(worker, transcript, "look at the parser")
    post_tool(worker, transcript, "Reading the parser.", "toolu_1")
    assert recorder.turns == []
    configure(worker, provider="recorder", fallback_providers="recorder", turn_idle_s=0)
    wait_until(lambda: bool(recorder.turns), timeout=15)
    ids, turn = recorder.turns[0]
    assert ids == ["toolu_1"]
    assert turn is not None
    assert not turn.closed


def test_a_later_prompt_ends_the_turn_before_it(
    worker: RunningWorker, recorder: Recorder, tmp_path: Path
) -> None:
    transcript = Transcript(tmp_path / "t.jsonl")
    post_prompt(worker, transcript, "look at the parser")
    post_tool(worker, transcript, "Reading the parser.", "toolu_1")
    post_prompt(worker, transcript, "now the lexer")  # a host that sent no Stop
    wait_until(lambda: bool(recorder.turns), timeout=15)
    ids, turn = recorder.turns[0]
    assert ids == ["toolu_1"]
    assert turn is not None
    assert turn.closed
    assert turn.prompt == "look at the parser"


# --- the turn's slice of a transcript -------------------------------------------------------


def entries(*items: tuple[str, str, str | None]) -> list[Entry]:
    return [Entry(role, text, tool, end=n + 1) for n, (role, text, tool) in enumerate(items)]  # type: ignore[arg-type]  # roles are literals


def event(tool_use_id: str) -> ToolEvent:
    return ToolEvent(1, "Edit", {}, {}, tool_use_id=tool_use_id)


def test_the_slice_is_the_turns_own_segment_and_a_private_turns_words_never_join_it() -> None:
    found = entries(
        ("assistant", "tail of an earlier turn", None),
        ("user", "fix the parser", None),
        ("assistant", "Looking at the parser.", None),
        ("tool_use", "Edit", "toolu_1"),
        ("tool_result", "ok", "toolu_1"),
        ("assistant", "Fixed.", None),
        ("user", "", None),  # a private prompt: its boundary stays, its text does not
        ("assistant", "words of the private turn", None),
    )
    piece = turn_slice(found, "fix   the parser", [event("toolu_1")])
    assert [e.text for e in piece.entries] == [
        "fix the parser", "Looking at the parser.", "Edit", "ok", "Fixed.",
    ]  # fmt: skip
    assert piece.end == 6  # the private turn's entries are never consumed as this turn's
    turn = assemble(piece.entries, prompt_number=1, prompt="fix the parser", reply="",
                    closed=True)  # fmt: skip
    assert [(w.text, w.before) for w in turn.words] == [
        ("Looking at the parser.", "toolu_1"), ("Fixed.", None),
    ]  # fmt: skip
    assert turn.reply == "Fixed."


def test_a_turn_found_by_its_tool_calls_when_the_prompt_differs_and_nothing_otherwise() -> None:
    found = entries(
        ("user", "a prompt the host rewrote", None),
        ("tool_use", "Edit", "toolu_9"),
        ("user", "someone else's turn", None),
        ("assistant", "unrelated words", None),
    )
    by_tool = turn_slice(found, "the prompt we stored", [event("toolu_9")])
    assert [e.text for e in by_tool.entries] == ["a prompt the host rewrote", "Edit"]
    nothing = turn_slice(found, "the prompt we stored", [event("toolu_404")])
    assert nothing.entries == ()  # no guess: no words at all
    assert nothing.end is None  # and a later turn's segment may be there: nothing consumed
    newest = turn_slice(found, "the prompt we stored", [event("toolu_404")], newest=True)
    assert newest.entries == ()
    assert newest.end == 2  # no later turn: the older segment is passed over, the last kept


# --- kill -9 mid-session ---------------------------------------------------------------------

TURNS = 6
CALLS_PER_TURN = 3


def run_session(
    env: dict[str, str], port: int, transcript: Transcript, kill_after: set[int]
) -> None:
    """A session of TURNS turns sent to a worker process; SIGKILL right after the named
    turns' Stop (the worker is mid-compression or just done), restarted as a hook would."""
    token_file = Path(env["CLAUDE_MEM_DATA_DIR"]) / "worker.token"

    def post(path: str, body: dict[str, object]) -> None:
        while True:  # a hook would give up; the test retries so every event is accepted
            try:
                answer = request("POST", path, port=port, body=json.dumps(body).encode(),
                                 token=token_file.read_text().strip(), timeout=10)  # fmt: skip
            except WorkerUnavailable:
                answer = None
            if answer is not None and answer.status == 200:
                return
            time.sleep(0.05)

    where = {"host_session_id": HOST, "cwd": CWD, "transcript_path": str(transcript.path)}
    for turn in range(1, TURNS + 1):
        text = f"turn {turn}: make the parser accept case {turn}"
        transcript.prompt(text)
        post("/api/sessions/init", {**where, "prompt": text})
        for call in range(CALLS_PER_TURN):
            tool_id = f"toolu_{turn}_{call}"
            words = f"The parser rejects case {turn} because rule {call} is missing."
            transcript.says(words, tool_id)
            post("/api/sessions/observations", {
                 **where, "tool_name": "Edit", "tool_use_id": tool_id,
                 "tool_input": {"file_path": f"{CWD}/src/parser{turn}.py", "old_string": "a",
                                "new_string": f"rule_{call}()"},
                 "tool_response": {"success": True}})  # fmt: skip
        reply = f"Case {turn} parses now."
        transcript.says(reply)
        post("/api/sessions/summarize", {**where, "last_assistant_message": reply})
        if turn in kill_after:
            info = lifecycle.read_pid_info()
            assert info is not None
            os.kill(int(info["pid"]), signal.SIGKILL)
            run_cli("worker", "start", env=env)


def drained_memory(env: dict[str, str], port: int) -> list[tuple[object, ...]]:
    token = (Path(env["CLAUDE_MEM_DATA_DIR"]) / "worker.token").read_text().strip()

    def idle() -> bool:
        stats = request("GET", "/api/stats", port=port, token=token).json()
        return isinstance(stats, dict) and stats["queue"]["pending"] == 0 and (
            stats["queue"]["processing"] == 0)  # fmt: skip

    assert wait_until(idle, timeout=60)
    run_cli("worker", "stop", env=env)
    with sqlite3.connect(Path(env["CLAUDE_MEM_DATA_DIR"]) / "claude-mem.db") as conn:
        assert conn.execute("SELECT count(*) FROM tool_uses WHERE observation_id IS NULL"
                            ).fetchone() == (0,)  # fmt: skip
        (offset,) = conn.execute("SELECT transcript_offset FROM sessions").fetchone()
        memory = conn.execute(
            """SELECT prompt_number, type, title, narrative, facts FROM observations
               ORDER BY prompt_number, title"""
        ).fetchall()
    return [("offset", offset), *memory]


@pytest.mark.slow
def test_kill_9_mid_session_loses_no_unit_and_duplicates_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_MEM_TURN_IDLE_S")  # turns end at their Stop, as by default
    results = []
    for name, kills in (("clean", set[int]()), ("killed", {2, 3, 5})):
        port = free_port()
        env = {**os.environ, "CLAUDE_MEM_DATA_DIR": str(tmp_path / name),
               "CLAUDE_MEM_WORKER_PORT": str(port)}  # fmt: skip
        monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", env["CLAUDE_MEM_DATA_DIR"])
        run_cli("worker", "start", env=env)
        transcript = Transcript(tmp_path / f"{name}.jsonl")
        run_session(env, port, transcript, kills)
        memory = drained_memory(env, port)
        assert memory[0] == ("offset", transcript.path.stat().st_size)  # all read, once
        results.append(memory[1:])
    clean, killed = results
    assert clean
    assert {row[0] for row in clean} == set(range(1, TURNS + 1))
    assert killed == clean  # the same units: none lost, none twice, none from a re-read


def test_a_turn_that_only_commits_folds_into_the_unit_it_finished(
    worker: RunningWorker, data_dir: Path, tmp_path: Path
) -> None:
    transcript = Transcript(tmp_path / "t.jsonl")
    post_prompt(worker, transcript, "round the totals half-up")
    post_tool(worker, transcript, "The float sum makes round() give 1.72; using Decimal.", "t1")
    post_stop(worker, transcript, "Totals are summed in Decimal and rounded half-up now.")
    wait_drained(worker)
    post_prompt(worker, transcript, "commit it")
    post_tool(worker, transcript, "Committing.", "t2", tool="Bash",
              tool_input={"command": "git commit -am 'Round totals half-up'"},
              tool_response={"stdout": "[main 1a2b3c4] Round totals half-up\n 1 file changed",
                             "stderr": "", "interrupted": False})  # fmt: skip
    post_stop(worker, transcript, "Committed as 1a2b3c4.")
    wait_drained(worker)

    rows = db_rows(data_dir, "SELECT id, prompt_number, title, facts FROM observations")
    assert len(rows) == 1  # the commit finished the unit: no unit of its own
    ((unit_id, number, title, facts),) = rows
    assert number == 1
    assert str(title).startswith("The float sum makes round() give 1.72")
    assert "Committed: Round totals half-up" in str(facts)  # the commit is its evidence now
    links = db_rows(data_dir, "SELECT DISTINCT observation_id FROM tool_uses")
    assert links == [(unit_id,)]


def test_a_plain_description_of_what_a_function_does_finds_the_unit_that_changed_it(
    worker: RunningWorker, tmp_path: Path
) -> None:
    """Code-aware memory: the symbols an edit touches keep their signature and docstring, and
    full text finds the unit by the docstring's words though no one said them."""
    transcript = Transcript(tmp_path / "t.jsonl")
    post_prompt(worker, transcript, "make the totals exact")
    code = (
        "def invoice_total(lines: list[Line]) -> Decimal:\n"
        '    """Add up every line amount without float drift, then round half-up to cents."""\n'
        "    return sum((line.amount for line in lines), Decimal(0)).quantize(CENT)\n"
    )
    edit = {"file_path": f"{CWD}/src/totals.py", "old_string": "return 0", "new_string": code}
    post_tool(worker, transcript, "Switching to Decimal.", "t1", tool_input=edit,
              tool_response={"filePath": f"{CWD}/src/totals.py"})  # fmt: skip
    post_stop(worker, transcript, "Done, totals use Decimal.")
    wait_drained(worker)
    (unit,) = worker.client.get("/api/observations").json()["items"]
    signature = "totals.invoice_total(lines: list[Line]) -> Decimal — Add up every line amount"
    assert any(fact.startswith(signature) for fact in unit["facts"]), unit["facts"]
    found = worker.client.get(
        "/api/search", params={"query": "which function adds up line amounts without drift"}
    ).json()["hits"]
    assert [hit["id"] for hit in found if hit["kind"] == "observation"][:1] == [unit["id"]]
