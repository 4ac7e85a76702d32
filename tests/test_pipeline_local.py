"""The offline compressor: specific titles, evidence-exact files, stable types, no crashes."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claude_mem.pipeline.local.describe import DESCRIBERS
from claude_mem.pipeline.providers.base import (
    ObservationDraft,
    Provider,
    SessionContext,
    SummaryInput,
    ToolEvent,
)
from claude_mem.pipeline.providers.local import (
    LocalProvider,
    compress_events,
    create,
    summarize_session,
)
from claude_mem.pipeline.tools.evidence import evidence
from claude_mem.pipeline.tools.kinds import ToolKind
from claude_mem.settings import load as load_settings
from tests.agent_hooks import captures

SESSIONS = Path(__file__).parent / "fixtures" / "sessions"
TOOL_EVENTS = ("PostToolUse", "PostToolUseFailure", "AfterTool")
CWD = "/home/dev/proj"


@dataclass(frozen=True)
class Session:
    events: list[ToolEvent]
    ctx: SessionContext
    last_message: str


def load_session(path: Path) -> Session:
    """A recorded session: raw hook payloads, or the captures' {host, event, payload} lines.

    A PostToolUseFailure carries `error` instead of `tool_response`; it becomes
    `{"error": ...}`, the shape a failed tool's response is stored in.
    """
    events: list[ToolEvent] = []
    prompts: list[str] = []
    last, cwd = "", None
    for line in path.read_text(encoding="utf-8").splitlines():
        payload = json.loads(line)
        payload = payload.get("payload", payload)
        name, cwd = payload["hook_event_name"], payload.get("cwd", cwd)
        if name in ("UserPromptSubmit", "BeforeAgent"):
            prompts.append(payload["prompt"])
        elif name in TOOL_EVENTS:
            response = payload.get("tool_response", {"error": payload.get("error")})
            events.append(
                ToolEvent(
                    len(events) + 1,
                    payload["tool_name"],
                    payload["tool_input"],
                    response,
                    cwd=payload.get("cwd"),
                    prompt_number=len(prompts) or None,
                )
            )
        elif name in ("Stop", "AfterAgent"):
            last = payload.get("last_assistant_message") or payload.get("prompt_response") or ""
    ctx = SessionContext(1, "proj", "claude-code", cwd, tuple(prompts))
    return Session(events, ctx, last)


def compress(session: Session) -> list[ObservationDraft]:
    result = asyncio.run(LocalProvider().compress(session.events, session.ctx))
    assert (result.input_tokens, result.output_tokens, result.model) == (0, 0, None)
    assert result.summary is None
    return result.observations


def files_of(events: list[ToolEvent], obs: ObservationDraft) -> tuple[list[str], list[str]]:
    """(read, modified) as the consumer stores them: the evidence of the draft's own events."""
    known = {item.tool_use_row_id: item for item in events}
    return evidence(known[number] for number in obs.source_event_ids)


def by_id(session: Session) -> dict[int, ToolEvent]:
    return {item.tool_use_row_id: item for item in session.events}


def check_contract(session: Session, observations: list[ObservationDraft]) -> None:
    """Limits, and files exactly the evidence of each observation's own events."""
    events = by_id(session)
    used: list[int] = []
    for obs in observations:
        assert obs.title.strip()  # whole: shortened where shown, not here
        assert len(obs.subtitle) <= 120
        assert "\n" not in obs.title + obs.subtitle
        assert obs.narrative
        assert len(obs.facts) <= 8
        assert all(0 < len(fact) <= 200 for fact in obs.facts)
        assert obs.type in ("bugfix", "feature", "refactor", "change", "discovery")
        assert obs.concepts
        assert set(obs.concepts) <= {
            "how-it-works",
            "why-it-exists",
            "what-changed",
            "problem-solution",
            "gotcha",
            "pattern",
            "trade-off",
        }
        assert obs.source_event_ids
        assert set(obs.source_event_ids) <= set(events)
        used.extend(obs.source_event_ids)
    assert used == sorted(set(used))  # in order, each event used at most once


@pytest.fixture(scope="module")
def claude() -> Session:
    return load_session(SESSIONS / "claude-code-fix-empty-config.jsonl")


