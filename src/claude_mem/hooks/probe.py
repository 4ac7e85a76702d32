"""`entry.py --probe`: can this interpreter run our hooks, and how fast does it start them?

It imports what every hook loads and answers one JSON line (our version, the package it
imported, the Python version): the installer times a run up to that line. Then it imports the
modules hooks load only on demand (a privacy rule, a worker start, the spool, a log line) and
exits 1 if one fails. It writes nothing else and talks to no worker. An interpreter older than
3.11, or one that lacks a module we need, fails or answers wrongly.
"""

from __future__ import annotations

import importlib
import os
import sys

from claude_mem import __version__
from claude_mem.hooks import jsonio

MINIMUM = (3, 11)
EVERY_HOOK = (
    "claude_mem.hooks.runner", "claude_mem.hooks.adapters.claude_code", "claude_mem.hooks.handlers",
    "claude_mem.hooks.transport", "claude_mem.settings",
)  # fmt: skip
ON_DEMAND = (
    "claude_mem.hooks.state", "claude_mem.hooks.version_check", "claude_mem.hooks.seen_files",
    "claude_mem.hooks.transcript", "claude_mem.hooks.spool", "claude_mem.control",
    "claude_mem.privacy", "claude_mem.log", "claude_mem.worker.lifecycle",
)  # fmt: skip


def answer() -> dict[str, object]:
    """Our version, the folder holding the `claude_mem` that runs (site-packages, or src/),
    this Python's version."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    python = ".".join(str(part) for part in sys.version_info[:3])
    return {"claude_mem": __version__, "package": package, "python": python}


def main() -> int:
    if sys.version_info < MINIMUM:
        sys.stderr.write(f"Python {sys.version.split()[0]} is older than 3.11\n")
        return 1
    for name in EVERY_HOOK:
        importlib.import_module(name)
    sys.stdout.write(jsonio.dumps(answer()) + "\n")
    sys.stdout.flush()
    from claude_mem.hooks.adapters import PLATFORMS, load  # noqa: PLC0415

    for name in ON_DEMAND:
        importlib.import_module(name)
    missing = [platform for platform in PLATFORMS if load(platform) is None]
    if missing:
        sys.stderr.write(f"cannot load the adapters of {', '.join(missing)}\n")
        return 1
    return 0
