"""Setting names are one vocabulary: the type mypy checks, the settings table, and every
`CLAUDE_MEM_*` name the code spells agree, so a read of a key that does not exist fails a test."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

from claude_mem import settings
from claude_mem.pipeline.providers.base import model_key
from claude_mem.setting_keys import SettingKey

SRC = Path(__file__).resolve().parents[1] / "src"
NAME = re.compile(r"CLAUDE_MEM_[A-Z0-9_]+")


def names_in(root: Path) -> dict[str, set[str]]:
    """Every `CLAUDE_MEM_*` name spelt under `root` (text files), with the files spelling it."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".py", ".js", ".html", ".css", ".json", ".toml"):
            continue
        for name in NAME.findall(path.read_text("utf-8")):
            found.setdefault(name, set()).add(str(path.relative_to(root)))
    return found


def test_the_key_type_names_exactly_the_settings_table() -> None:
    assert typing.get_args(SettingKey) == tuple(settings.SPECS)


def test_the_code_spells_only_settings_and_explained_environment_variables() -> None:
    found = names_in(SRC)
    unknown = {
        name: sorted(files)
        for name, files in found.items()
        if name not in settings.SPECS and name not in settings.ENV_ONLY
    }
    assert not unknown, f"not a setting (add it to settings.py) nor in ENV_ONLY: {unknown}"
    assert set(settings.ENV_ONLY) <= set(found), "ENV_ONLY lists a variable nothing reads"
    assert not set(settings.ENV_ONLY) & set(settings.SPECS)


def test_the_scan_sees_names_in_code(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text('os.environ.get("CLAUDE_MEM_NOT_A_SETTING")\n')
    (tmp_path / "page.js").write_text("const k = 'CLAUDE_MEM_MODE';\n")
    (tmp_path / "notes.txt").write_text("CLAUDE_MEM_IGNORED\n")
    assert names_in(tmp_path) == {
        "CLAUDE_MEM_NOT_A_SETTING": {"mod.py"},
        "CLAUDE_MEM_MODE": {"page.js"},
    }


def test_a_key_built_at_run_time_is_checked_against_the_table() -> None:
    assert settings.setting_key("CLAUDE_MEM_GEMINI_MODEL") == "CLAUDE_MEM_GEMINI_MODEL"
    with pytest.raises(settings.SettingsError, match="CLAUDE_MEM_NOPE: unknown setting"):
        settings.setting_key("CLAUDE_MEM_NOPE")


def test_each_built_in_provider_has_its_model_setting_and_others_have_none() -> None:
    providers = ("anthropic", "openai-compatible", "gemini", "claude-agent-sdk")
    assert [model_key(name) for name in providers] == [
        "CLAUDE_MEM_ANTHROPIC_MODEL",
        "CLAUDE_MEM_OPENAI_MODEL",
        "CLAUDE_MEM_GEMINI_MODEL",
        "CLAUDE_MEM_CLAUDE_AGENT_SDK_MODEL",
    ]
    with pytest.raises(settings.SettingsError, match="CLAUDE_MEM_MISTRAL_MODEL: unknown"):
        model_key("mistral")
