"""Are the hooks the agent runs the ones this version's installer writes? One hint when not.

The answer comes from the agent's own config files (`hooks.installed`): an upgrade may add
events, and hooks written by an older version then lack them. A data dir the installer never
saw says nothing about the hooks, so nothing here depends on it. Hooks that are in none of the
files the installer writes (a plugin folder, a config written by hand, the demo) get no hint:
there is nothing the installer would repair. Nothing here blocks or restarts anything.

The installer still records its version in the data dir (`install-version`), for people.
"""

from __future__ import annotations

from claude_mem import __version__, locations
from claude_mem.hooks import installed, jsonio
from claude_mem.hooks.installed import REGISTER

MARKER = "install-version"
HINT_STATE = "version-hint.json"


def write_install_marker(version: str = __version__) -> None:
    """Record which version last ran the installer (the installer and the demo call this)."""
    locations.write_private_file(locations.data_file(MARKER), version + "\n")


def hint(platform: str, cwd: str | None) -> str | None:
    """One line when the installed hooks of `platform` lack events this version registers."""
    files, events = installed.installed(platform, cwd)
    if not files:
        return None
    missing = [event for event in REGISTER.get(platform, ()) if event not in events]
    if not missing:
        return None
    return (
        f"claude-mem {__version__}: the hooks in {', '.join(files)} lack {', '.join(missing)}; "
        "run `claude-mem install` to refresh them."
    )


def hint_once(platform: str, cwd: str | None) -> str | None:
    """hint(), but only the first time for a given finding: it must not nag every session."""
    line = hint(platform, cwd)
    if line is None:
        return None
    state = locations.state_file(HINT_STATE)
    try:
        with open(state, "rb") as handle:
            shown = jsonio.loads(handle.read()).get("shown")
        if shown == line:
            return None
    except (OSError, ValueError, AttributeError):
        pass
    try:
        locations.write_private_file(state, jsonio.dumps({"shown": line}) + "\n")
    except OSError:
        return None  # cannot remember it: better silent than nagging every session
    return line
