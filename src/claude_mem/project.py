"""Map an agent's working directory to a project identity.

Every capture and injection path calls :func:`resolve_project`, so memory is grouped
the same way everywhere. It runs inside short-lived hook processes: it imports only
the standard library, never spawns ``git`` and costs a few ``stat``/``read`` calls
(it reads ``.git``, ``gitdir`` and ``commondir`` files directly).
"""

from __future__ import annotations

import functools
import os
import re
import stat
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "IGNORE_FILE",
    "UNKNOWN_PROJECT",
    "ProjectIdentity",
    "matches_exclusion",
    "parse_patterns",
    "resolve_project",
]

IGNORE_FILE = ".claude-mem-ignore"
UNKNOWN_PROJECT = "unknown-project"

_GITFILE_MAX = 4096  # a real `.git` file or `commondir` is one short line
_DIRS = "<dirs>"  # glob item: zero or more whole segments, each followed by "/"
_TAIL = "<tail>"  # glob item: this path or anything below it


@dataclass(frozen=True, slots=True)
class ProjectIdentity:
    """Who a cwd belongs to; ``all_projects`` lists parent first and ``name`` last."""

    name: str
    all_projects: tuple[str, ...]
    root: str | None
    parent_root: str | None
    excluded: bool
    excluded_reason: str | None


_UNKNOWN = ProjectIdentity(UNKNOWN_PROJECT, (UNKNOWN_PROJECT,), None, None, False, None)


def resolve_project(
    cwd: str | os.PathLike[str] | None, *, excluded: str = "", home: str | None = None
) -> ProjectIdentity:
    """Resolve ``cwd`` to its project; ``excluded`` is a comma-separated glob list."""
    if cwd is None:
        return _UNKNOWN
    raw = os.fsdecode(cwd)
    if not raw.strip():
        return _UNKNOWN
    home_dir = _home(home)
    path = _normalise(raw, home_dir)
    top, parent_top, parent_name = _locate(path)
    base = _basename(top)
    all_projects: tuple[str, ...]
    if parent_name is None:
        name, all_projects = base, (base,)
    else:
        name = f"{parent_name}/{base}"
        all_projects = (parent_name, name)
    # Globs first: they need no I/O. A worktree is also judged by its main checkout.
    pattern = _first_match(parse_patterns(excluded), (path, top, parent_top), home_dir)
    reason = f"glob:{pattern}" if pattern else _ignore_file_reason(top, parent_top)
    return ProjectIdentity(
        name=name,
        all_projects=all_projects,
        root=top,
        parent_root=parent_top,
        excluded=reason is not None,
        excluded_reason=reason,
    )


def matches_exclusion(path: str, patterns: str, *, home: str | None = None) -> str | None:
    """Return the first pattern in ``patterns`` that excludes ``path``, else None."""
    if not path or not path.strip():
        return None
    home_dir = _home(home)
    return _first_match(parse_patterns(patterns), (_normalise(path, home_dir),), home_dir)


def parse_patterns(patterns: str) -> tuple[str, ...]:
    """Split a comma-separated setting into trimmed, non-empty, de-duplicated globs."""
    items = (item.strip() for item in patterns.split(","))
    return tuple(dict.fromkeys(item for item in items if item))


# --- paths -----------------------------------------------------------------------------


def _home(home: str | None) -> str:
    """Home used for ``~``; a parameter so tests and callers need not touch $HOME."""
    value = home or os.path.expanduser("~")
    return os.path.normpath(value)


def _normalise(raw: str, home: str) -> str:
    """Absolute, ``~``-expanded path; the path does not have to exist."""
    if raw == "~" or raw.startswith("~/"):
        expanded = home + raw[1:]
    else:
        try:
            expanded = os.path.expanduser(raw)  # also "~user"
        except ValueError:  # "~user" with NUL or unencodable characters: keep it literal
            expanded = raw
    try:
        return os.path.abspath(expanded)
    except OSError:  # the process cwd was deleted and the path is relative
        return os.path.normpath(expanded)


