"""`claude-mem demo`: the recorded sessions, and the command run as a user runs it."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from claude_mem.demo import recorded
from claude_mem.pipeline.local.words import sentences

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("claude-mem")
FIXTURES = ROOT / "tests" / "fixtures" / "demo"
PACKAGED = ROOT / "src" / "claude_mem" / "demo" / "sessions"


def demo(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`claude-mem demo ARGS` with its scratch files under tmp_path (TMPDIR)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(scratch)}
    return subprocess.run(
        [str(CLI), "demo", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def worker_of(output: str) -> tuple[int, int]:
    found = re.search(r"worker\s+pid (\d+) at http://127\.0\.0\.1:(\d+)/", output)
    assert found, output
    return int(found.group(1)), int(found.group(2))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def answers(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def gone(pid: int, port: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) or answers(port):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def observation_titles(text: str) -> list[str]:
    """The titles of the observation rows in injected context: `**12** … **TITLE**` (shown in
    full) and `12 TIME MARK TITLE` (the index)."""
    full = re.findall(r"^\*\*\d+\*\* .*? \*\*(.+)\*\*$", text, re.M)
    index = re.findall(r"^\d+ \S+ \S (.+)$", text, re.M)
    return [*full, *index]


def assert_report(output: str) -> None:
    """The three things the demo is for: injected context, a search hit, the viewer URL."""
    context = output.split("What the next session in invoicer gets injected", 1)
    assert len(context) == 2, output
    injected = context[1].split("Full-text search", 1)[0]
    assert "# [invoicer] recent memory" in injected, output
    assert_knowledge("\n".join(line.lstrip(" │") for line in injected.splitlines()))
    assert "## Last session summary" in injected, injected
    assert "Smith, Jones" in injected, injected  # the last session's request
    assert_summary(injected.split("## Last session summary", 1)[1])
    # The last session's README and test changes document and check the fix: no bugfix.
    (docs,) = re.findall(r"\*\*\d+\*\* .*? (\S) \*\*The README gets", injected)
    assert docs == "✓", injected
    search = output.split('Full-text search for "Decimal"', 1)
    assert len(search) == 2, output
    hits = re.findall(r"^\s+#(\d+)\s+(\w+)\s+(.+)$", search[1].split("Viewer:", 1)[0], re.M)
    assert hits, output
    # The bug fix, in the agent's words; the README's rounding rule, whose whole title says
    # "summed in `Decimal`", may rank above it.
    assert any("Invoice.total()" in title for _, _, title in hits[:2]), hits
    noun = "hit" if len(hits) == 1 else "hits"
    assert search[1].startswith(f" ({len(hits)} {noun}, best first)"), output
    assert re.search(r"^Viewer: http://127\.0\.0\.1:\d+/", output, re.M), output


def assert_knowledge(injected: str) -> None:
    """Session-start context that holds what was learned: why the rounding bug happened and
    the CSV quoting rule, in the agent's words; no row that only says a file was read."""
    flat = " ".join(injected.split())
    for said in (
        "sums floats, so round() turns 1.725 into 1.72",  # the cause
        "summing prices as floats made `round()` lose a cent",
        "summed in `Decimal` and rounded half-up to the cent",  # the fix, as a rule
        "a field containing a comma, a quote or a newline is wrapped in double quotes",
        "embedded quotes are doubled",  # the quoting rule
    ):
        assert said in flat, f"{said!r} missing from the injected context:\n{injected}"
    titles = observation_titles(injected)
    assert len(titles) >= 3, injected
    bare = [t for t in titles if re.match(r"(?:Read|Listed|Ran tests)\b", t)]
    assert not bare, bare


def assert_summary(shown: str) -> None:
    """The last session's summary: the rounding cause under Learned, nothing said twice (not
    even as a cut copy)."""
    fields = dict(re.findall(r"\*\*([A-Z][a-z ]+)\*\*: (.+)", shown))
    assert "summing prices as floats made `round()` lose a cent" in fields["Learned"], fields
    assert "lose a cent" not in fields.get("Next steps", ""), fields
    said = [re.sub(r"[\s.…]+$", "", s.lower()) for text in fields.values() for s in sentences(text)]
    for n, sentence in enumerate(said):
        assert not any(o.startswith(sentence) or sentence.startswith(o) for o in said[:n]), said


