"""Does the installed code match what `claude-mem install` set up? One hint when it doesn't.

The installer calls write_install_marker() after writing the hooks; the marker holds the version
that wrote them. After an upgrade the hooks may lack new events or point at old paths, so the
user is told once to re-run the installer. Nothing here blocks or restarts anything.
"""

from __future__ import annotations

import json
import os

from claude_mem import __version__, paths

MARKER = "install-version"
HINT_STATE = "version-hint.json"


def marker_path() -> str:
    return os.path.join(paths.data_dir(), MARKER)


def write_install_marker(version: str = __version__) -> None:
    """Record that the hooks were (re)installed by `version` (the installer calls this)."""
    paths.write_private_file(paths.data_dir() / MARKER, version + "\n")


def installed_version() -> str | None:
    try:
        with open(marker_path(), encoding="utf-8") as handle:
            return handle.read(200).strip() or None
    except OSError:
        return None


def hint() -> str | None:
    """One line when the marker is missing or names another version, else None."""
    installed = installed_version()
    if installed == __version__:
        return None
    if installed is None:
        return (
            f"claude-mem {__version__}: hooks not set up by the installer (no install marker); "
            "run `claude-mem install` to repair them."
        )
    return (
        f"claude-mem upgraded {installed} -> {__version__}; "
        "run `claude-mem install` to refresh the hooks."
    )


def hint_once() -> str | None:
    """hint(), but only the first time for a given (marker, version) pair.

    Session starts call this: a missing marker must not nag on every session.
    """
    line = hint()
    if line is None:
        return None
    key = f"{installed_version()}->{__version__}"
    state = paths.state_dir() / HINT_STATE
    try:
        if json.loads(state.read_bytes()).get("shown") == key:
            return None
    except (OSError, ValueError, AttributeError):
        pass
    try:
        paths.write_private_file(state, json.dumps({"shown": key}) + "\n")
    except OSError:
        return None  # cannot remember it: better silent than nagging every session
    return line
