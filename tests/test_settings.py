from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from claude_mem import paths, settings


def write(data: object) -> Path:
    path = paths.settings_path()
    paths.ensure_data_dir()
    path.write_text(json.dumps(data))
    return path


def test_defaults_without_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_MEM_TURN_IDLE_S")  # the suite's own (tests/conftest.py)
    monkeypatch.delenv("CLAUDE_MEM_GIT_HISTORY")
    monkeypatch.delenv("CLAUDE_MEM_HOOK_PYTHON")
    loaded = settings.load()
    assert loaded.problems == []
    assert loaded["CLAUDE_MEM_PROVIDER"] == "local"
    assert 38700 <= loaded.get_int("CLAUDE_MEM_WORKER_PORT") < 38800
    assert loaded.get_bool("CLAUDE_MEM_REDACT_SECRETS") is True
    assert loaded.get_bool("CLAUDE_MEM_GIT_HISTORY") is True
    assert "TodoWrite" in loaded.get_list("CLAUDE_MEM_SKIP_TOOLS")
    assert all(source == "default" for source in loaded.sources.values())


def test_default_port_avoids_original_range() -> None:
    port = settings.SPECS["CLAUDE_MEM_WORKER_PORT"].default
    assert isinstance(port, int)
    assert not 37700 <= port < 37800


def test_file_values_strings_and_natives_both_parse() -> None:
    write(
        {
            "CLAUDE_MEM_CONTEXT_OBSERVATIONS": "25",
            "CLAUDE_MEM_SEMANTIC_INJECT": "true",
            "CLAUDE_MEM_CONTEXT_FULL_COUNT": 2,
            "CLAUDE_MEM_REDACT_SECRETS": False,
            "CLAUDE_MEM_LOG_LEVEL": "debug",
        }
    )
    loaded = settings.load()
    assert loaded.problems == []
    assert loaded["CLAUDE_MEM_CONTEXT_OBSERVATIONS"] == 25
    assert loaded["CLAUDE_MEM_SEMANTIC_INJECT"] is True
    assert loaded["CLAUDE_MEM_CONTEXT_FULL_COUNT"] == 2
    assert loaded["CLAUDE_MEM_REDACT_SECRETS"] is False
    assert loaded["CLAUDE_MEM_LOG_LEVEL"] == "DEBUG"
    assert loaded.sources["CLAUDE_MEM_CONTEXT_OBSERVATIONS"] == "file"


def test_env_overrides_file(monkeypatch: pytest.MonkeyPatch) -> None:
    write({"CLAUDE_MEM_WORKER_PORT": 40000})
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "41000")
    loaded = settings.load()
    assert loaded["CLAUDE_MEM_WORKER_PORT"] == 41000
    assert loaded.sources["CLAUDE_MEM_WORKER_PORT"] == "env"


def test_invalid_value_falls_back_and_names_key_and_allowed_values() -> None:
    write({"CLAUDE_MEM_LOG_LEVEL": "LOUD", "CLAUDE_MEM_WORKER_PORT": 80})
    loaded = settings.load()
    assert loaded["CLAUDE_MEM_LOG_LEVEL"] == "INFO"
    assert loaded["CLAUDE_MEM_WORKER_PORT"] == settings.SPECS["CLAUDE_MEM_WORKER_PORT"].default
    joined = "\n".join(loaded.problems)
    assert "CLAUDE_MEM_LOG_LEVEL: 'LOUD' is not allowed; expected one of DEBUG, INFO" in joined
    assert (
        "CLAUDE_MEM_WORKER_PORT: 80 is not allowed; expected a whole number from 1024 to 65535"
        in joined
    )


