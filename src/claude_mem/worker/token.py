"""The per-install API token: a random secret in a 0600 file, required by every data route.

Anything on this machine that can read the user's files can read it; anything that cannot
(another user, a web page doing DNS rebinding) cannot use the API. Stdlib only (hooks read it).
"""

from __future__ import annotations

from pathlib import Path

from claude_mem import paths

HEADER = "x-claude-mem-token"


def token_path() -> Path:
    return paths.data_dir() / "worker.token"


def read_token() -> str | None:
    try:
        value = token_path().read_text().strip()
    except OSError:
        return None
    return value or None


def ensure_token() -> str:
    """The token, created on first use (the worker calls this before it listens)."""
    existing = read_token()
    if existing:
        return existing
    import secrets  # noqa: PLC0415 - only the worker creates tokens; hooks just read them

    value = secrets.token_hex(32)
    paths.write_private_file(token_path(), value + "\n")
    return value
