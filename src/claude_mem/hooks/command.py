"""The exact command a host runs for each hook, for the installer (and tests) to write.

`<venv python> -I -S <abs path>/claude_mem/hooks/entry.py <platform> <event>`: the absolute
interpreter keeps the hook working outside the venv and skips shims (a pyenv shim runs a
shell first); -I -S skip the site-packages scan and the user's environment. sys.executable is used
as it is, not resolved: resolving a venv's symlink would leave the venv, and the worker the
hook may start must run with the venv's packages.
"""

from __future__ import annotations

import os
import shlex
import sys

from claude_mem.hooks.installed import REGISTER  # noqa: F401 - the events, for the demo

MATCHERS: dict[tuple[str, str], str] = {("claude-code", "PreToolUse"): "Read"}


def entry_path() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "entry.py")


def interpreter() -> str:
    return os.path.abspath(sys.executable)


def event_arg(host_event: str) -> str:
    """`PostToolUse` → `post-tool-use`, `afterMCPExecution` → `after-mcp-execution`."""
    out: list[str] = []
    for i, c in enumerate(host_event):
        if c in "_ ":
            out.append("-")
            continue
        before = host_event[i - 1] if i else ""
        after = host_event[i + 1 : i + 2]
        if c.isupper() and (before.islower() or (before.isupper() and after.islower())):
            out.append("-")
        out.append(c.lower())
    return "".join(out)


def hook_argv(platform: str, host_event: str) -> list[str]:
    return [interpreter(), "-I", "-S", entry_path(), platform, event_arg(host_event)]


def hook_command(platform: str, host_event: str) -> str:
    """The shell command line for a host config, quoted for POSIX shells."""
    return shlex.join(hook_argv(platform, host_event))