def _basename(path: str) -> str:
    """Folder name used as a project name; "/" has none, so it is unknown."""
    return os.path.basename(path.rstrip("/")) or UNKNOWN_PROJECT


def _mode(path: str) -> int:
    """``st_mode`` of ``path`` or 0: missing, unreadable or odd paths are just absent."""
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):
        return 0


def _read_line(path: str) -> str | None:
    """First line of a small git metadata file, or None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(_GITFILE_MAX)
    except (OSError, ValueError):
        return None
    return os.fsdecode(data.split(b"\n", 1)[0].rstrip(b"\r"))


# --- git -------------------------------------------------------------------------------


def _locate(path: str) -> tuple[str, str | None, str | None]:
    """Return ``(top, main_top, main_name)``; the main repo is only set for worktrees.

    Walks up like git does (nearest ``.git`` wins), so subdirectories share the identity
    of their top level. Without any ``.git`` the folder itself is the project.
    """
    current = path
    while True:
        dotgit = os.path.join(current, ".git")
        mode = _mode(dotgit)
        if stat.S_ISDIR(mode):
            return current, None, None
        if stat.S_ISREG(mode):
            main = _worktree_main(dotgit)
            if main is None:  # submodule, --separate-git-dir or a malformed file
                return current, None, None
            return current, main[0], main[1]
        parent = os.path.dirname(current)
        if parent == current:
            return path, None, None
        current = parent


def _worktree_main(dotgit_file: str) -> tuple[str, str] | None:
    """For a linked worktree, return the main checkout's ``(top, name)``.

    Only worktree gitdirs (``<main>/.git/worktrees/<id>``) contain ``commondir``;
    submodule gitdirs (``<super>/.git/modules/<sub>``) do not, so they stay separate.
    """
    line = _read_line(dotgit_file)
    if line is None or not line.startswith("gitdir:"):
        return None
    target = line[len("gitdir:") :].lstrip(" \t")
    if not target:
        return None
    gitdir = os.path.normpath(os.path.join(os.path.dirname(dotgit_file), target))
    common = _read_line(os.path.join(gitdir, "commondir"))
    if not common:
        return None
    common_dir = os.path.normpath(os.path.join(gitdir, common))
    if os.path.basename(common_dir) == ".git":
        main_top = os.path.dirname(common_dir)
        if main_top == os.path.dirname(dotgit_file):  # points back at itself: not linked
            return None
        return main_top, _basename(main_top)
    # Worktree of a bare repo ("proj.git"): no checkout exists, name it after the repo.
    name = os.path.basename(common_dir).removesuffix(".git")
    return common_dir, name or UNKNOWN_PROJECT


def _ignore_file_reason(top: str, parent_top: str | None) -> str | None:
    """An ignore file in the checkout (or its main repo) opts the project out."""
    for folder in (top, parent_top):
        if folder is not None:
            marker = os.path.join(folder, IGNORE_FILE)
            if stat.S_ISREG(_mode(marker)):
                return f"ignore-file:{marker}"
    return None


# --- globs -----------------------------------------------------------------------------


class _Glob(NamedTuple):
    is_path: bool  # matched against whole paths (and their ancestors) vs basenames
    min_len: int  # shorter subjects cannot match, so the regex is not even compiled
    source: str


def _first_match(patterns: tuple[str, ...], paths: tuple[str | None, ...], home: str) -> str | None:
    """The first pattern matching any of ``paths`` (a path, or its basename)."""
    candidates = [p.replace("\\", "/") for p in dict.fromkeys(paths) if p]
    for pattern in patterns:
        glob = _parse_glob(pattern, home)
        for candidate in candidates:
            subject = candidate if glob.is_path else candidate.rstrip("/").rpartition("/")[2]
            if subject and len(subject) >= glob.min_len and _regex(glob.source).match(subject):
                return pattern
    return None


@functools.lru_cache(maxsize=256)
def _regex(source: str) -> re.Pattern[str]:
    """Compiled glob regex, cached: hooks check the same few patterns on every event."""
    return re.compile(source, re.DOTALL)


@functools.lru_cache(maxsize=256)
def _parse_glob(pattern: str, home: str) -> _Glob:
    """Translate one glob to an anchored regex that cannot backtrack catastrophically.

    ``*`` and ``?`` stay inside a segment, ``**`` crosses segments (as a whole segment
    it means zero or more directories). A pattern with ``/`` matches a path or any of
    its ancestors; one not starting with ``/`` (after ``~``) may start at any depth.
    """
    text = pattern.replace("\\", "/")
    tokens: list[str] = []
    if text == "~" or text.startswith("~/"):
        tokens.extend("/" if c == "/" else re.escape(c) for c in home.replace("\\", "/"))
        text = text[1:]
    for piece in re.findall(r"\*+|.", text, flags=re.DOTALL):
        if piece[0] == "*":
            tokens.append("*" if len(piece) == 1 else "**")
        else:
            tokens.append(piece if piece in "/?" else re.escape(piece))
    is_path = "/" in tokens
    # A basename has no "/", so there "**" is just "*".
    items = _path_items(tokens) if is_path else ["*" if t == "**" else t for t in tokens]
    min_len = sum(item not in ("*", _DIRS, _TAIL) for item in items)
    return _Glob(is_path, min_len, _items_to_regex(items))


def _path_items(tokens: list[str]) -> list[str]:
    """Turn ``**`` into directory gaps and add the implicit "or anything below" tail.

    A partial ``**`` (``a**b``) becomes a gap followed by ``*``: ``.*`` and
    ``(?:.*/)?[^/]*`` match the same strings, and only one kind of gap is left.
    """
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token == "/":
            segments.append([])
        else:
            segments[-1].append(token)
    if segments[0]:  # relative pattern: may start at any depth
        segments.insert(0, ["**"])
    kept: list[list[str]] = []
    for segment in [segments[0], *(s for s in segments[1:] if s), ["**"]]:
        if not (segment == ["**"] and kept and kept[-1] == ["**"]):
            kept.append(segment)
    items: list[str] = []
    for index, segment in enumerate(kept):
        if segment == ["**"] and index == len(kept) - 1:
            items.append(_TAIL)
            break
        if index and kept[index - 1] != ["**"]:
            items.append("/")
        if segment == ["**"]:
            items.append(_DIRS)
            continue
        for token in segment:
            items.extend((_DIRS, "*") if token == "**" else (token,))
    return items


def _items_to_regex(items: list[str]) -> str:
    """Assemble blocks of literals, ``?`` and ``*`` separated by directory gaps.

    Only the final block's last ``*`` and the final gap may backtrack; every earlier
    wildcard is an atomic lazy group committing to its earliest match, which never
    loses a match because whatever follows it can absorb the difference.
    """
    blocks: list[list[str]] = [[]]
    tail = False
    for item in items:
        if item == _TAIL:
            tail = True
        elif item != _DIRS:
            blocks[-1].append(item)
        elif len(blocks) == 1 or blocks[-1]:  # adjacent gaps: one suffices
            blocks.append([])
    last = len(blocks) - 1
    parts = [_block_regex(blocks[0], final=last == 0)]
    for index, block in enumerate(blocks[1:], start=1):
        body = _block_regex(block, final=index == last)
        parts.append("(?:.*/)?" + body if index == last else f"(?>(?:.*?/)??{body})")
    parts.append(r"(?=/|\Z)" if tail else r"\Z")
    return "".join(parts)


def _block_regex(block: list[str], *, final: bool) -> str:
    """Regex for a run without gaps; only a final block's last ``*`` may backtrack."""
    chunks: list[list[str]] = [[]]
    for token in block:
        if token == "*":
            chunks.append([])
        else:
            chunks[-1].append("[^/]" if token == "?" else token)
    out = "".join(chunks[0])
    for index, chunk in enumerate(chunks[1:], start=1):
        body = "".join(chunk)
        if not body or (final and index == len(chunks) - 1):
            out += "[^/]*" + body
        else:
            out += f"(?>[^/]*?{body})"
    return out
