"""The exact command a host runs for each hook: ONE builder, for the installer, demo and bench.

`<python> -I -S <abs path>/claude_mem/hooks/entry.py [--worker-python <venv python>] <platform>
<event>`. The absolute interpreter keeps the hook working outside the venv and skips shims (a
pyenv shim runs a shell first); -I -S skip the site-packages scan and the user's environment, so
any CPython >= 3.11 runs the hook (the installer picks the fastest, `install.hook_python`).
When that is not the venv's own python, `--worker-python` names the venv's: the worker a hook
may start needs the venv's packages. sys.executable is used as it is, not resolved: resolving a
venv's symlink would leave the venv.
"""

from __future__ import annotations

import os
import sys

from claude_mem.hooks.entry import PROBE_FLAG as PROBE_FLAG  # noqa: PLC0414 - for the installer
from claude_mem.hooks.entry import WORKER_PYTHON_FLAG
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


def argv(python: str, entry: str, worker_python: str, *args: str) -> list[str]:
    """THE hook command line: `python` runs `entry` with `args` (`platform event`, or the
    probe flag); `worker_python` (the venv's) is named only when it is not `python`."""
    extra = [] if worker_python == python else [WORKER_PYTHON_FLAG, worker_python]
    return [python, "-I", "-S", entry, *extra, *args]


def hook_argv(platform: str, host_event: str) -> list[str]:
    """This interpreter running this package's hook for `host_event`."""
    return argv(interpreter(), entry_path(), interpreter(), platform, event_arg(host_event))
