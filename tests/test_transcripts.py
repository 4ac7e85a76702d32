"""read_since on real files: incremental, bounded, and safe on anything at the path."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from claude_mem.transcripts import Chunk, read_since
from claude_mem.transcripts.read import MAX_TEXT
from claude_mem.transcripts.reader import MAX_LINE, MAX_READ


def user(text: str) -> bytes:
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}).encode()


def said(text: str) -> bytes:
    line = {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}
    return json.dumps(line).encode()


def texts(chunk: Chunk) -> list[str]:
    return [entry.text for entry in chunk.entries]


def read(path: Path, offset: int = 0, max_bytes: int = MAX_READ) -> Chunk:
    return read_since(str(path), offset, platform="claude-code", max_bytes=max_bytes)


def test_two_reads_never_return_an_entry_twice(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(user("first prompt") + b"\n" + said("first answer") + b"\n")
    first = read(path)
    assert texts(first) == ["first prompt", "first answer"]
    assert first.offset == path.stat().st_size
    assert [e.end for e in first.entries] == [len(user("first prompt")) + 1, first.offset]
    assert read(path, first.offset) == Chunk([], first.offset)
    with path.open("ab") as handle:
        handle.write(said("second answer") + b"\n")
    second = read(path, first.offset)
    assert texts(second) == ["second answer"]
    assert second.offset == path.stat().st_size


def test_a_half_written_line_is_read_once_it_is_complete(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = said("written in two goes")
    path.write_bytes(user("go") + b"\n" + line[:20])
    first = read(path)
    assert texts(first) == ["go"]
    assert first.offset == len(user("go")) + 1
    assert read(path, first.offset).entries == []
    with path.open("ab") as handle:
        handle.write(line[20:] + b"\n")
    second = read(path, first.offset)
    assert texts(second) == ["written in two goes"]
    assert read(path, second.offset).entries == []


def test_a_read_takes_at_most_max_bytes(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [said(f"answer {n}") for n in range(10)]
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    offset, seen, reads = 0, [], 0
    while (chunk := read(path, offset, max_bytes=len(lines[0]) * 3)).offset != offset:
        assert len(chunk.entries) <= 3
        seen += texts(chunk)
        offset, reads = chunk.offset, reads + 1
    assert seen == [f"answer {n}" for n in range(10)]
    assert reads >= 4


def test_a_fifo_returns_at_once_and_empty(tmp_path: Path) -> None:
    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    done: list[Chunk] = []
    reader = threading.Thread(target=lambda: done.append(read(fifo, 7)), daemon=True)
    reader.start()
    reader.join(timeout=60)  # a FIFO opened for reading without O_NONBLOCK would block here
    if reader.is_alive():  # unblock the stuck open so the thread ends, then fail
        with open(fifo, "wb"):
            pass
    assert done == [Chunk([], 7)]


def test_missing_file_directory_and_bad_paths_read_as_nothing(tmp_path: Path) -> None:
    assert read(tmp_path / "missing.jsonl", 5) == Chunk([], 5)
    assert read(tmp_path, 5) == Chunk([], 5)
    assert read_since("bad\0path", 3, platform="claude-code") == Chunk([], 3)
    unreadable = tmp_path / "locked.jsonl"
    unreadable.write_bytes(said("x") + b"\n")
    unreadable.chmod(0)
    try:
        chunk = read(unreadable, 0)
        assert chunk.offset == 0 or texts(chunk) == ["x"]  # root reads it anyway
    finally:
        unreadable.chmod(0o600)


def test_a_truncated_file_restarts_at_zero(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(said(f"old {n}") + b"\n" for n in range(5)))
    offset = read(path).offset
    path.write_bytes(said("new") + b"\n")
    chunk = read(path, offset)
    assert texts(chunk) == ["new"]
    assert chunk.offset == path.stat().st_size


def test_a_100_mb_line_is_skipped_and_the_lines_after_it_are_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    huge = 100 << 20
    with path.open("wb") as handle:
        handle.write(said("before") + b"\n")
        handle.write(b'{"type": "assistant", "message": {"content": [{"type": "text", "text": "')
        block = b"y" * (1 << 20)
        for _ in range(huge // len(block)):
            handle.write(block)
        handle.write(b'"}]}}\n')
        start_after = handle.tell()
        handle.write(said("after") + b"\n")
    offset, seen, reads = 0, [], 0
    while (chunk := read(path, offset)).offset != offset:
        assert chunk.offset - offset <= MAX_READ
        seen += texts(chunk)
        offset, reads = chunk.offset, reads + 1
    assert seen == ["before", "after"]
    assert offset == path.stat().st_size > start_after
    assert reads > huge // MAX_READ  # each read bounded, so the skip took many


def test_an_overlong_line_being_written_is_skipped_once_and_never_reread(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(said("before") + b"\n" + b"z" * (MAX_LINE + 10))
    first = read(path)
    assert texts(first) == ["before"]
    assert first.offset == path.stat().st_size  # past the part of the long line already seen
    with path.open("ab") as handle:
        handle.write(b"zzz" + b"\n" + said("after") + b"\n")
    assert texts(read(path, first.offset)) == ["after"]


def test_invalid_utf8_malformed_json_and_unknown_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    bad = said("caf\u00e9 ok").replace(b"\\u00e9", b"\xff\xfe")
    path.write_bytes(
        b"\n".join(
            [
                bad,
                b"{not json",
                b"[1, 2]",
                b'{"type": "summary", "summary": "x"}',
                b"[" * 100000,
                said("still read"),
                b"",
            ]
        )
    )
    chunk = read(path)
    assert texts(chunk) == ["caf\ufffd\ufffd ok", "still read"]
    assert chunk.offset == path.stat().st_size


def test_texts_are_cleaned_and_bounded(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                user("<private>all of it</private>"),
                said("kept <private>hidden</private> password=hunter22"),
                user("<task-notification><task-id>1</task-id></task-notification>"),
                said("w " * MAX_TEXT),
                b"",
            ]
        )
    )
    entries = read(path).entries
    # A prompt private as a whole, and a protocol message, keep only their turn boundary.
    assert [(e.role, e.text) for e in entries[::2]] == [("user", ""), ("user", "")]
    assert entries[1].text == "kept  password=[REDACTED:password]"
    assert len(entries) == 4
    assert len(entries[3].text) == MAX_TEXT
    assert entries[3].text.endswith("…")
    raw = read_since(str(path), 0, platform="claude-code", redact=False).entries
    assert "hunter22" in raw[1].text
    assert "hidden" not in raw[0].text