@pytest.fixture(scope="module")
def codex() -> Session:
    return load_session(SESSIONS / "codex-retry-backoff.jsonl")


@pytest.fixture(scope="module")
def gemini() -> Session:
    return load_session(SESSIONS / "gemini-rename-helper.jsonl")


def test_every_tool_kind_has_one_describer_and_no_other_kind_has_one() -> None:
    assert sorted(DESCRIBERS) == sorted(get_args(ToolKind))


def test_the_provider_meets_the_contract() -> None:
    provider = LocalProvider()
    assert isinstance(provider, Provider)
    assert provider.name == "local"
    made = create(load_settings())
    assert isinstance(made, LocalProvider)


# --- the Claude Code session ----------------------------------------------------------------


def test_claude_code_session(claude: Session) -> None:
    observations = compress(claude)
    check_contract(claude, observations)
    rows = [(o.type, o.title, o.source_event_ids) for o in observations]
    assert rows == [
        ("discovery", "Listed the working directory (4 entries)", [1]),
        ("discovery", "Read src/app/config.py (27 lines)", [2]),
        ("discovery", "Searched for 'load_config' in src (2 files)", [3]),
        ("discovery", "Read tests/test_config.py (25 lines)", [4]),
        ("discovery", "Ran tests in tests/test_config.py: 3 passed, 1 failed", [5]),
        (
            "bugfix",
            'Edited src/app/config.py (2 edits): replaced `app = raw["app"]` with 3 lines; '
            "changed load_config",
            [6, 7],
        ),
        ("discovery", "Ran tests in tests/test_config.py: 4 passed", [8]),
        ("change", "Committed: Fix crash on empty config file", [10]),  # 9 is a TodoWrite
    ]


def test_claude_code_details(claude: Session) -> None:
    listing, read, search, _, failing, edit, passing, commit = compress(claude)
    assert files_of(claude.events, read) == (["src/app/config.py"], [])
    assert "Defines: Config, _read, load_config" in read.facts
    assert "how-it-works" in read.concepts
    assert search.facts == ["Matched files: src/app/config.py, src/app/cli.py"]
    assert files_of(claude.events, search) == ([], [])
    assert failing.type == "discovery"
    assert "problem-solution" in failing.concepts
    assert (
        "Failed: tests/test_config.py::test_empty_file — TypeError: 'NoneType' object is not "
        "subscriptable"
    ) in failing.facts
    assert "Error: TypeError: 'NoneType' object is not subscriptable" in failing.facts
    assert files_of(claude.events, edit) == ([], ["src/app/config.py"])
    assert edit.concepts == ["what-changed", "problem-solution"]
    assert "Lines: +4 -1 in 2 edits" in edit.facts
    assert "Context: The app crashes with a TypeError" in edit.narrative
    assert passing.concepts == ["how-it-works"]
    assert commit.subtitle == "3f9c2ab on main"
    assert "1 file changed, 4 insertions(+), 1 deletion(-)" in commit.facts
    assert listing.facts == ["Entries: README.md, pyproject.toml, src, tests"]


def test_claude_code_summary(claude: Session) -> None:
    observations = compress(claude)
    request = SummaryInput(claude.last_message, tuple(claude.events), tuple(observations))
    result = asyncio.run(LocalProvider().summarize(request, claude.ctx))
    assert (result.input_tokens, result.output_tokens, result.model) == (0, 0, None)
    assert result.observations == []
    summary = result.summary
    assert summary is not None
    assert summary.request == claude.ctx.prompts[0]
    assert summary.investigated.startswith("Read src/app/config.py, tests/test_config.py;")
    assert "'load_config' in src" in summary.investigated
    assert summary.learned.startswith(
        "Ran tests in tests/test_config.py: 4 passed (earlier: 3 passed, 1 failed)"
    )
    assert "The root cause was" in summary.learned
    assert summary.completed.startswith(
        "Modified src/app/config.py. Committed: Fix crash on empty config file. Fixed the crash"
    )
    assert summary.next_steps == (
        "Next, we should add a test for a config file that only contains comments."
    )
    assert summary.notes == ""
    for text in (summary.request, summary.investigated, summary.learned, summary.completed):
        assert 0 < len(text) <= 500


