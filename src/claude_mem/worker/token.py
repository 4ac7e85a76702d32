"""The per-install tokens: random secrets in 0600 files.

The API token (`worker.token`) opens every data route. The hook token (`hook.token`) opens
only the hook routes Claude Code POSTs to (`"type": "http"` hooks): it sits in Claude Code's
settings file, so whoever reads that file can send hook events, never read memory. Anything on
this machine that can read the user's files can read them; anything that cannot (another
user, a web page doing DNS rebinding) cannot use the API. Stdlib only (hooks read them).
"""

from __future__ import annotations

from claude_mem import locations

HEADER = "x-claude-mem-token"
HOOK_HEADER = "x-claude-mem-hook-token"
# The variable Claude Code interpolates into HOOK_HEADER; the installer sets it in the `env`
# of Claude Code's settings file, nothing of ours reads it from the environment.
HOOK_ENV = "CLAUDE_MEM_HOOK_TOKEN"


def token_path() -> str:
    return locations.data_file("worker.token")


def hook_token_path() -> str:
    return locations.data_file("hook.token")


def _read(path: str) -> str | None:
    try:
        with open(path) as handle:
            value = handle.read().strip()
    except OSError:
        return None
    return value or None


def _ensure(path: str) -> str:
    existing = _read(path)
    if existing:
        return existing
    import secrets  # noqa: PLC0415 - only the worker and installer create tokens

    value = secrets.token_hex(32)
    locations.write_private_file(path, value + "\n")
    return value


def read_token() -> str | None:
    return _read(token_path())


def ensure_token() -> str:
    """The API token, created on first use (the worker calls this before it listens)."""
    return _ensure(token_path())


def read_hook_token() -> str | None:
    return _read(hook_token_path())


def ensure_hook_token() -> str:
    """The hook token, created on first use (by the worker, or the installer that writes it)."""
    return _ensure(hook_token_path())
