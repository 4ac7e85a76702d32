"""The installer's building blocks: merging hook tables, reading, backing up, writing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from claude_mem.install import files, merge
from claude_mem.install.base import ConfigError, Hook, HookCommand, ShapeError, Target, is_ours

CMD = HookCommand("/opt/venv/bin/python", "/opt/site/claude_mem/hooks/entry.py")
OTHER = {"type": "command", "command": "~/bin/notify.sh", "timeout": 5}


def grouped_target(path: Path, hooks: tuple[Hook, ...]) -> Target:
    entries = merge.grouped("claude-code", hooks, CMD)
    return Target(
        path,
        lambda doc: merge.add(doc, entries, flat=False),
        lambda doc: merge.remove(doc, flat=False),
        "hooks",
    )


def test_commands_are_quoted_and_recognised() -> None:
    spaced = HookCommand("/my venv/bin/python", "/my site/claude_mem/hooks/entry.py")
    line = spaced.line("claude-code", "PostToolUse")
    assert line == (
        "'/my venv/bin/python' -I -S '/my site/claude_mem/hooks/entry.py' claude-code PostToolUse"
    )
    assert is_ours(line)
    assert not is_ours("python other/hooks/entry.py")
    assert not is_ours(None)


def test_add_keeps_others_in_place_and_reinstall_is_stable() -> None:
    doc: dict[str, Any] = {
        "hooks": {
            "PostToolUse": [{"matcher": "Bash", "hooks": [OTHER]}],
            "Stop": [{"hooks": [OTHER]}],
        }
    }
    hooks = (Hook("SessionStart", 60, "startup"), Hook("PostToolUse", 30, "*"))
    entries = merge.grouped("claude-code", hooks, CMD)
    merge.add(doc, entries, flat=False)
    table = doc["hooks"]
    assert list(table) == ["PostToolUse", "Stop", "SessionStart"]
    assert table["PostToolUse"][0] == {"matcher": "Bash", "hooks": [OTHER]}
    assert table["PostToolUse"][1]["matcher"] == "*"
    assert table["Stop"] == [{"hooks": [OTHER]}]
    # Someone moved our group first: a re-install keeps it where it now is.
    table["PostToolUse"].reverse()
    snapshot = json.dumps(doc)
    merge.add(doc, entries, flat=False)
    assert json.dumps(doc) == snapshot
    merge.remove(doc, flat=False)
    assert doc == {
        "hooks": {
            "PostToolUse": [{"matcher": "Bash", "hooks": [OTHER]}],
            "Stop": [{"hooks": [OTHER]}],
        }
    }


def test_shared_group_keeps_the_other_handler_and_stale_events_go() -> None:
    ours_old = {"type": "command", "command": CMD.line("claude-code", "Notification")}
    doc: dict[str, Any] = {
        "hooks": {
            "Notification": [{"hooks": [ours_old]}],
            "PostToolUse": [{"matcher": "*", "hooks": [OTHER, ours_old]}],
        }
    }
    merge.add(doc, merge.grouped("claude-code", (Hook("PostToolUse", 30, "*"),), CMD), flat=False)
    assert "Notification" not in doc["hooks"]  # an event an older version registered
    groups = doc["hooks"]["PostToolUse"]
    assert groups[0]["hooks"][0]["command"].endswith("claude-code PostToolUse")
    assert groups[1] == {"matcher": "*", "hooks": [OTHER]}


def test_flat_tables() -> None:
    other = {"command": "./audit.sh"}
    doc: dict[str, Any] = {"version": 1, "hooks": {"stop": [other]}}
    entries = [("stop", {"command": CMD.line("cursor", "stop")})]
    merge.add(doc, entries, flat=True)
    assert doc["hooks"]["stop"] == [other, entries[0][1]]
    merge.remove(doc, flat=True)
    assert doc == {"version": 1, "hooks": {"stop": [other]}}


def test_unexpected_shapes_are_refused_not_rewritten(tmp_path: Path) -> None:
    hooks = (Hook("Stop", 30),)
    for text in ('{"hooks": []}', '{"hooks": {"Stop": {"x": 1}}}', "[1, 2]", "{oops"):
        path = tmp_path / "settings.json"
        path.write_text(text)
        with pytest.raises(ConfigError) as caught:
            files.plan(grouped_target(path, hooks), "install")
        assert str(path) in str(caught.value)
        assert path.read_text() == text


def test_blank_file_counts_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("  \n")
    change = files.plan(grouped_target(path, (Hook("Stop", 30),)), "install")
    assert change.changed
    assert change.after is not None
    assert json.loads(change.after)["hooks"]["Stop"][0]["hooks"][0]["timeout"] == 30


@pytest.mark.parametrize(("indent", "unit"), [(4, "    "), ("\t", "\t")])
def test_indentation_mode_and_symlinks_are_kept(
    tmp_path: Path, indent: int | str, unit: str
) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text(json.dumps({"model": "opus", "env": {"A": "1"}}, indent=indent))
    real.chmod(0o600)
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    change = files.plan(grouped_target(link, (Hook("Stop", 30),)), "install")
    saved = files.apply(change)
    assert link.is_symlink()
    assert saved is not None
    assert saved.parent == files.backup_dir()  # the data dir's, never beside the file
    assert saved.name.startswith(files.backup_name(link) + ".bak-")  # named after the link
    assert saved.read_text() == json.dumps({"model": "opus", "env": {"A": "1"}}, indent=indent)
    text = real.read_text()
    assert f'\n{unit}"model": "opus",' in text
    assert (real.stat().st_mode & 0o777) == 0o600
    assert json.loads(text)["env"] == {"A": "1"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "dotfiles", "settings.json"]


def test_backups_never_overwrite_each_other(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_text("{}")
    first, second = files.backup(path), files.backup(path)
    assert first != second
    assert first.read_text() == second.read_text() == "{}"


def test_new_files_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        files.write_atomic(tmp_path / "a" / "b.json", "{}\n")
    finally:
        os.umask(old)
    assert ((tmp_path / "a" / "b.json").stat().st_mode & 0o777) == 0o640
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["b.json"]  # no temporary left


def test_toml_table_is_replaced_in_place_and_nothing_else_moves() -> None:
    from claude_mem.install import toml_table

    path = ("mcp_servers", "claude-mem-py")
    ours = {"command": "/v/python", "args": ["-m", "claude_mem.cli", "mcp"]}
    old = (
        'a = 1 # note\n\n[mcp_servers.claude-mem-py]\ncommand = "old"\n\n'
        '[mcp_servers.claude-mem-py.env]\nX = "1"\n\n[z]\nb = "\u00e9"\n'
    )
    new = toml_table.edit(old, path, ours)
    assert new == (
        'a = 1 # note\n\n[mcp_servers.claude-mem-py]\ncommand = "/v/python"\n'
        'args = ["-m", "claude_mem.cli", "mcp"]\n\n[z]\nb = "\u00e9"\n'
    )
    assert toml_table.edit(new, path, ours) is new
    assert toml_table.edit(new, path, None) == 'a = 1 # note\n\n[z]\nb = "\u00e9"\n'
    created = toml_table.edit(None, path, ours)
    assert created is not None
    assert toml_table.edit(created, path, None) is None  # nothing else left: the file goes
    odd = toml_table.edit(None, ("mcp_servers", "a b"), {"command": 'q"\\\x7f'})
    assert odd == '[mcp_servers."a b"]\ncommand = "q\\"\\\\\\u007f"\n'
    for refused in ('x = """\n[mcp_servers.claude-mem-py]\n', "mcp_servers.claude-mem-py.a = 1\n"):
        with pytest.raises(ShapeError):
            toml_table.edit(refused, path, ours)
