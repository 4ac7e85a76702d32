"""What every IDE module shares: where we are installing, the hook command, and a Target.

The hook command is `<interpreter> -I -S <package>/hooks/entry.py <platform> <HostEvent>`,
quoted for POSIX shells. The interpreter is `sys.executable` made absolute but not resolved:
resolving a venv's `python` symlink would leave the venv, and the worker a hook may start runs
with that same interpreter and needs the venv's packages. It is never a `python3` looked up on
PATH nor a pyenv shim (a shim adds ~120 ms to every hook).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Present in every hook command we write, and in nobody else's.
MARKER = "claude_mem/hooks/entry.py"

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
    """The interpreter and entry script the hooks run."""

    python: str
    entry: str

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

    def line(self, platform: str, event: str) -> str:
        return shlex.join([self.python, "-I", "-S", self.entry, platform, event])


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

    def user_dir(self, name: str) -> Path:
        """`~/<name>` (e.g. `.gemini`)."""
        return self.home / name

    def base(self, user_dir: Path, project_dir: str) -> Path:
        """`<project>/<project_dir>` with --project, else `user_dir`."""
        return self.project / project_dir if self.project is not None else user_dir

    def expand(self, value: str) -> Path:
        if value == "~" or value.startswith("~/"):
            return self.home / value[2:]
        return Path(value)


@dataclass(frozen=True)
class Target:
    """One JSON file and how our entries go in and out of it.

    `scaffold`: top-level keys we add when creating the file (Cursor's `"version": 1`); a file
    left holding nothing else after an uninstall is deleted (its backup stays).
    """

    path: Path
    install: Edit
    uninstall: Edit
    what: str
    scaffold: Mapping[str, Any] = field(default_factory=dict)
