"""Bounded reading of a growing file: the complete lines after a byte offset, and no more.

Transcripts are written while we read them and can be hundreds of MB, so one read takes at most
`max_bytes`, consumes only lines that end in a newline (the line being written is read next
time), and never holds an overlong line whole. Only regular files are read: opening is
non-blocking so a FIFO put at the path cannot hang the reader, and anything that is not a
regular file, or cannot be opened, reads as nothing. File problems never raise.

A transcript path reaches the worker in hook payloads and API bodies, so one rule says what
may be read as a transcript at all (`open_transcript`): the file, symlinks resolved, is named
`*.jsonl` or `*.json`, is a regular file owned by this user, and lies outside the data dir (our
settings and state are JSON). Anything else (`/etc/shadow`, a key file, our `settings.json`)
reads as nothing, whoever named it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from claude_mem import paths

MAX_READ = 4 << 20  # bytes read by one call, at most
MAX_LINE = 1 << 20  # a longer line is skipped: no transcript entry worth keeping is this big
SUFFIXES = (".jsonl", ".json")  # what hosts name their transcripts


def open_transcript(path: str) -> int | None:
    """A read-only descriptor of `path` if it may be read as a transcript (the rule above),
    else None. The caller closes it."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    if not real.endswith(SUFFIXES) or _inside(real, os.path.realpath(paths.data_dir())):
        return None
    fd = paths.open_regular(real)
    if fd is None:
        return None
    try:
        if os.fstat(fd).st_uid == os.getuid():
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


@dataclass(frozen=True, slots=True)
class Lines:
    """Complete lines (without their newline) with the offset just past each, read from `start`;
    `offset` is where the next read starts. `full`: the read stopped at `max_bytes`, not at EOF."""

    lines: list[tuple[bytes, int]]
    start: int
    offset: int
    full: bool


def _read_at(fd: int, size: int, offset: int) -> bytes:
    parts: list[bytes] = []
    while size > 0:
        part = os.pread(fd, size, offset)
        if not part:
            break
        parts.append(part)
        size -= len(part)
        offset += len(part)
    return b"".join(parts)


def read_lines(path: str, offset: int, max_bytes: int = MAX_READ) -> Lines:
    """The complete lines of `path` from `offset`, reading at most `max_bytes`.

    A file now shorter than `offset` was truncated or replaced: reading restarts at 0. An offset
    inside a line (left there by skipping an overlong line) first skips to that line's end, so
    a line too long for one read is skipped across several, each bounded.
    """
    fd = open_transcript(path)
    if fd is None:
        return Lines([], offset, offset, full=False)
    try:
        info = os.fstat(fd)
        if not 0 <= offset <= info.st_size:
            offset = 0
        data = _read_at(fd, max(max_bytes, 2), offset)
        mid_line = offset > 0 and _read_at(fd, 1, offset - 1) != b"\n"
    except OSError:
        return Lines([], offset, offset, full=False)
    finally:
        os.close(fd)
    return _split(data, offset, mid_line, full=len(data) >= max(max_bytes, 2))


def _split(data: bytes, start: int, mid_line: bool, *, full: bool) -> Lines:
    limit = min(MAX_LINE, len(data) - 1) if full else MAX_LINE
    pos = 0
    if mid_line:
        newline = data.find(b"\n")
        if newline == -1:  # still inside the skipped line: pass what was read
            return Lines([], start, start + len(data), full)
        pos = newline + 1
    lines: list[tuple[bytes, int]] = []
    while (newline := data.find(b"\n", pos)) != -1:
        if newline - pos <= limit:
            lines.append((data[pos:newline], start + newline + 1))
        pos = newline + 1
    if len(data) - pos > limit:  # an unfinished line already too long: skip what we have
        pos = len(data)
    return Lines(lines, start, start + pos, full)
