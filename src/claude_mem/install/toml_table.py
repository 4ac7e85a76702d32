"""One table of ours in a TOML file (Codex's `config.toml`), merged as text.

No TOML writer is a dependency, so the file is edited line by line: our table
(`[mcp_servers.claude-mem-py]` and any `[mcp_servers.claude-mem-py.*]` sub-table) is replaced
where it was, or appended; every other line stays byte for byte, comments included. tomllib
then proves the edit: the new text must parse to the old document with only our table set or
removed, otherwise nothing is written. A table of ours written in another form (inline, dotted
keys) is refused rather than guessed at.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

from claude_mem.install.base import ShapeError


def _key(part: str) -> str:
    """A bare key when TOML allows one, else a quoted key."""
    if part and all(c.isascii() and (c.isalnum() or c in "-_") for c in part):
        return part
    return _string(part)


def _string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, plus DEL, which TOML wants escaped."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: object) -> str:
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    raise TypeError(f"no TOML form for {type(value).__name__}")


def render(path: tuple[str, ...], table: dict[str, Any]) -> str:
    """`[a.b]` and one `key = value` line per entry (flat values only)."""
    lines = [f"[{'.'.join(_key(p) for p in path)}]"]
    lines += [f"{_key(k)} = {_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def _header(line: str) -> tuple[str, ...] | None:
    """The key path a `[table]` / `[[array]]` header line opens, or None for any other line."""
    stripped = line.strip()
    if not stripped.startswith("["):
        return None
    try:
        doc: Any = tomllib.loads(stripped)
    except tomllib.TOMLDecodeError:
        return None  # e.g. a line of a multi-line array
    found: list[str] = []
    while isinstance(doc, dict) and len(doc) == 1:
        key, doc = next(iter(doc.items()))
        found.append(key)
        if isinstance(doc, list):
            doc = doc[-1] if doc else None
    return tuple(found) if found and doc == {} else None


def _without(lines: list[str], path: tuple[str, ...]) -> tuple[list[str], int | None]:
    """`lines` without the tables at or under `path`; where the first of them was."""
    kept: list[str] = []
    at: int | None = None
    inside = False
    for line in lines:
        header = _header(line)
        if header is not None:
            inside = header[: len(path)] == path
            if inside and at is None:
                at = len(kept)
        if not inside:
            kept.append(line)
    return kept, at


def _parse(text: str, what: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ShapeError(f"{what} is not valid TOML ({exc})") from None


def _pop(doc: dict[str, Any], path: tuple[str, ...]) -> bool:
    """Remove `path` from `doc`; whether it was there."""
    parent: Any = doc
    for part in path[:-1]:
        parent = parent.get(part)
        if not isinstance(parent, dict):
            return False
    return parent.pop(path[-1], None) is not None


def _pruned(value: Any) -> Any:
    """`value` without empty tables: `[a.b]` alone creates `a`, which is not a setting."""
    if isinstance(value, dict):
        items = ((k, _pruned(v)) for k, v in value.items())
        return {k: v for k, v in items if v != {}}
    return value


def _put(doc: dict[str, Any], path: tuple[str, ...], table: dict[str, Any]) -> None:
    for part in path[:-1]:
        doc = doc.setdefault(part, {})
    doc[path[-1]] = table


def edit(before: str | None, path: tuple[str, ...], table: dict[str, Any] | None) -> str | None:
    """The file's new text with our table set to `table` (None: removed); None: delete it.

    Raises ShapeError for a file that is not TOML, a table of ours we cannot edit as text, or
    an edit that would change anything else.
    """
    text = before or ""
    expected = _parse(text, "the file")
    kept, at = _without(text.splitlines(keepends=True), path)
    others = _parse("".join(kept), "the file without our table")
    name = ".".join(path)
    if _pop(others, path):
        raise ShapeError(f"[{name}] is written in a form we do not edit; change it by hand")
    _pop(expected, path)
    if _pruned(others) != _pruned(expected):
        raise ShapeError(f"[{name}] cannot be taken out without touching other settings")
    if table is None and at == len(kept):
        while kept and not kept[-1].strip():  # the blank line that set our table apart
            kept.pop()
    if table is not None:
        _put(expected, path, table)
        if at is None:
            if kept and not kept[-1].endswith("\n"):
                kept[-1] += "\n"
            if any(line.strip() for line in kept):
                kept.append("\n")
            at = len(kept)
        kept.insert(at, render(path, table) + ("\n" if kept[at:] else ""))
    after = "".join(kept)
    if _pruned(_parse(after, "the result")) != _pruned(expected):
        raise ShapeError(f"writing [{name}] would change other settings; change it by hand")
    if table is None and not after.strip():
        return None
    return before if after == text else after