# --- Codex and Gemini sessions --------------------------------------------------------------


def test_codex_session(codex: Session) -> None:
    observations = compress(codex)
    check_contract(codex, observations)
    assert [(o.type, o.title) for o in observations] == [
        ("discovery", "Searched for 'def request' in src (1 match)"),
        ("discovery", "Read src/http/client.py (lines 1-60)"),
        ("feature", "Edited src/http/client.py; created tests/test_retry.py"),
        ("discovery", "Ran tests in tests/test_retry.py: 2 passed"),
        ("discovery", "Checked git status: 2 changed files"),
        ("change", "Committed: Add retry with exponential backoff to HTTP client"),
    ]
    search, read, patch, _, status, commit = observations
    assert files_of(codex.events, read) == (["src/http/client.py"], [])
    assert files_of(codex.events, patch)[1] == ["src/http/client.py", "tests/test_retry.py"]
    assert "Updated src/http/client.py (+15 -4)" in patch.facts
    assert "Created tests/test_retry.py (+19)" in patch.facts
    assert status.facts == ["Changed: src/http/client.py, tests/test_retry.py"]
    assert "Added: tests/test_retry.py" in commit.facts
    assert search.facts[0].startswith("Match: src/http/client.py:12:")


def test_codex_summary(codex: Session) -> None:
    summary = summarize_session(SummaryInput(codex.last_message, tuple(codex.events)), codex.ctx)
    assert summary.completed.startswith(
        "Modified src/http/client.py, tests/test_retry.py. Committed: Add retry"
    )
    assert summary.next_steps.startswith("Remaining: make the attempt count configurable")
    assert summary.learned == "Ran tests in tests/test_retry.py: 2 passed"


def test_gemini_session(gemini: Session) -> None:
    observations = compress(gemini)
    check_contract(gemini, observations)
    assert [(o.type, o.title, o.source_event_ids) for o in observations] == [
        ("discovery", "Listed src (4 entries)", [1]),
        ("discovery", "Searched for 'formatDate' in src (3 matches)", [2]),
        ("discovery", "Read src/dates.ts (7 lines)", [3]),
        ("refactor", "Edited src/dates.ts: renamed formatDate → formatIsoDate", [4]),
        ("refactor", "Edited src/index.ts (2 edits): `formatDate` → `formatIsoDate`", [5, 6]),
        ("discovery", "Ran tests: 1 passed, 1 failed", [7]),
        ("refactor", "Edited src/dates.test.ts: `formatDate` → `formatIsoDate`", [8]),
        ("discovery", "Ran tests: 2 passed", [9]),
        ("refactor", "Created docs/dates.md (3 lines)", [10]),
        ("discovery", "Searched the web for 'Date toISOString local timezone' (1 source)", [11]),
    ]
    failing = observations[5]
    assert "Failed: formatIsoDate > pads single-digit months" in failing.facts
    assert "Error: TypeError: formatIsoDate is not a function" in failing.facts
    assert observations[1].facts == ["Matched files: src/dates.ts, src/index.ts"]
    assert files_of(gemini.events, observations[2])[0] == ["src/dates.ts"]
    assert files_of(gemini.events, observations[4])[1] == ["src/index.ts"]


@pytest.mark.parametrize("name", ["claude", "codex", "gemini"])
def test_deterministic(name: str, request: pytest.FixtureRequest) -> None:
    session: Session = request.getfixturevalue(name)
    assert compress(session) == compress(session)
    ask = SummaryInput(session.last_message, tuple(session.events))
    assert summarize_session(ask, session.ctx) == summarize_session(ask, session.ctx)


# --- the real captures ----------------------------------------------------------------------


def test_real_captures() -> None:
    paths = captures()
    assert len(paths) == 3
    for path in paths:
        session = load_session(path)
        observations = compress(session)
        check_contract(session, observations)
        titles = [o.title for o in observations]
        assert titles[0] == "Listed the working directory (1 entry)", path.name
        assert titles[1].startswith("Read README.txt ("), path.name
        assert files_of(session.events, observations[1])[0] == ["README.txt"]
        assert all(o.type == "discovery" for o in observations)
        summary = summarize_session(
            SummaryInput(session.last_message, tuple(session.events)), session.ctx
        )
        assert summary.investigated == "Read README.txt; Listed the working directory."
        assert "List the files here" in summary.request