@pytest.mark.parametrize(
    ("key", "raw"),
    [
        ("CLAUDE_MEM_SEMANTIC_INJECT", "maybe"),
        ("CLAUDE_MEM_CONTEXT_OBSERVATIONS", "lots"),
        ("CLAUDE_MEM_CONTEXT_OBSERVATIONS", True),
        ("CLAUDE_MEM_CONTEXT_OBSERVATIONS", "999"),
        ("CLAUDE_MEM_WORKER_HOST", "0.0.0.0"),
        ("CLAUDE_MEM_MODEL", ["a", "list"]),
        ("CLAUDE_MEM_CONTEXT_FULL_FIELD", "everything"),
        ("CLAUDE_MEM_PROVIDER", "../evil"),
        ("CLAUDE_MEM_PROVIDER", ""),
    ],
)
def test_spec_rejects(key: str, raw: object) -> None:
    with pytest.raises(settings.SettingsError, match=key):
        settings.SPECS[key].parse(raw)


def test_unknown_keys_kept_and_reported_not_fatal() -> None:
    write({"CLAUDE_MEM_FUTURE_THING": "x", "CLAUDE_MEM_MODEL": "m"})
    loaded = settings.load()
    assert loaded.unknown == {"CLAUDE_MEM_FUTURE_THING": "x"}
    assert loaded.problems == []
    settings.save({"CLAUDE_MEM_MODEL": "other"})
    assert json.loads(paths.settings_path().read_text())["CLAUDE_MEM_FUTURE_THING"] == "x"


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe\x00garbage", b"[1, 2]", b""])
def test_corrupt_file_is_a_problem_not_a_crash(content: bytes) -> None:
    paths.ensure_data_dir()
    paths.settings_path().write_bytes(content)
    loaded = settings.load()
    assert loaded["CLAUDE_MEM_PROVIDER"] == "local"
    assert len(loaded.problems) == 1
    assert str(paths.settings_path()) in loaded.problems[0]


def test_bom_and_legacy_env_nesting_accepted() -> None:
    paths.ensure_data_dir()
    body = json.dumps({"env": {"CLAUDE_MEM_CONTEXT_OBSERVATIONS": "7"}})
    paths.settings_path().write_bytes(b"\xef\xbb\xbf" + body.encode())
    loaded = settings.load()
    assert loaded.problems == []
    assert loaded["CLAUDE_MEM_CONTEXT_OBSERVATIONS"] == 7


def test_save_validates_all_or_nothing() -> None:
    settings.save({"CLAUDE_MEM_CONTEXT_OBSERVATIONS": "10"})
    with pytest.raises(settings.SettingsError, match="CLAUDE_MEM_LOG_LEVEL"):
        settings.save({"CLAUDE_MEM_CONTEXT_OBSERVATIONS": "12", "CLAUDE_MEM_LOG_LEVEL": "LOUD"})
    assert settings.load()["CLAUDE_MEM_CONTEXT_OBSERVATIONS"] == 10
    with pytest.raises(settings.SettingsError, match="unknown setting"):
        settings.save({"CLAUDE_MEM_NOPE": "1"})


def test_save_writes_typed_values_0600() -> None:
    settings.save({"CLAUDE_MEM_SEMANTIC_INJECT": "yes"})
    path = paths.settings_path()
    assert json.loads(path.read_text())["CLAUDE_MEM_SEMANTIC_INJECT"] is True
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_ensure_file_writes_every_default_once() -> None:
    path = settings.ensure_file()
    data = json.loads(path.read_text())
    assert set(data) == set(settings.SPECS)
    settings.save({"CLAUDE_MEM_MODEL": "kept"})
    settings.ensure_file()
    assert json.loads(path.read_text())["CLAUDE_MEM_MODEL"] == "kept"


