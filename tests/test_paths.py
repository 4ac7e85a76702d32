from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from claude_mem import paths


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