# --- rules, one at a time -------------------------------------------------------------------


def run(*events: ToolEvent, prompts: tuple[str, ...] = ()) -> list[ObservationDraft]:
    return compress_events(list(events), SessionContext(1, "proj", "claude-code", CWD, prompts))


def tool(name: str, tool_input: Any, response: Any = None, number: int = 1) -> ToolEvent:
    return ToolEvent(number, name, tool_input, response, cwd=CWD, prompt_number=1)


CTX = SessionContext(1, "proj", "claude-code", CWD)
EDIT = tool("Edit", {"file_path": f"{CWD}/src/a.py", "old_string": "x = 1", "new_string": "x = 2"})


@pytest.mark.parametrize(
    ("prompt", "kind"),
    [
        ("Fix the login bug", "bugfix"),
        ("The build is failing on CI", "bugfix"),
        ("Rename helper to util", "refactor"),
        ("Clean up the parser", "refactor"),
        ("Add support for YAML", "feature"),
        ("Implement a cache", "feature"),
        ("Make the button blue", "change"),
        ("", "change"),
    ],
)
def test_edit_type_from_the_prompt(prompt: str, kind: str) -> None:
    (obs,) = run(EDIT, prompts=(prompt,) if prompt else ())
    assert obs.type == kind
    assert obs.title == "Edited src/a.py: `1` → `2`"
    assert "what-changed" in obs.concepts


def test_a_fix_comment_or_an_earlier_failure_makes_a_bugfix() -> None:
    comment = tool(
        "Edit", {"file_path": "a.py", "old_string": "", "new_string": "# fix: guard None\nx = 1"}
    )
    assert run(comment, prompts=("Tweak a.py",))[0].type == "bugfix"
    failure = tool("Bash", {"command": "make"}, "make: *** [all] Error 2\nExit code: 2")
    later = ToolEvent(2, "Edit", EDIT.tool_input, None, cwd=CWD)
    assert [o.type for o in run(failure, later)] == ["discovery", "bugfix"]


def test_a_failed_tool_call_is_no_hint_of_a_fix() -> None:
    failed = tool("Edit", EDIT.tool_input, "Error: String to replace not found in file.")
    retry = ToolEvent(2, "Edit", EDIT.tool_input, None, cwd=CWD)
    assert [o.type for o in run(failed, retry)] == ["discovery", "change"]


def test_the_prompt_of_the_events_own_turn_counts() -> None:
    second = ToolEvent(1, "Edit", EDIT.tool_input, None, cwd=CWD, prompt_number=2)
    assert run(second, prompts=("Fix the crash", "Now add a flag"))[0].type == "feature"


def test_merging_needs_same_file_same_type_and_adjacency() -> None:
    a = [tool("Edit", EDIT.tool_input, number=n) for n in (1, 2, 3)]
    other = tool("Edit", {"file_path": "src/b.py", "old_string": "y", "new_string": "z"}, number=4)
    again = tool("Edit", EDIT.tool_input, number=5)
    observations = run(*a, other, again)
    assert [o.source_event_ids for o in observations] == [[1, 2, 3], [4], [5]]
    assert observations[0].title == "Edited src/a.py (3 edits): `1` → `2`"
    write = tool("Write", {"file_path": "src/a.py", "content": "x = 3\n"}, number=6)
    assert [o.source_event_ids for o in run(a[0], write)] == [[1], [6]]


@pytest.mark.parametrize(
    ("old", "new", "title"),
    [
        ("", "def parse(text):\n    return text\n", "Edited src/a.py: added parse"),
        ("def parse(text):\n    return text\n", "", "Edited src/a.py: removed parse"),
        ("def a():\n    return 1\n", "def a():\n    return 2\n", "Edited src/a.py: changed a"),
        ("if exp < now:", "if exp <= now:", "Edited src/a.py: `<` → `<=`"),
        ("x = 1", "x = 1\ny = 2\nz = 3", "Edited src/a.py: added 2 lines"),
        ("a\nb\nc", "d\ne", "Edited src/a.py: replaced 3 lines with 2"),
        ("same", "same", "Edited src/a.py: no textual change"),
    ],
)
def test_edit_titles_say_what_changed(old: str, new: str, title: str) -> None:
    edit = tool("Edit", {"file_path": "src/a.py", "old_string": old, "new_string": new})
    assert run(edit)[0].title == title