# --- the recordings --------------------------------------------------------------------------


def test_packaged_sessions_are_the_recorded_fixtures() -> None:
    fixtures = sorted(p.name for p in FIXTURES.glob("*.jsonl"))
    assert len(fixtures) >= 2
    assert sorted(p.name for p in PACKAGED.glob("*.jsonl")) == fixtures
    for name in fixtures:
        assert (PACKAGED / name).read_bytes() == (FIXTURES / name).read_bytes(), name
    events = [n for n in fixtures if not n.endswith(recorded.TRANSCRIPT_SUFFIX)]
    assert fixtures == sorted([*events, *(n[:-6] + recorded.TRANSCRIPT_SUFFIX for n in events)])
    sessions = recorded.load_sessions()
    assert [s.slug for s in sessions] == [n.removesuffix(".jsonl")[3:] for n in events]
    assert all(s.transcript for s in sessions)


def test_recordings_have_real_claude_code_shapes() -> None:
    sessions = recorded.load_sessions(FIXTURES)
    seen: set[tuple[str, str]] = set()
    for path in sorted(FIXTURES.glob("[0-9][0-9]-*.jsonl")):
        if path.name.endswith(recorded.TRANSCRIPT_SUFFIX):
            continue
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        assert {row["host"] for row in rows} == {"Claude Code 2.1.332"}, path.name
        assert all(row["event"] == row["payload"]["hook_event_name"] for row in rows)
    for session in sessions:
        names = [event.name for event in session.events]
        assert names[0] == "SessionStart", names
        assert names[-1] == "SessionEnd", names
        assert {"UserPromptSubmit", "Stop"} <= set(names), names
        ids = {event.payload["session_id"] for event in session.events}
        assert len(ids) == 1, ids
        for event in session.events:
            payload = event.payload
            assert payload["hook_event_name"] == event.name
            for key in ("session_id", "transcript_path", "cwd"):
                assert isinstance(payload[key], str), (event.name, key)
            assert payload["cwd"] == recorded.PROJECT_PLACEHOLDER
            seen.add((event.name, str(payload.get("tool_name") or "")))
            if event.name == "Stop":
                assert payload["last_assistant_message"].strip()
                assert payload["stop_hook_active"] is False
            if event.name == "PostToolUse":
                assert isinstance(payload["tool_response"], dict)
                assert payload["tool_use_id"].startswith("toolu_")
    for tool in ("Read", "Grep", "Edit", "Bash", "Write"):
        assert {("PreToolUse", tool), ("PostToolUse", tool)} <= seen, tool
    assert ("PostToolUseFailure", "Bash") in seen  # the failing test run
    commits = [
        e.payload["tool_input"]["command"]
        for s in sessions
        for e in s.events
        if e.name == "PostToolUse" and e.payload["tool_name"] == "Bash"
    ]
    assert any("git commit" in command for command in commits)
    assert any("pytest" in command for command in commits)


def test_each_recording_keeps_the_transcript_as_it_grew() -> None:
    """Every event says how much of the transcript Claude Code had written when its hook ran:
    whole lines, never shrinking; the agent's words and calls are there before their hooks."""
    for session in recorded.load_sessions(FIXTURES):
        data = session.transcript
        assert data.endswith(b"\n"), session.slug
        assert b"/tmp/" not in data, session.slug
        assert b"-tmp-" not in data, session.slug
        sizes = [event.transcript_size for event in session.events]
        assert sizes == sorted(sizes), session.slug
        assert 0 < sizes[-1] <= len(data), session.slug
        for event in session.events:
            written = data[: event.transcript_size]
            assert not written or written.endswith(b"\n"), (session.slug, event.name)
            if event.name == "PreToolUse":  # the call, and what the agent said before it
                assert event.payload["tool_use_id"].encode() in written, event.payload
            if event.name == "Stop":
                reply = event.payload["last_assistant_message"]
                assert json.dumps(reply, ensure_ascii=False)[1:-1].encode() in written
    first = recorded.load_sessions(FIXTURES)[0].transcript.decode()
    assert "The bug: `Invoice.total()` sums floats" in first  # text before a tool call


