"""The locations of claude_mem.locations as `Path` objects, for the code off the hook path.

Each function wraps its `str` twin there, where the rules live (and which the hook path uses
directly: it never imports pathlib).
"""

from __future__ import annotations

import os
from pathlib import Path

from claude_mem import locations
from claude_mem.locations import (
    DATA_DIR_ENV,
    DEFAULT_DATA_DIR,
    DIR_MODE,
    FILE_MODE,
    DataDirError,
    data_dir_id,
    open_regular,
    touch_private_file,
    write_private_file,
)

__all__ = [
    "DATA_DIR_ENV",
    "DEFAULT_DATA_DIR",
    "DIR_MODE",
    "FILE_MODE",
    "DataDirError",
    "backups_dir",
    "check_data_dir",
    "data_dir",
    "data_dir_id",
    "db_path",
    "ensure_data_dir",
    "ensure_dir",
    "logs_dir",
    "open_regular",
    "settings_path",
    "state_dir",
    "touch_private_file",
    "write_private_file",
]


def data_dir() -> Path:
    """The data directory (not created; see ensure_data_dir)."""
    return Path(locations.data_dir())


def check_data_dir() -> Path:
    """The data dir; DataDirError if it, or the nearest existing folder above it, is a file."""
    return Path(locations.check_data_dir())


def ensure_dir(path: Path) -> Path:
    """Create a private directory (0700) with its parents; tighten it if it already exists."""
    locations.ensure_dir(os.fspath(path))
    return path


def ensure_data_dir() -> Path:
    return Path(locations.ensure_data_dir())


def db_path() -> Path:
    return Path(locations.db_path())


def settings_path() -> Path:
    return Path(locations.settings_path())


def logs_dir() -> Path:
    return Path(locations.logs_dir())


def backups_dir() -> Path:
    return Path(locations.backups_dir())


def state_dir() -> Path:
    return Path(locations.state_dir())