def test_secrets_masked_in_public_view(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_MEM_ANTHROPIC_API_KEY", "sk-ant-real")
    loaded = settings.load()
    assert loaded["CLAUDE_MEM_ANTHROPIC_API_KEY"] == "sk-ant-real"
    assert loaded.public()["CLAUDE_MEM_ANTHROPIC_API_KEY"] == "********"
    assert loaded.public()["CLAUDE_MEM_GEMINI_API_KEY"] == ""


def test_csv_normalised() -> None:
    write({"CLAUDE_MEM_EXCLUDED_PROJECTS": " a , ,b,  ~/x/** "})
    loaded = settings.load()
    assert loaded["CLAUDE_MEM_EXCLUDED_PROJECTS"] == "a,b,~/x/**"
    assert loaded.get_list("CLAUDE_MEM_EXCLUDED_PROJECTS") == ["a", "b", "~/x/**"]


def test_typed_accessors_refuse_wrong_kind() -> None:
    loaded = settings.load()
    with pytest.raises(TypeError):
        loaded.get_int("CLAUDE_MEM_PROVIDER")
    with pytest.raises(TypeError):
        loaded.get_bool("CLAUDE_MEM_WORKER_PORT")


def test_settings_module_is_stdlib_only() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import claude_mem.settings, claude_mem.paths;"
        "bad=[m for m in sys.modules if m.split('.')[0] in "
        "('rich','pydantic','httpx','starlette','dataclasses')]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- provider names (checked against the installed providers once the registry is imported) ---

INSTALLED = "anthropic, claude-agent-sdk, gemini, local, openai-compatible"


@pytest.mark.parametrize(
    ("key", "raw", "bad"),
    [
        ("CLAUDE_MEM_PROVIDER", "openai", "openai"),
        ("CLAUDE_MEM_PROVIDER", "bogus-provider", "bogus-provider"),
        ("CLAUDE_MEM_FALLBACK_PROVIDERS", "local, bogus-provider", "bogus-provider"),
    ],
)
def test_unknown_provider_refused_naming_installed_ones(key: str, raw: str, bad: str) -> None:
    from claude_mem.pipeline import registry

    assert registry.installed() == INSTALLED.split(", ")
    with pytest.raises(settings.SettingsError) as error:
        settings.save({key: raw})
    assert str(error.value) == f"{key}: unknown provider '{bad}'; installed: {INSTALLED}"
    assert not paths.settings_path().exists()


def test_installed_providers_and_lists_accepted() -> None:
    from claude_mem.pipeline import registry  # noqa: F401

    saved = settings.save(
        {"CLAUDE_MEM_PROVIDER": "Gemini", "CLAUDE_MEM_FALLBACK_PROVIDERS": "anthropic, local"}
    )
    assert saved == {
        "CLAUDE_MEM_PROVIDER": "gemini",
        "CLAUDE_MEM_FALLBACK_PROVIDERS": "anthropic,local",
    }
    assert settings.save({"CLAUDE_MEM_FALLBACK_PROVIDERS": ""}) == {
        "CLAUDE_MEM_FALLBACK_PROVIDERS": ""
    }


def test_unknown_provider_in_env_is_a_problem() -> None:
    from claude_mem.pipeline import registry  # noqa: F401

    loaded = settings.load(environ={"CLAUDE_MEM_PROVIDER": "openai"})
    assert loaded["CLAUDE_MEM_PROVIDER"] == "local"
    assert loaded.problems == [
        f"CLAUDE_MEM_PROVIDER: unknown provider 'openai'; installed: {INSTALLED} "
        "(from env; using 'local')"
    ]


def test_registered_plugin_counts_as_installed() -> None:
    from claude_mem.pipeline import registry

    registry.register("my-plugin", lambda s: registry.create("local", s))
    try:
        assert settings.save({"CLAUDE_MEM_PROVIDER": "my-plugin"})
    finally:
        registry._factories.pop("my-plugin")


# --- a broken settings.json: the last valid settings are kept, and the problem says where ---

BROKEN = '{\n  "CLAUDE_MEM_CONTEXT_TOKEN_BUDGET": 3000,\n  "CLAUDE_MEM_MODE": "normal",\n}\n'


def break_file() -> Path:
    path = paths.settings_path()
    path.write_text(BROKEN)
    return path


def test_trailing_comma_keeps_last_valid_settings() -> None:
    settings.save({"CLAUDE_MEM_CONTEXT_TOKEN_BUDGET": 3000, "CLAUDE_MEM_SEMANTIC_INJECT": True})
    assert settings.load().problems == []  # a valid load keeps the copy
    copy = Path(settings.last_good_path())
    assert copy == paths.state_dir() / "settings.last-good.json"
    assert copy.read_bytes() == paths.settings_path().read_bytes()
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    break_file()
    loaded = settings.load()
    assert loaded["CLAUDE_MEM_CONTEXT_TOKEN_BUDGET"] == 3000
    assert loaded["CLAUDE_MEM_SEMANTIC_INJECT"] is True
    assert loaded.sources["CLAUDE_MEM_CONTEXT_TOKEN_BUDGET"] == "last-good"
    assert loaded.problems == [
        f"{paths.settings_path()} is not valid JSON (line 4: Expecting property name enclosed "
        "in double quotes); using the last valid settings"
    ]
    assert json.loads(copy.read_text())["CLAUDE_MEM_CONTEXT_TOKEN_BUDGET"] == 3000


def test_broken_file_without_a_valid_copy_uses_defaults() -> None:
    paths.ensure_data_dir()
    break_file()
    loaded = settings.load()
    assert loaded["CLAUDE_MEM_CONTEXT_TOKEN_BUDGET"] == 2000
    assert loaded.problems[0].endswith("; using the defaults")
    assert not Path(settings.last_good_path()).exists()


def test_value_not_allowed_keeps_its_last_valid_value() -> None:
    settings.save({"CLAUDE_MEM_CONTEXT_TOKEN_BUDGET": 3000, "CLAUDE_MEM_MODE": "recall-only"})
    settings.load()
    write({"CLAUDE_MEM_CONTEXT_TOKEN_BUDGET": "3000,", "CLAUDE_MEM_MODE": "normal"})
    loaded = settings.load()
    assert loaded["CLAUDE_MEM_CONTEXT_TOKEN_BUDGET"] == 3000
    assert loaded["CLAUDE_MEM_MODE"] == "normal"  # the valid part of the file applies
    assert loaded.problems == [
        "CLAUDE_MEM_CONTEXT_TOKEN_BUDGET: '3000,' is not allowed; expected a whole number from "
        "100 to 100000 (from file; using 3000 from the last valid settings)"
    ]
    # A file with a bad value is not a valid copy: the fallback survives further loads.
    assert settings.load()["CLAUDE_MEM_CONTEXT_TOKEN_BUDGET"] == 3000


def test_copy_written_only_when_the_file_changed() -> None:
    settings.save({"CLAUDE_MEM_CONTEXT_TOKEN_BUDGET": 3000})
    settings.load()
    copy = Path(settings.last_good_path())
    first = copy.stat()
    for _ in range(5):
        settings.load()
    assert copy.stat().st_ino == first.st_ino  # never replaced: each load cost one stat
    settings.save({"CLAUDE_MEM_CONTEXT_TOKEN_BUDGET": 4000})
    settings.load()
    assert copy.stat().st_ino != first.st_ino
    assert json.loads(copy.read_text())["CLAUDE_MEM_CONTEXT_TOKEN_BUDGET"] == 4000


def test_bad_secret_value_is_not_repeated_in_the_problem() -> None:
    write({"CLAUDE_MEM_ANTHROPIC_API_KEY": ["sk-ant-api03-secret"]})
    problem = "\n".join(settings.load().problems)
    assert "CLAUDE_MEM_ANTHROPIC_API_KEY: '********' is not allowed" in problem
    assert "secret" not in problem


def test_save_refuses_to_overwrite_a_broken_file() -> None:
    paths.ensure_data_dir()
    break_file()
    with pytest.raises(settings.SettingsError, match=r"fix it first \(nothing was changed\)"):
        settings.save({"CLAUDE_MEM_MODE": "normal"})
    assert paths.settings_path().read_text() == BROKEN


def test_paths_under_home_are_shown_with_a_tilde(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/ann")
    assert settings.shown_path(Path("/home/ann/.claude-mem-py/settings.json")) == (
        "~/.claude-mem-py/settings.json"
    )
    assert settings.shown_path(Path("/home/annex/settings.json")) == "/home/annex/settings.json"