def test_multiedit_notebook_and_write() -> None:
    multi = tool(
        "MultiEdit",
        {
            "file_path": "src/a.py",
            "edits": [
                {"old_string": "a = 1", "new_string": "a = 2"},
                {"old_string": "", "new_string": "class Cache:\n    pass"},
            ],
        },
    )
    assert run(multi)[0].title == "Edited src/a.py: 2 changes: `1` → `2`; added Cache"
    notebook = tool(
        "NotebookEdit",
        {
            "notebook_path": f"{CWD}/nb.ipynb",
            "cell_id": "c7",
            "new_source": "x",
            "edit_mode": "insert",
        },
    )
    assert run(notebook)[0].title == "Edited notebook nb.ipynb: inserted cell c7"
    write = tool(
        "Write",
        {"file_path": f"{CWD}/src/cache.py", "content": "class Cache:\n    pass\n"},
        {"type": "create", "filePath": f"{CWD}/src/cache.py"},
    )
    (obs,) = run(write)
    assert obs.title == "Created src/cache.py (2 lines): defines Cache"
    assert files_of([write], obs)[1] == ["src/cache.py"]


def test_a_failed_edit_is_a_discovery_that_says_so() -> None:
    failed = tool(
        "Edit",
        EDIT.tool_input,
        "<tool_use_error>String to replace not found in file.</tool_use_error>",
    )
    (obs,) = run(failed, prompts=("Fix it",))
    assert obs.type == "discovery"
    assert obs.title == "Edit to src/a.py failed: String to replace not found in file."
    assert files_of([failed], obs)[1] == ["src/a.py"]  # evidence is the input, whatever happened


@pytest.mark.parametrize(
    ("response", "title"),
    [
        (
            {"error": "Exit code 1\nError: Cannot find module 'x'\n    at Module._resolve"},
            "`npm run build` failed: Error: Cannot find module 'x'",
        ),
        (
            "Process exited with code 1\nOutput:\nsh: 1: tsc: not found\n",
            "`npm run build` failed: sh: 1: tsc: not found",
        ),
        (
            {
                "llmContent": 'Output: Traceback (most recent call last):\n  File "a", line 1\n'
                "ModuleNotFoundError: No module named 'x'\nExit Code: 1",
                "returnDisplay": "",
            },
            "`npm run build` failed: ModuleNotFoundError: No module named 'x'",
        ),
        (
            {"stdout": "", "stderr": "fatal: not a git repository", "interrupted": False},
            "`npm run build` failed: fatal: not a git repository",
        ),
        ({"stdout": "", "stderr": "", "interrupted": True}, "`npm run build` failed: interrupted"),
    ],
)
def test_failed_commands_are_discoveries_naming_the_failure(response: Any, title: str) -> None:
    (obs,) = run(tool("Bash", {"command": "npm run build"}, response))
    assert obs.type == "discovery"
    assert obs.title == title
    assert "gotcha" in obs.concepts


def test_grep_without_matches_did_not_fail() -> None:
    (obs,) = run(tool("Bash", {"command": "grep -rn TODO src"}, {"stdout": "", "exit_code": 1}))
    assert obs.title == "Searched for 'TODO' in src (no matches)"


