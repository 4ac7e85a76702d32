from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Iterator

import pytest

from claude_mem import log, paths


@pytest.fixture(autouse=True)
def reset_log() -> Iterator[None]:
    log.configure("INFO", 14)
    yield
    log.configure("INFO", 14)


def lines() -> list[str]:
    return log.log_path().read_text().splitlines()


def test_one_line_per_event_with_fields() -> None:
    log.info("worker", "started", port=38700, path="/tmp/x y")
    (line,) = lines()
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO  \[worker\] started ", line)
    assert 'port=38700 path="/tmp/x y"' in line


def test_daily_file_in_data_dir_private() -> None:
    log.warn("hook", "slow")
    path = log.log_path()
    assert path.parent == paths.logs_dir()
    assert re.fullmatch(r"claude-mem-\d{4}-\d\d-\d\d\.log", path.name)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_threshold_filters() -> None:
    log.configure("WARN")
    log.info("x", "hidden")
    log.debug("x", "hidden")
    log.error("x", "shown")
    assert [line.split("] ")[1] for line in lines()] == ["shown"]
    log.configure("SILENT")
    log.error("x", "silent")
    assert len(lines()) == 1


def test_private_and_secret_text_never_logged() -> None:
    log.error(
        "worker",
        "prompt was <private>my diary</private> ok",
        body="data <system-reminder>internal</system-reminder> token=ghp_" + "a" * 36,
        key="sk-ant-api03-" + "b" * 40,
    )
    text = log.log_path().read_text()
    for secret in ("my diary", "internal", "a" * 36, "b" * 40):
        assert secret not in text


def test_newlines_escaped_and_long_values_capped() -> None:
    log.info("x", "line1\nline2", big="z" * 10_000)
    (line,) = lines()
    assert "line1\\nline2" in line
    assert "z" * 301 not in line
    assert "[+9700 chars]" in line


def test_never_raises_when_dir_unwritable(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "open", refuse)
    log.error("x", "lost quietly")  # must not raise


def test_concurrent_writers_do_not_interleave() -> None:
    def write(n: int) -> None:
        for i in range(200):
            log.info("t", f"writer {n} line {i}", pad="p" * 200)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found = lines()
    assert len(found) == 800
    assert all(line.endswith("p" * 200) for line in found)


def test_prune_keeps_newest_days() -> None:
    directory = paths.ensure_dir(paths.logs_dir())
    for day in ("2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"):
        (directory / f"claude-mem-{day}.log").write_text("x\n")
    (directory / "unrelated.txt").write_text("keep")
    removed = log.prune(2)
    assert [p.name for p in removed] == ["claude-mem-2026-01-01.log", "claude-mem-2026-01-02.log"]
    assert sorted(p.name for p in directory.iterdir()) == [
        "claude-mem-2026-01-03.log",
        "claude-mem-2026-01-04.log",
        "unrelated.txt",
    ]


def test_tail_reads_last_lines_of_a_big_file() -> None:
    path = paths.ensure_dir(paths.logs_dir()) / "claude-mem-2026-02-02.log"
    path.write_text("".join(f"line {i}\n" for i in range(100_000)))
    assert log.tail(3, path) == ["line 99997", "line 99998", "line 99999"]
    assert log.tail(0, path) == []
    assert log.tail(5, path.with_name("missing.log")) == []