def test_replay_grows_the_transcript_the_worker_reads(tmp_path: Path) -> None:
    """The demo's transcript holds, before each hook, what Claude Code had written by then,
    with its paths moved; the worker's reader finds the agent's words in it."""
    from claude_mem.transcripts import read_since

    project, home = tmp_path / "proj", tmp_path / "home"
    session = recorded.load_sessions()[0]
    transcript = recorded.Transcript(session, project, home)
    path = Path(recorded.relocate(session.events[0].payload["transcript_path"], project, home))
    offset, words = 0, []
    for event in session.events:
        transcript.grow(event)
        expected = session.transcript[: event.transcript_size].count(b"\n")
        lines = path.read_text().splitlines() if path.exists() else []
        assert len(lines) == expected, event.name
        chunk = read_since(str(path), offset, platform=recorded.PLATFORM)
        offset = chunk.offset
        words += [entry.text for entry in chunk.entries if entry.role == "assistant"]
        if event.name == "PreToolUse":
            ids = [e.tool_use_id for e in chunk.entries if e.role == "tool_use"]
            assert event.payload["tool_use_id"] in ids, event.payload
    text = path.read_text()
    assert "/home/dev" not in text
    assert str(project) in text
    assert all(isinstance(json.loads(line), dict) for line in text.splitlines())
    assert offset == path.stat().st_size
    said = " ".join(words)
    assert "3 × 1.15 is 3.4499999999999997" in said
    assert "rounds half-up" in said or "half-up" in said


def test_project_is_rebuilt_as_the_sessions_left_it(tmp_path: Path) -> None:
    files = recorded.project_files(recorded.load_sessions())
    assert {"src/invoicer/invoice.py", "src/invoicer/export.py", "README.md"} <= set(files)
    assert "ROUND_HALF_UP" in files["src/invoicer/invoice.py"]  # session 1's fix applied
    assert "return round(net, 2)" not in files["src/invoicer/invoice.py"]
    assert "test_names_with_commas_and_quotes_survive" in files["tests/test_export.py"]
    assert "## Rounding" in files["README.md"]
    recorded.write_project(tmp_path / "p", {**files, "../escape.txt": "no"})
    assert (tmp_path / "p" / "src" / "invoicer" / "export.py").read_text() == files[
        "src/invoicer/export.py"
    ]
    assert not (tmp_path / "escape.txt").exists()


def test_replay_follows_the_installed_matchers() -> None:
    events = [e for s in recorded.load_sessions() for e in s.events]
    pre = [e for e in events if e.name == "PreToolUse"]
    assert {e.payload["tool_name"] for e in pre if recorded.registered(e)} == {"Read"}
    assert all(recorded.registered(e) for e in events if e.name == "PostToolUse")


def test_relocate_moves_every_recorded_path(tmp_path: Path) -> None:
    session = recorded.load_sessions()[0]
    moved = [recorded.relocate(e.payload, tmp_path / "proj", tmp_path / "home")
             for e in session.events]  # fmt: skip
    text = json.dumps(moved)
    assert "/home/dev" not in text
    assert all(p["cwd"] == str(tmp_path / "proj") for p in moved)
    assert all(p["transcript_path"].startswith(str(tmp_path / "home")) for p in moved)


# --- the command -----------------------------------------------------------------------------


def test_demo_replays_and_reports_then_stops_its_worker(tmp_path: Path, data_dir: Path) -> None:
    done = demo(tmp_path)  # how quick: bench/cli_startup.py
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == "", done.stderr
    output = done.stdout
    assert_report(output)
    assert "3/3 csv-quoting" in output
    assert "its SessionStart hook injected: no memory yet" in output  # session 1
    assert re.search(r"its SessionStart hook injected: \d+ memories", output)  # sessions 2, 3
    assert "Worker stopped" in output
    pid, port = worker_of(output)
    assert gone(pid, port), f"worker {pid} still running after the demo"
    # A temporary data dir: the user's (here the test's) memory was never touched.
    assert not data_dir.exists()
    assert list((tmp_path / "tmp").iterdir()) == [], "scratch files left behind"