@pytest.mark.parametrize(
    ("command", "output", "title"),
    [
        (
            "pytest -q",
            "..F\nFAILED t.py::test_x - assert 1 == 2\n1 failed, 2 passed in 0.1s",
            "Ran tests: 2 passed, 1 failed",
        ),
        (
            "npx jest",
            "Tests:       1 failed, 12 passed, 13 total\nTime: 1s",
            "Ran tests: 12 passed, 1 failed",
        ),
        (
            "cargo test",
            "test result: FAILED. 3 passed; 1 failed; 0 ignored\n"
            "test result: ok. 2 passed; 0 failed",
            "Ran tests: 5 passed, 1 failed",
        ),
        (
            "go test ./...",
            "--- FAIL: TestParse (0.00s)\n--- PASS: TestLoad (0.00s)\nFAIL\tpkg\t0.1s",
            "Ran tests: 1 passed, 1 failed",
        ),
        (
            "python -m unittest",
            "Ran 5 tests in 0.01s\n\nFAILED (failures=1, errors=1)",
            "Ran tests: 3 passed, 2 failed",
        ),
        (
            "uv run pytest tests/unit",
            "5 passed, 1 skipped in 0.3s",
            "Ran tests in tests/unit: 5 passed, 1 skipped",
        ),
        (
            "npm test",
            "  3 passing (10ms)\n  1 failing\n",
            "Ran tests: 3 passing, 1 failed".replace("passing", "passed"),
        ),
        ("pytest", "no tests ran in 0.01s", "Ran tests: no tests ran"),
        ("make test", "", "Ran tests: finished"),
    ],
)
def test_test_runs_report_counts(command: str, output: str, title: str) -> None:
    (obs,) = run(tool("Bash", {"command": command}, output))
    assert obs.type == "discovery"
    assert obs.title == title


def test_failing_test_names_are_facts() -> None:
    output = (
        "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: want 1, got 2\n"
        "test foo::bar ... FAILED\nFAIL: test_load (pkg.tests.LoadTest)\n"
    )
    (obs,) = run(tool("Bash", {"command": "go test ./..."}, output))
    assert "Failed: TestParse" in obs.facts
    assert "Failed: foo::bar" in obs.facts
    assert "Failed: test_load (pkg.tests.LoadTest)" in obs.facts
    (crash,) = run(
        tool("Bash", {"command": "pytest"}, "ImportError while loading conftest\nExit code: 4")
    )
    assert crash.title == "Tests failed: ImportError while loading conftest"


def test_git_commands() -> None:
    heredoc = "git commit -m \"$(cat <<'EOF'\nRefactor the loader\n\nLonger body.\nEOF\n)\""
    (commit,) = run(tool("Bash", {"command": heredoc}, {"stdout": "", "stderr": ""}))
    assert (commit.type, commit.title) == ("change", "Committed: Refactor the loader")
    (plain,) = run(tool("Bash", {"command": "git commit -am 'Tidy up'"}, ""))
    assert plain.title == "Committed: Tidy up"
    (failed,) = run(
        tool("Bash", {"command": "git commit -m x"}, {"error": "Exit code 1\nnothing to commit"})
    )
    assert failed.type == "discovery"
    assert failed.title.startswith("`git commit -m x` failed:")
    status = (
        "On branch main\nChanges not staged for commit:\n\tmodified:   src/a.py\n\n"
        'Untracked files:\n  (use "git add")\n\tnew.txt\n'
    )
    assert run(tool("Bash", {"command": "git status"}, status))[0].title == (
        "Checked git status: 2 changed files"
    )
    clean = "On branch main\nnothing to commit, working tree clean"
    assert run(tool("Bash", {"command": "git status"}, clean))[0].title.endswith("tree clean")
    diff = "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@\n-x\n+y\n+z\n"
    (looked,) = run(tool("Bash", {"command": "git diff"}, diff))
    assert (looked.type, looked.title) == ("discovery", "Reviewed git diff: 1 file, +2/-1")
    log = "abc1234 Fix crash\ndef5678 Add cache\n"
    assert run(tool("Bash", {"command": "git log --oneline -2"}, log))[0].title == (
        "Read git log: 2 commits"
    )


def test_noise_is_skipped() -> None:
    noise = [
        tool("TodoWrite", {"todos": []}, number=1),
        tool("LS", {"path": CWD}, "", number=2),
        tool(
            "list_directory", {"dir_path": "x"}, {"llmContent": "Directory x is empty."}, number=3
        ),
        tool("Bash", {"command": "cd src"}, "", number=4),
        tool("Bash", {"command": "ls empty"}, {"stdout": ""}, number=5),
        tool("update_plan", {"plan": []}, number=6),
    ]
    assert run(*noise) == []


