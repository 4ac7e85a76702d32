"""What every IDE module shares: where we are installing, the hook command, and a Target.

The hook command is hooks/command.py's (`<interpreter> -I -S <package>/hooks/entry.py
<platform> <HostEvent>`), quoted for POSIX shells. `python` is `sys.executable` made absolute
but not resolved: resolving a venv's `python` symlink would leave the venv, and the worker and
MCP server run with it and need the venv's packages. The hooks may run under another,
faster-starting interpreter (`install.hook_python`); never a pyenv shim on PATH unless it wins
the probe and the timing.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_mem.hooks import command as hook_command
from claude_mem.hooks import installed
from claude_mem.hooks.installed import MARKER

Doc = dict[str, Any]
Edit = Callable[[Doc], None]


class ConfigError(Exception):
    """An IDE config file we must not touch (unreadable, invalid JSON, unexpected shape)."""


class ShapeError(ValueError):
    """Raised by an edit when a file's structure is not what the IDE documents."""


def is_ours(command: object) -> bool:
    return isinstance(command, str) and MARKER in command.replace("\\", "/")


@dataclass(frozen=True)
class HookCommand:
    """The venv's interpreter, the entry script the hooks run, and the interpreter that runs
    them ("": the venv's)."""

    python: str
    entry: str
    hook_python: str = ""

    @classmethod
    def current(cls) -> HookCommand:
        """This interpreter and this installed package."""
        if not sys.executable:
            raise ConfigError("cannot tell which Python runs claude-mem (sys.executable is empty)")
        import claude_mem  # noqa: PLC0415

        entry = Path(claude_mem.__file__).resolve().parent / "hooks" / "entry.py"
        if not entry.is_file():
            raise ConfigError(f"the hook entry point {entry} is missing; reinstall claude-mem-py")
        return cls(os.path.abspath(sys.executable), str(entry))

    @property
    def runner(self) -> str:
        """The interpreter the command hooks run with."""
        return self.hook_python or self.python

    def argv(self, platform: str, event: str) -> list[str]:
        return hook_command.argv(self.runner, self.entry, self.python, platform, event)

    def line(self, platform: str, event: str) -> str:
        return shlex.join(self.argv(platform, event))


@dataclass(frozen=True)
class Hook:
    """One event we register: its host name, timeout (in the host's unit) and matcher."""

    event: str
    timeout: int | None = None  # None: the host's default
    matcher: str | None = None


@dataclass(frozen=True)
class Scope:
    """Where to install: a user's home (and env), or one project folder with --project."""

    home: Path
    project: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def current(cls, project: bool) -> Scope:
        """From $HOME and the current folder; an unset or relative HOME is refused."""
        home = os.environ.get("HOME", "")
        if not os.path.isabs(home):
            raise ConfigError(
                f"HOME is {home!r}, not an absolute path: cannot tell where the config lives"
            )
        return cls(Path(home), Path.cwd() if project else None, dict(os.environ))

    def agent_dir(self, platform: str) -> Path:
        """The agent's own folder (`~/.claude`, or `$CLAUDE_CONFIG_DIR` / `$CODEX_HOME`)."""
        return Path(installed.user_dir(platform, str(self.home), self.env))

    def hook_file(self, platform: str) -> Path:
        """The file our hooks go in, as `hooks.installed` (which the hooks read) knows it."""
        project = str(self.project) if self.project is not None else None
        return Path(installed.hook_file(platform, str(self.home), self.env, project))

    def expand(self, value: str) -> Path:
        return Path(installed.expand(value, str(self.home)))


@dataclass(frozen=True)
class Target:
    """One JSON file and how our entries go in and out of it.

    `scaffold`: top-level keys we add when creating the file (Cursor's `"version": 1`); a file
    left holding nothing else after an uninstall is deleted (its backup stays). `private`: the
    file holds a secret (the hook token), so one we create is 0600.
    """

    path: Path
    install: Edit
    uninstall: Edit
    what: str
    scaffold: Mapping[str, Any] = field(default_factory=dict)
    private: bool = False  # holds a secret: a file we create is 0600


@dataclass(frozen=True)
class TextTarget:
    """A file that is not JSON (Codex's TOML config): `edit(text or None, action)` gives the
    new text, or None to delete the file; it raises ShapeError for a file it must not touch."""

    path: Path
    edit: Callable[[str | None, str], str | None]
    what: str
