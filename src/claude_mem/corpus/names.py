"""Corpus names: short ASCII identifiers that are safe as a file name and a URL segment.

Corpora live in the database, but their names travel: in URLs (`/api/corpus/NAME`), in MCP
tool arguments, and in any file a person exports them to. So a name is refused unless it is
only ASCII letters, digits, '.', '_' and '-', and not made of dots alone ('.', '..'): no path
separator, no NUL, no look-alike Unicode letter can ever reach a path or a log line.
"""

from __future__ import annotations

import re

MAX_NAME = 100
_NAME = re.compile(r"[A-Za-z0-9._-]+", re.ASCII)


class CorpusNameError(ValueError):
    """A name that is not allowed; the message says what is."""


def validate_name(name: object) -> str:
    """`name` itself when it is allowed, else CorpusNameError."""
    rule = f"use 1-{MAX_NAME} of A-Z a-z 0-9 . _ - (not only dots)"
    if not isinstance(name, str) or not name:
        raise CorpusNameError(f"a corpus needs a name; {rule}")
    shown = ascii(name[:60])
    if len(name) > MAX_NAME or not _NAME.fullmatch(name) or not name.strip("."):
        raise CorpusNameError(f"corpus name {shown} is not allowed; {rule}")
    return name