def test_search_list_web_task_and_unknown_tools() -> None:
    glob = tool(
        "Glob",
        {"pattern": "**/*.py", "path": f"{CWD}/src"},
        {"filenames": [f"{CWD}/src/a.py"], "numFiles": 1},
    )
    assert run(glob)[0].title == "Found 1 file matching '**/*.py' in src"
    ls = tool("LS", {"path": f"{CWD}/src"}, f"- {CWD}/src/\n  - a.py\n  - b.py\n")
    assert run(ls)[0].title == "Listed src (2 entries)"
    fetch = tool(
        "WebFetch",
        {"url": "https://docs.python.org/3/library/shlex.html", "prompt": "How does quote work?"},
        {"code": 200, "result": "It escapes."},
    )
    assert (
        run(fetch)[0].title == "Fetched docs.python.org/3/library/shlex.html: How does quote work?"
    )
    search = tool(
        "WebSearch",
        {"query": "sqlite fts5 trigram"},
        {"results": [{"content": [{"title": "FTS5", "url": "https://sqlite.org/fts5.html"}]}]},
    )
    assert run(search)[0].title == "Searched the web for 'sqlite fts5 trigram' (1 source)"
    task = tool(
        "Task",
        {"description": "Find the config loader", "prompt": "...", "subagent_type": "Explore"},
        {"content": [{"type": "text", "text": "It is in src/app/config.py"}]},
    )
    (delegated,) = run(task)
    assert delegated.title == "Delegated to Explore agent: Find the config loader"
    assert "src/app/config.py" in delegated.narrative
    (mcp,) = run(
        tool("mcp__github__create_issue", {"title": "Crash on empty config", "body": "..."})
    )
    assert (mcp.type, mcp.title) == (
        "change",
        "Used github/create_issue: title='Crash on empty config', body='...'",
    )
    (unknown,) = run(tool("Frobnicate", {"level": 3, "nested": {"a": 1}}, "done"))
    assert (unknown.type, unknown.title) == ("discovery", "Used Frobnicate: level='3'")


def test_raw_output_is_quoted_sparingly() -> None:
    marker = "Z" * 40
    output = "\n".join(f"Error: {marker} {n}" for n in range(5000))
    for item in (
        tool("Bash", {"command": "make"}, {"stdout": output, "stderr": output, "exit_code": 2}),
        tool(
            "Bash",
            {"command": "pytest"},
            "\n".join(f"FAILED t.py::t{n}{marker} - {marker}" for n in range(500)),
        ),
        tool("Read", {"file_path": "big.txt"}, {"file": {"content": output, "numLines": 5000}}),
        tool("Task", {"description": "x"}, output),
        tool("Mystery", {"q": output}, output),
    ):
        (obs,) = run(item)
        assert obs.narrative.count("Z") <= 200
        assert sum(fact.count("Z") for fact in obs.facts) <= 300
        assert obs.title.count("Z") <= 120


# --- nothing breaks -------------------------------------------------------------------------


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for level in range(depth):
        value = {"a": value} if level % 2 else [value]
    return value


HOSTILE: list[Any] = [
    nested(3000),
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    "x" * 3_000_000,
    {"command": "cat " + "a.txt " * 100_000},
    {"file_path": "a.py", "old_string": "x\n" * 200_000, "new_string": "y\n" * 200_000},
    {"paths": ["a.py"] * 100_000, "edits": [{"old_string": "a", "new_string": "b"}] * 10_000},
    {"stdout": "\n" * 1_000_000, "stderr": "E" * 1_000_000, "exit_code": 10**30},
]


@pytest.mark.parametrize("name", ["Bash", "Edit", "MultiEdit", "read_many_files", "Task", "X"])
def test_hostile_values_are_handled_quickly(name: str) -> None:
    for value in HOSTILE:
        observations = run(tool(name, value, value))
        # Whole titles, yet short: notes build them from excerpts of the values.
        assert all(len(o.title) <= 300 for o in observations)
        summarize_session(SummaryInput("Done. Next: more.", (tool(name, value, value),)), CTX)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
