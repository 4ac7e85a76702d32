from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claude_mem import locations, paths


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_env_var_relocates_all_state(data_dir: Path) -> None:
    assert paths.data_dir() == data_dir
    for path in (paths.db_path(), paths.settings_path(), paths.logs_dir(), paths.backups_dir()):
        assert path.is_relative_to(data_dir)


def test_default_is_not_the_original_projects_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(paths.DATA_DIR_ENV)
    assert paths.data_dir() == Path(os.path.expanduser("~/.claude-mem-py"))
    assert paths.data_dir().name != ".claude-mem"


def test_tilde_in_env_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(paths.DATA_DIR_ENV, "~/mem")
    assert paths.data_dir() == tmp_path / "mem"


def test_data_dir_created_private_and_tightened(data_dir: Path) -> None:
    created = paths.ensure_data_dir()
    assert mode(created) == 0o700
    created.chmod(0o755)
    paths.ensure_data_dir()
    assert mode(created) == 0o700


def test_write_private_file_is_atomic_and_0600(data_dir: Path) -> None:
    target = data_dir / "state" / "x.json"
    paths.write_private_file(target, "one")
    paths.write_private_file(target, b"two")
    assert target.read_text() == "two"
    assert mode(target) == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["x.json"]


def test_failed_write_keeps_old_file_and_leaves_no_temp(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = data_dir / "kept.json"
    paths.write_private_file(target, "old")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        paths.write_private_file(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in data_dir.iterdir()] == ["kept.json"]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(["", ".", "..", "a", "b c", "~", "é", "x.d"]), max_size=6),
    st.sampled_from(["", "/", "//", "///", "~/", "./", "../"]),
    st.sampled_from(["", "/", "//"]),
)
def test_the_str_data_dir_is_spelled_as_pathlib_spells_it(
    parts: list[str], lead: str, trail: str
) -> None:
    """locations works with os.path, paths with pathlib: the same env value must name the same
    place, spelled the same way (`..` kept, `.` and doubled slashes dropped), even relative."""
    raw = lead + "/".join(parts) + trail
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(paths.DATA_DIR_ENV, raw)
        expected = Path(os.path.expanduser(raw.strip() or paths.DEFAULT_DATA_DIR)).absolute()
        assert locations.data_dir() == str(expected)
        assert paths.data_dir() == expected
        assert locations.state_file("x.json") == str(expected / "state" / "x.json")
        assert locations.data_dir_id() == paths.data_dir_id(str(expected.resolve()))


def test_a_file_in_the_way_is_named(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    data_dir.write_text("not a folder")
    with pytest.raises(paths.DataDirError, match=r"data dir .* is not a directory$"):
        locations.ensure_data_dir()
    monkeypatch.setenv(paths.DATA_DIR_ENV, str(data_dir / "inner"))
    with pytest.raises(paths.DataDirError, match=rf"\({data_dir} is not a directory\)"):
        locations.write_private_file(locations.state_file("x.json"), "{}")
