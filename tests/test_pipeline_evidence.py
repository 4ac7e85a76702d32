"""File evidence comes from tool inputs only, for every host's tool shapes, and never fails."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.evidence import evidence, files_modified, files_read
from claude_mem.pipeline.tools.kinds import ToolKind, tool_kind
from claude_mem.pipeline.tools.patches import parse_patch
from claude_mem.pipeline.tools.paths import normalize_path
from claude_mem.pipeline.tools.programs import PROGRAMS, Role, all_have, has_role
from claude_mem.pipeline.tools.shell import shell_commands
from tests.agent_hooks import captures, read_capture

CWD = "/home/dev/proj"

PATCH = """*** Begin Patch
*** Update File: /home/dev/proj/src/a.py
@@
-old = 1
+new = 2
*** Add File: docs/notes.md
+hello
*** Delete File: /tmp/scratch.txt
*** Update File: src/b.py
*** Move to: src/c.py
@@
+x = 1
*** End Patch
"""
PATCH_FILES = ["src/a.py", "docs/notes.md", "/tmp/scratch.txt", "src/b.py", "src/c.py"]

UNIFIED = """diff --git a/src/app.py b/src/app.py
--- a/src/app.py\t2026-11-30 10:00:00
+++ b/src/app.py\t2026-11-30 10:01:00
@@ -1,2 +1,2 @@
-print("a")
+print("b")
--- /dev/null
+++ b/src/new.py
@@ -0,0 +1 @@
+x = 1
--- a/src/gone.py
+++ /dev/null
@@ -1 +0,0 @@
-y = 2
"""


def event(tool: str, tool_input: Any, response: Any = None, cwd: str | None = CWD) -> ToolEvent:
    return ToolEvent(1, tool, tool_input, response, cwd=cwd)


def shell(command: Any, **extra: Any) -> ToolEvent:
    return event("Bash", {"command": command, **extra})


# --- tool names ---------------------------------------------------------------------------


KIND_CASES = [
    ("Edit", "edit"),
    ("MultiEdit", "edit"),
    ("replace", "edit"),
    ("Write", "write"),
    ("write_file", "write"),
    ("NotebookEdit", "notebook"),
    ("apply_patch", "patch"),
    ("Read", "read"),
    ("read_file", "read"),
    ("read_many_files", "read_many"),
    ("Grep", "grep"),
    ("search_file_content", "grep"),
    ("Glob", "glob"),
    ("LS", "ls"),
    ("list_directory", "ls"),
    ("WebFetch", "fetch"),
    ("web_fetch", "fetch"),
    ("WebSearch", "websearch"),
    ("google_web_search", "websearch"),
    ("Task", "task"),
    ("TodoWrite", "noise"),
    ("Bash", "shell"),
    ("shell", "shell"),
    ("exec_command", "shell"),
    ("run_shell_command", "shell"),
    ("mcp__filesystem__read_file", "read"),
    ("mcp__filesystem__write_file", "write"),
    ("mcp__github__create_issue", "mcp"),
    ("mcp__x__bash", "mcp"),
    ("SomethingNew", "other"),
    ("", "other"),
]


@pytest.mark.parametrize(("name", "kind"), KIND_CASES)
def test_tool_kinds_match_names_across_hosts(name: str, kind: str) -> None:
    assert tool_kind(name) == kind


def test_the_name_cases_cover_every_kind() -> None:
    assert sorted({kind for _, kind in KIND_CASES}) == sorted(get_args(ToolKind))


# --- the shell program table ----------------------------------------------------------------


def test_every_role_is_played_and_traits_sit_on_their_roles() -> None:
    played = {role for entry in PROGRAMS.values() for role in entry.roles}
    assert played == set(get_args(Role))
    assert all(entry.roles for entry in PROGRAMS.values())
    for name, entry in PROGRAMS.items():
        assert not entry.value_flags or "reader" in entry.roles, name
        assert not entry.operands or "wrapper" in entry.roles, name
    assert not has_role("frobnicate", *get_args(Role))
    assert all_have([], "noise")
    assert not all_have(["cd", "rm"], "noise")


@pytest.mark.parametrize(
    ("command", "argv", "read"),
    [
        ("timeout 10 env FOO=1 cat a.py", ["cat", "a.py"], "a.py"),
        ("nohup sudo -E tail -n 5 log.txt", ["tail", "-n", "5", "log.txt"], "log.txt"),
        ("zsh -lc 'head -c 9 a.py'", ["head", "-c", "9", "a.py"], "a.py"),
    ],
)
def test_wrappers_shells_and_reader_flags_come_from_the_table(
    command: str, argv: list[str], read: str
) -> None:
    assert shell_commands(command) == [argv]
    assert files_read(shell(command)) == [read]


# --- the path rule ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "cwd", "expected"),
    [
        ("/home/dev/proj/src/a.py", CWD, "src/a.py"),
        ("/home/dev/proj/src/a.py", CWD + "/", "src/a.py"),
        ("/home/dev/proj", CWD, "."),
        ("/home/dev/project/a.py", CWD, "/home/dev/project/a.py"),  # a sibling, not inside
        ("/etc/hosts", CWD, "/etc/hosts"),
        ("src/a.py", CWD, "src/a.py"),
        ("./src//a.py", CWD, "src/a.py"),
        ("../other/a.py", CWD, "../other/a.py"),
        ("/home/dev/proj/src/a.py", None, "/home/dev/proj/src/a.py"),
        ("/home/dev/proj/src/a.py", "relative/dir", "/home/dev/proj/src/a.py"),
        ("/a/b.py", "/", "/a/b.py"),
        ("~/notes.md", CWD, "~/notes.md"),
        ("C:\\work\\a.py", "C:\\work", "C:\\work\\a.py"),
    ],
)
def test_path_rule(path: str, cwd: str | None, expected: str) -> None:
    assert normalize_path(path, cwd) == expected


def test_same_file_is_one_string_whatever_form_it_was_given_in() -> None:
    events = [
        event("Read", {"file_path": "/home/dev/proj/src/a.py"}),
        event("read_file", {"file_path": "src/a.py"}),
        shell("cat ./src/a.py"),
        event(
            "Edit", {"file_path": "/home/dev/proj/src/a.py", "old_string": "a", "new_string": "b"}
        ),
        event("apply_patch", {"command": "*** Begin Patch\n*** Update File: src/a.py\n+x\n"}),
    ]
    assert evidence(events) == (["src/a.py"], ["src/a.py"])


# --- modified -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        (
            "Edit",
            {"file_path": f"{CWD}/src/a.py", "old_string": "a", "new_string": "b"},
            "src/a.py",
        ),
        (
            "MultiEdit",
            {"file_path": f"{CWD}/src/a.py", "edits": [{"old_string": "a", "new_string": "b"}]},
            "src/a.py",
        ),
        ("Write", {"file_path": "/tmp/out.txt", "content": "x"}, "/tmp/out.txt"),
        ("NotebookEdit", {"notebook_path": f"{CWD}/nb.ipynb", "new_source": "x"}, "nb.ipynb"),
        ("NotebookEdit", {"notebookPath": "nb.ipynb", "new_source": "x"}, "nb.ipynb"),
        ("write_file", {"file_path": "docs/a.md", "content": "x"}, "docs/a.md"),
        ("replace", {"file_path": f"{CWD}/a.ts", "old_string": "a", "new_string": "b"}, "a.ts"),
        ("Edit", {"filePath": "src/b.py"}, "src/b.py"),
        ("mcp__filesystem__write_file", {"path": f"{CWD}/x.txt", "content": "x"}, "x.txt"),
        ("mcp__filesystem__edit_file", {"path": "y.txt", "edits": []}, "y.txt"),
    ],
)
def test_edit_tools_modify_their_path(tool: str, tool_input: Any, expected: str) -> None:
    item = event(tool, tool_input)
    assert files_modified(item) == [expected]
    assert files_read(item) == []


@pytest.mark.parametrize(
    "tool_input",
    [
        {"command": PATCH},
        {"input": PATCH},
        {"patch": PATCH},
        {"command": ["apply_patch", PATCH]},
        PATCH,
    ],
    ids=["command", "input", "patch", "argv", "freeform"],
)
def test_apply_patch_modifies_every_file_it_names(tool_input: Any) -> None:
    assert files_modified(event("apply_patch", tool_input)) == PATCH_FILES


def test_apply_patch_fed_to_a_shell_counts_too() -> None:
    command = f"apply_patch <<'EOF'\n{PATCH}EOF\n"
    assert files_modified(shell(command)) == PATCH_FILES
    assert files_modified(shell(["apply_patch", PATCH])) == PATCH_FILES
    assert files_read(shell(command)) == []


def test_unified_diff_paths_come_from_the_headers() -> None:
    assert files_modified(event("apply_patch", {"patch": UNIFIED})) == [
        "src/app.py",
        "src/new.py",
        "src/gone.py",
    ]
    actions = [(item.action, item.path) for item in parse_patch(UNIFIED)]
    assert actions == [("update", "src/app.py"), ("add", "src/new.py"), ("delete", "src/gone.py")]
    assert files_modified(shell(f"git apply <<'EOF'\n{UNIFIED}EOF")) == [
        "src/app.py",
        "src/new.py",
        "src/gone.py",
    ]


def test_patch_line_counts_and_kept_lines() -> None:
    first = parse_patch(PATCH)[0]
    assert (first.added, first.removed) == (("new = 2",), ("old = 1",))
    assert (first.added_count, first.removed_count) == (1, 1)
    assert parse_patch(PATCH)[3].move_to == "src/c.py"


def test_a_cut_command_yields_no_cut_path() -> None:
    huge = "cat first.txt\ncat " + "a" * 30_000
    assert files_read(shell(huge)) == ["first.txt"]


def test_text_without_patch_markers_modifies_nothing() -> None:
    assert files_modified(event("apply_patch", {"command": "echo hi"})) == []
    assert files_modified(shell("echo '+++ not a patch'")) == []


# --- read -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("Read", {"file_path": f"{CWD}/README.txt"}, ["README.txt"]),
        ("Read", {"filePath": "src/a.py", "offset": 10, "limit": 5}, ["src/a.py"]),
        ("read_file", {"file_path": "src/dates.ts"}, ["src/dates.ts"]),
        ("read_file", {"absolute_path": f"{CWD}/src/dates.ts"}, ["src/dates.ts"]),
        (
            "read_many_files",
            {"paths": [f"{CWD}/a.md", "b.md", "src/**/*.ts", 3, None]},
            ["a.md", "b.md"],
        ),
        ("mcp__filesystem__read_file", {"path": f"{CWD}/c.txt"}, ["c.txt"]),
    ],
)
def test_read_tools_read_their_paths(tool: str, tool_input: Any, expected: list[str]) -> None:
    item = event(tool, tool_input)
    assert files_read(item) == expected
    assert files_modified(item) == []


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat README.txt", ["README.txt"]),
        ("cat -n a.py b.py", ["a.py", "b.py"]),
        ("head -n 20 src/a.py", ["src/a.py"]),
        ("head -20 src/a.py", ["src/a.py"]),
        ("tail -f logs/app.log", ["logs/app.log"]),
        ("tail -n +5 --lines 3 x.txt", ["x.txt"]),
        ("less /home/dev/proj/NOTES.md", ["NOTES.md"]),
        ("bat -r 1:20 --language py src/a.py", ["src/a.py"]),
        ("nl -ba src/a.py", ["src/a.py"]),
        ("sed -n '1,80p' src/x.py", ["src/x.py"]),
        ("sed -n -e 5p src/x.py", ["src/x.py"]),
        ("/usr/bin/cat /etc/hosts", ["/etc/hosts"]),
        ("cd src && cat a.py", ["src/a.py"]),
        ("cd /home/dev/proj/pkg; cat mod.py", ["pkg/mod.py"]),
        ("cat a.txt | grep foo | head -n 3", ["a.txt"]),
        ("cat a.txt 2>/dev/null > copy.txt", ["a.txt"]),
        ("LC_ALL=C sudo cat secret.txt", ["secret.txt"]),
        ("bash -lc 'cat inner.txt'", ["inner.txt"]),
        ("cat a.txt # show it", ["a.txt"]),
        ("cat one.txt\ncat two.txt", ["one.txt", "two.txt"]),
        ("cat <<EOF > out.txt\nnot-a-file.txt\nEOF\ncat real.txt", ["real.txt"]),
        ("cat *.py", []),
        ("cat $FILE", []),
        ("cat `ls`", []),
        ("cat -", []),
        ("cd $HOME && cat a.txt", []),
        ("cd $DIR && cat /abs/a.txt", ["/abs/a.txt"]),
        ("sed -i 's/a/b/' x.py", []),
        ("sed 's/a/b/' x.py", []),
        ("grep -rn foo src", []),
        ("python script.py", []),
        ("cat 'unbalanced", []),
        ("", []),
    ],
)
def test_shell_reads_are_plain_and_conservative(command: str, expected: list[str]) -> None:
    assert files_read(shell(command)) == expected
    assert files_modified(shell(command)) == []


def test_shell_command_shapes_and_workdir() -> None:
    assert files_read(event("shell", {"command": ["bash", "-lc", "cat a.py"]})) == ["a.py"]
    assert files_read(event("shell", {"command": ["cat", "b.py"]})) == ["b.py"]
    assert files_read(event("exec_command", {"cmd": "cat c.py"})) == ["c.py"]
    assert files_read(shell("cat d.py", workdir=f"{CWD}/pkg")) == ["pkg/d.py"]
    assert files_read(event("run_shell_command", {"command": "cat e.py", "dir_path": "web"})) == [
        "web/e.py"
    ]
    assert files_read(event("Bash", "cat f.py")) == ["f.py"]  # a bare string input
    assert files_read(event("Bash", json.dumps({"command": "cat g.py"}))) == ["g.py"]


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Grep", {"pattern": "x", "path": f"{CWD}/src"}),
        ("Glob", {"pattern": "**/*.py"}),
        ("LS", {"path": CWD}),
        ("WebFetch", {"url": "https://example.com/a.py", "prompt": "?"}),
        ("web_fetch", {"prompt": "Summarise https://example.com/a.py"}),
        ("WebSearch", {"query": "a.py"}),
        ("google_web_search", {"query": "a.py"}),
        ("glob", {"pattern": "*.py", "path": "src"}),
        ("search_file_content", {"pattern": "x", "dir_path": "src"}),
        ("list_directory", {"dir_path": "src"}),
        ("Task", {"description": "d", "prompt": "read src/a.py"}),
        ("TodoWrite", {"todos": [{"content": "edit src/a.py"}]}),
        ("mcp__github__get_file", {"path": "src/a.py"}),
        ("Unknown", {"file_path": "src/a.py"}),
    ],
)
def test_other_tools_have_no_file_evidence(tool: str, tool_input: Any) -> None:
    assert (files_read(event(tool, tool_input)), files_modified(event(tool, tool_input))) == (
        [],
        [],
    )


def test_evidence_dedups_in_first_seen_order() -> None:
    events = [
        event("Read", {"file_path": "b.py"}),
        event("Read", {"file_path": "a.py"}),
        event("Read", {"file_path": f"{CWD}/b.py"}),
        event("Write", {"file_path": "c.py", "content": ""}),
        event("Edit", {"file_path": "c.py"}),
        event("Edit", {"file_path": "b.py"}),
    ]
    assert evidence(events) == (["b.py", "a.py"], ["c.py", "b.py"])
    assert evidence([]) == ([], [])


# --- garbage never breaks it ----------------------------------------------------------------

GARBAGE: list[Any] = [
    None,
    0,
    1.5,
    True,
    "",
    "not json {",
    "{broken json",
    [],
    [None, 1, {"a": []}],
    {},
    {"file_path": None},
    {"file_path": 5},
    {"file_path": ""},
    {"file_path": "   "},
    {"file_path": "a\nb"},
    {"file_path": "x" * 10_000},
    {"file_path": ["a.py"]},
    {"file_path": {"nested": "a.py"}},
    {"paths": "a.py"},
    {"paths": [[], {}, None]},
    {"command": None},
    {"command": 42},
    {"command": ["cat", 5]},
    {"command": "'" * 999},
    {"command": "cat " + "a" * 50_000},
    {"command": "*** Begin Patch\n*** Update File: \n*** Move to: \n"},
    {"edits": "nope"},
]
KNOWN_TOOLS = [
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "apply_patch",
    "Read",
    "read_many_files",
    "Bash",
    "run_shell_command",
    "Grep",
    "LS",
]


@pytest.mark.parametrize("tool", KNOWN_TOOLS)
def test_garbage_inputs_give_no_files_and_no_errors(tool: str) -> None:
    for value in GARBAGE:
        item = event(tool, value, response=value)
        assert (files_read(item), files_modified(item)) == ([], []), value


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
PATHISH = st.fixed_dictionaries(
    {},
    optional={
        "file_path": st.text(max_size=30) | JSON,
        "path": st.text(max_size=30),
        "paths": st.lists(st.text(max_size=20), max_size=3),
        "command": st.text(max_size=80) | st.lists(st.text(max_size=20), max_size=3),
        "patch": st.text(max_size=80),
    },
)


@settings(max_examples=150, deadline=None)
@given(
    tool=st.sampled_from([*KNOWN_TOOLS, "read_file", "write_file", "replace"])
    | st.text(max_size=20),
    tool_input=JSON | PATHISH,
    cwd=st.none() | st.sampled_from([CWD, "/", "rel", ""]) | st.text(max_size=20),
)
def test_any_json_shape_is_safe(tool: str, tool_input: Any, cwd: str | None) -> None:
    item = event(tool, tool_input, cwd=cwd)
    read, modified = evidence([item, item])
    assert read == files_read(item)
    assert modified == files_modified(item)
    assert all(isinstance(p, str) and p.strip() for p in read + modified)


# --- helpers --------------------------------------------------------------------------------


def test_shell_commands_split_and_unwrap() -> None:
    assert shell_commands("cd a && FOO=1 time ls -la | wc -l; git status") == [
        ["cd", "a"],
        ["ls", "-la"],
        ["wc", "-l"],
        ["git", "status"],
    ]
    assert shell_commands("echo 'a && b' > out.txt 2>&1") == [["echo", "a && b"]]
    assert shell_commands('sh -c "cat x && rm y"') == [["cat", "x"], ["rm", "y"]]
    assert shell_commands("cat 'open") == []


# --- real captures --------------------------------------------------------------------------


def reference_tool_events() -> list[tuple[str, ToolEvent]]:
    """The PostToolUse / AfterTool events of the real captures in tests/fixtures/agent-hooks/."""
    found: list[tuple[str, ToolEvent]] = []
    for path in captures():
        for _event, payload in read_capture(path):
            if payload["hook_event_name"] in ("PostToolUse", "AfterTool"):
                found.append(
                    (
                        path.name,
                        ToolEvent(
                            len(found) + 1,
                            payload["tool_name"],
                            payload["tool_input"],
                            payload["tool_response"],
                            cwd=payload["cwd"],
                        ),
                    )
                )
    return found


def test_real_captures_give_the_expected_evidence() -> None:
    found = reference_tool_events()
    assert sorted({name for name, _ in found}) == [
        "claude-code-2.1.332.jsonl",
        "codex-0.171.0.jsonl",
        "gemini-cli-0.61.0.jsonl",
    ]
    table = {
        (name, item.tool_name, json.dumps(item.tool_input, sort_keys=True)): (
            files_read(item),
            files_modified(item),
        )
        for name, item in found
    }
    reads = {key: value for key, value in table.items() if value != ([], [])}
    assert sorted(reads.values()) == [(["README.txt"], [])] * 3
    for name, item in found:
        if "ls" in json.dumps(item.tool_input):
            assert files_read(item) == []
        assert files_modified(item) == [], name
