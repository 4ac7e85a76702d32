"""Each host's transcript format, from the fixtures (tests/fixtures/transcripts/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_mem.transcripts import Entry, read_since
from tests.agent_hooks import AGENT_HOOKS, read_capture

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"


def entries(name: str, platform: str) -> list[Entry]:
    path = FIXTURES / name
    if not path.is_file():
        pytest.fail(f"transcript fixture {path} is missing")
    chunk = read_since(str(path), 0, platform=platform)
    assert chunk.entries, name
    return chunk.entries


def roles(found: list[Entry]) -> list[tuple[str, str, str | None]]:
    return [(e.role, e.text, e.tool_use_id) for e in found]


def hook_ids(capture: str) -> list[str]:
    calls = read_capture(AGENT_HOOKS / capture)
    return [payload["tool_use_id"] for event, payload in calls if event == "PreToolUse"]


def test_claude_code_real_transcript() -> None:
    found = entries("claude-code-2.1.332.jsonl", "claude-code")
    ls_id, read_id = (e.tool_use_id for e in found if e.role == "tool_use")
    assert roles(found) == [
        ("user", "List the files here, then read README.txt", None),
        ("assistant", "I'll list the files first.", None),
        ("tool_use", "Bash", ls_id),
        ("tool_result", "README.txt", ls_id),
        ("assistant", "Now reading the README.", None),
        ("tool_use", "Read", read_id),
        ("tool_result", "1\thello from README (e2e fixture)\n2", read_id),
        ("assistant", "The README says hello; it is the e2e fixture.", None),
    ]
    assert str(ls_id).startswith("toolu_")
    assert [e.end for e in found] == sorted(e.end for e in found)


def test_claude_code_skips_meta_sidechain_and_command_echoes(tmp_path: Path) -> None:
    def line(content: object, **extra: object) -> str:
        message = {"role": "user", "content": content}
        return json.dumps({"type": "user", "message": message, **extra})

    path = tmp_path / "t.jsonl"
    path.write_text(
        "\n".join(
            [
                line("meta words", isMeta=True),
                line("sub-agent words", isSidechain=True),
                line("<command-name>/clear</command-name>"),
                line("<local-command-stdout>done</local-command-stdout>"),
                line([{"type": "text", "text": "a real prompt"}]),
                '{"type": "attachment", "attachment": {"type": "date"}}',
                "",
            ]
        )
    )
    found = read_since(str(path), 0, platform="claude-code").entries
    assert roles(found) == [("user", "a real prompt", None)]


def test_codex_rollout_ids_are_the_hooks_ids() -> None:
    found = entries("codex-0.171.0.jsonl", "codex")
    first, second = hook_ids("codex-0.171.0.jsonl")
    assert [(e.role, e.tool_use_id) for e in found] == [
        ("user", None),
        ("assistant", None),
        ("tool_use", first),
        ("tool_result", first),
        ("tool_use", second),
        ("tool_result", second),
        ("assistant", None),
    ]
    assert found[0].text == "List the files here, then read README.txt"  # no injected context
    assert found[-1].text == "MOCK-FINAL: I listed the files."  # event_msg copies not repeated
    assert "hello from README" in found[5].text


def test_gemini_chat_reads_settled_messages_once(tmp_path: Path) -> None:
    found = entries("gemini-cli-0.61.0.json", "gemini-cli")
    assert [(e.role, e.text.splitlines()[0]) for e in found] == [
        ("user", "List the files here, then read README.txt"),
        ("assistant", "I'll list the files first."),
        ("tool_use", "run_shell_command"),
        ("tool_result", "Output: README.txt"),
        ("tool_use", "read_file"),
        ("tool_result", "hello from README (e2e fixture)"),
    ]
    assert found[2].tool_use_id == found[3].tool_use_id == "run_shell_command-1764476769700-a1b2c3"
    # The CLI rewrites the file with one more message: only the new settled ones come back.
    chat = json.loads((FIXTURES / "gemini-cli-0.61.0.json").read_text())
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(chat, indent=2))
    first = read_since(str(path), 0, platform="gemini-cli")
    assert roles(first.entries) == roles(found)
    chat["messages"].append({"id": "m-user-2", "type": "user", "content": "and now?"})
    path.write_text(json.dumps(chat, indent=2))
    second = read_since(str(path), first.offset, platform="gemini-cli")
    assert roles(second.entries) == [("assistant", "MOCK-FINAL: I listed the files.", None)]
    assert read_since(str(path), second.offset, platform="gemini-cli").entries == []


def test_cursor_transcript() -> None:
    found = entries("cursor.jsonl", "cursor")
    assert roles(found) == [
        ("user", "List the files here, then read README.txt", None),
        ("assistant", "I'll list the files first.", None),
        ("assistant", "The folder holds README.txt, which says hello from the e2e fixture.", None),
    ]


@pytest.mark.parametrize(
    ("name", "platform"),
    [("claude-code-2.1.332.jsonl", "claude-code"), ("codex-0.171.0.jsonl", "codex"),
     ("cursor.jsonl", "cursor")],
)  # fmt: skip
def test_an_unknown_platform_reads_every_jsonl_host(name: str, platform: str) -> None:
    assert roles(entries(name, "some-new-host")) == roles(entries(name, platform))