NAMES = st.sampled_from(
    [
        "Edit",
        "MultiEdit",
        "Write",
        "NotebookEdit",
        "apply_patch",
        "Read",
        "read_file",
        "read_many_files",
        "Grep",
        "search_file_content",
        "Glob",
        "LS",
        "list_directory",
        "WebFetch",
        "WebSearch",
        "google_web_search",
        "Task",
        "TodoWrite",
        "Bash",
        "shell",
        "run_shell_command",
        "exec_command",
        "write_file",
        "replace",
        "mcp__a__b",
        "",
    ]
) | st.text(max_size=30)
SHAPED = st.fixed_dictionaries(
    {},
    optional={
        "command": st.sampled_from(
            ["pytest", "git commit -m x", "git status", "cat a", "ls", "grep x"]
        )
        | st.text(max_size=40),
        "file_path": st.text(max_size=20) | JSON,
        "old_string": st.text(max_size=40) | JSON,
        "new_string": st.text(max_size=40) | JSON,
        "edits": JSON,
        "content": st.text(max_size=40) | JSON,
        "pattern": JSON,
        "path": JSON,
        "url": JSON,
        "query": JSON,
    },
)
RESPONSES = JSON | st.fixed_dictionaries(
    {},
    optional={
        "stdout": st.text(max_size=60) | JSON,
        "stderr": st.text(max_size=30) | JSON,
        "error": JSON,
        "exit_code": JSON,
        "interrupted": JSON,
        "llmContent": JSON,
        "filenames": JSON,
        "numFiles": JSON,
        "file": JSON,
        "type": JSON,
    },
)


def test_stored_file_lists_reach_the_summary() -> None:
    # Older events and imported observations: their stored files, not this batch's evidence.
    request = SummaryInput("Done.", files_read=("old/a.py",), files_modified=("b.py", "b.py"))
    summary = summarize_session(request, CTX)
    assert summary.investigated == "Read old/a.py."
    assert summary.completed == "Modified b.py. Done."


@settings(max_examples=200, deadline=None)
@given(
    events=st.lists(
        st.tuples(
            NAMES,
            JSON | SHAPED,
            RESPONSES,
            st.none() | st.just(CWD) | st.text(max_size=10),
            st.none() | st.integers(-2, 3),
        ),
        min_size=1,
        max_size=4,
    ),
    prompts=st.lists(st.text(max_size=30), max_size=2),
    message=st.text(max_size=80),
)
def test_any_json_shape_gives_sane_observations(
    events: list[tuple[str, Any, Any, str | None, int | None]], prompts: list[str], message: str
) -> None:
    items = [
        ToolEvent(n, name, tool_input, response, cwd=cwd, prompt_number=number)
        for n, (name, tool_input, response, cwd, number) in enumerate(events, start=1)
    ]
    ctx = SessionContext(1, "proj", "claude-code", CWD, tuple(prompts))
    session = Session(items, ctx, message)
    observations = compress_events(items, ctx)
    check_contract(session, observations)
    assert observations == compress_events(items, ctx)
    summary = summarize_session(SummaryInput(message, tuple(items), tuple(observations)), ctx)
    for value in (summary.request, summary.investigated, summary.learned, summary.completed):
        assert len(value) <= 500
    assert len(summary.next_steps) <= 500


def test_empty_inputs() -> None:
    ctx = SessionContext(1, "proj", "claude-code")
    assert compress_events([], ctx) == []
    summary = summarize_session(SummaryInput(""), ctx)
    assert (summary.request, summary.investigated, summary.learned, summary.completed) == (
        "",
        "",
        "",
        "",
    )
    assert (summary.next_steps, summary.notes) == ("", "")


def test_content_mode_grep_counts_lines_and_files_not_zero_files() -> None:
    response = {
        "mode": "content",
        "numFiles": 0,
        "filenames": [],
        "content": f"{CWD}/src/a.py:3:def total(x):\n{CWD}/src/b.py:9:    total = 0\n",
        "numLines": 2,
    }
    (obs,) = run(tool("Grep", {"pattern": "total", "output_mode": "content"}, response))
    assert "0 files" not in obs.title
    assert "2 matching lines" in obs.title
    single = {"mode": "content", "numFiles": 0, "filenames": [], "content": "3:def total(x):"}
    (one,) = run(tool("Grep", {"pattern": "total", "path": f"{CWD}/src/a.py"}, single))
    assert "1 matching line" in one.title