def test_demo_keep_leaves_the_worker_running_and_says_how_to_stop_it(tmp_path: Path) -> None:
    done = demo(tmp_path, "--keep")
    output = done.stdout
    pid, port = worker_of(output)
    try:
        assert done.returncode == 0, output + done.stderr
        assert_report(output)
        assert alive(pid), output
        assert answers(port), output
        stop = re.search(r"^\s+CLAUDE_MEM_DATA_DIR=(\S+) (\S+) worker stop$", output, re.M)
        assert stop, output
        data = Path(stop.group(1))
        assert (data / "claude-mem.db").is_file()
        env = {**os.environ, "CLAUDE_MEM_DATA_DIR": str(data)}
        status = subprocess.run(
            [str(CLI), "status", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        counts = json.loads(status.stdout)["counts"]
        tool_calls = sum(s.tool_calls for s in recorded.load_sessions())
        # Units of work, not a row per tool call.
        assert 3 <= counts["observations"] <= tool_calls // 3, counts
        assert counts["session_summaries"] == 3, counts
        stopped = subprocess.run(
            [str(CLI), "worker", "stop"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert f"worker stopped (pid {pid})" in stopped.stdout, stopped.stdout + stopped.stderr
        assert gone(pid, port)
    finally:
        if alive(pid) and str(tmp_path) in Path(f"/proc/{pid}/environ").read_text(errors="replace"):
            os.kill(pid, 15)  # the worker this test started, identified by its own data dir


def test_demo_with_data_dir_keeps_the_memory_there(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    done = demo(tmp_path, "--data-dir", str(memory), "--search", "csv")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"memory   {memory}" in done.stdout
    assert f"memory kept in {memory}" in done.stdout
    assert 'Full-text search for "csv"' in done.stdout
    pid, port = worker_of(done.stdout)
    assert gone(pid, port)
    assert (memory / "claude-mem.db").is_file()
    assert not (memory / "install-version").exists()  # a user's own dir gets no marker
    # A second run replays the same sessions: nothing is stored twice.
    again = demo(tmp_path, "--data-dir", str(memory))
    assert again.returncode == 0, again.stdout + again.stderr
    first = re.search(r"Compressed into (\d+) observations", done.stdout)
    second = re.search(r"Compressed into (\d+) observations", again.stdout)
    assert first, done.stdout
    assert second, again.stdout
    assert first.group(1) == second.group(1)


def test_demo_fails_clearly_when_the_worker_cannot_start(tmp_path: Path) -> None:
    with socket.socket() as squatter:  # a port that is taken and never answers
        squatter.bind(("127.0.0.1", 0))
        squatter.listen(1)
        port = squatter.getsockname()[1]
        done = demo(tmp_path, "--port", str(port))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"the worker could not start on 127.0.0.1:{port}" in done.stderr, done.stderr
    assert "already in use" in done.stderr  # the worker's own explanation, quoted
    assert "Traceback" not in done.stderr
    assert list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.parametrize("bad", ["0", "70000", "http"])
def test_demo_rejects_a_bad_port(tmp_path: Path, bad: str) -> None:
    done = demo(tmp_path, "--port", bad)
    assert done.returncode == 2
    assert "--port" in done.stderr


def test_demo_never_replays_into_another_data_dirs_worker(tmp_path: Path) -> None:
    """`--port` naming the user's own worker must not write the demo into their memory."""
    other = tmp_path / "users-memory"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": str(other), "CLAUDE_MEM_WORKER_PORT": str(port)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(CLI), *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    started = cli("worker", "start")
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        # The demo's data dir gets its own worker on a free port; the user's is left alone.
        done = demo(tmp_path, "--port", str(port))
        assert done.returncode == 0, done.stdout + done.stderr
        status = json.loads(cli("status", "--json").stdout)
        assert status["counts"]["sessions"] == 0, status
        assert cli("worker", "status", "--json").stdout.count('"running": true') == 1
    finally:
        cli("worker", "stop")
