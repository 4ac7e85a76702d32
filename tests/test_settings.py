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


def test_defaults_without_file() -> None:
    loaded = settings.load()
    assert loaded.problems == []
    assert loaded["CLAUDE_MEM_PROVIDER"] == "local"
    assert 38700 <= loaded.get_int("CLAUDE_MEM_WORKER_PORT") < 38800
    assert loaded.get_bool("CLAUDE_MEM_REDACT_SECRETS") is True
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
