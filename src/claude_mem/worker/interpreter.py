"""The Python that runs the worker: the venv's, even in a hook run by a faster system python.

A hook command names the venv's python with `--worker-python` when another interpreter runs the
hook (hooks/command.py); entry.py records it here and lifecycle starts the worker with it.
Stdlib only: the hook path imports this.
"""

from __future__ import annotations

import sys

_chosen: list[str] = []


def use(python: str) -> None:
    """Start workers with `python` from now on (entry.py, from `--worker-python`)."""
    _chosen[:] = [python]


def path() -> str:
    """The interpreter a worker started from this process runs with."""
    return _chosen[0] if _chosen else sys.executable
