"""The path rule, so that one file is one string everywhere.

Paths keep the form they were given in, lexically normalised (`./src//a.py` → `src/a.py`); an
absolute path inside the event's cwd becomes relative to it (`/home/dev/proj/src/a.py` with
cwd `/home/dev/proj` → `src/a.py`); an absolute path outside it stays absolute; paths with `~`
or backslashes stay exactly as given.
"""

from __future__ import annotations

import posixpath

MAX_PATH_CHARS = 4096
_UNSAFE_CHARS = frozenset("$`*?[]{}")


def normalize_path(path: str, cwd: str | None) -> str:
    """`path` as evidence: lexically normalised, and relative to `cwd` when inside it.

    `/home/dev/proj/src/a.py` with cwd `/home/dev/proj` → `src/a.py`; outside paths stay
    absolute, relative ones stay relative; `~` and backslash paths are kept as given.
    """
    text = path.strip()
    if "\\" in text or text.startswith("~"):
        return text
    text = posixpath.normpath(text)
    base = _absolute_dir(cwd)
    if base and text.startswith("/"):
        if text == base:
            return "."
        if text.startswith(base + "/"):
            return text[len(base) + 1 :]
    return text


def _absolute_dir(cwd: str | None) -> str | None:
    """`cwd` normalised, if it is a usable absolute POSIX directory other than `/`."""
    if not isinstance(cwd, str):
        return None
    text = cwd.strip()
    if not text.startswith("/") or "\\" in text:
        return None
    text = posixpath.normpath(text)
    return None if text in ("/", "//") else text


def path_value(value: object) -> str | None:
    """A value that can be a file path: a short single-line string that is not a URL."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > MAX_PATH_CHARS or "\n" in text or "\0" in text or "://" in text:
        return None
    return text


def is_literal(word: str) -> bool:
    """A word that is a literal path, not a glob, variable or substitution."""
    return bool(word) and word != "-" and not (_UNSAFE_CHARS & set(word))
