"""The one log: a daily file in the data dir, one line per event, shared by hooks, worker and CLI.

Every message and field passes through the privacy module, so private or secret text cannot
reach a log line. Writing never raises: a full disk must not break the hook that logs.
Stdlib only: the hook path imports this.
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from pathlib import Path

from claude_mem import paths
from claude_mem.privacy import clean_text

LEVELS = {"DEBUG": 10, "INFO": 20, "WARN": 30, "ERROR": 40, "SILENT": 100}
PREFIX = "claude-mem-"
MAX_MESSAGE = 1000
MAX_FIELD = 300

_config: dict[str, int] = {"level": LEVELS["INFO"], "retention": 14, "pruned": False}


def configure(level: str = "INFO", retention_days: int = 14) -> None:
    """Set the threshold (DEBUG/INFO/WARN/ERROR/SILENT) and how many daily files to keep."""
    _config["level"] = LEVELS.get(level.upper(), LEVELS["INFO"])
    _config["retention"] = retention_days
    _config["pruned"] = False


def log_path(day: str | None = None) -> Path:
    """Today's (UTC) log file, or the one for `day` (YYYY-MM-DD)."""
    day = day or time.strftime("%Y-%m-%d", time.gmtime())
    return paths.logs_dir() / f"{PREFIX}{day}.log"


def _fit(text: str, limit: int) -> str:
    text = clean_text(text).replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + f"…[+{len(text) - limit} chars]"


def format_line(level: str, component: str, message: str, fields: dict[str, object]) -> str:
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
    parts = [stamp, level.ljust(5), f"[{component}]", _fit(message, MAX_MESSAGE)]
    for key, value in fields.items():
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        text = _fit(text, MAX_FIELD)
        if not text or any(c in text for c in ' ="'):
            text = json.dumps(text, ensure_ascii=False)
        parts.append(f"{key}={text}")
    return " ".join(parts) + "\n"


def event(level: str, component: str, message: str, **fields: object) -> None:
    """Append one line if `level` passes the threshold. Never raises."""
    threshold = _config["level"]
    if LEVELS.get(level, 0) < threshold:
        return
    try:
        line = format_line(level, component, message, fields).encode("utf-8", "replace")
        path = log_path()
        paths.ensure_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, paths.FILE_MODE)
        try:
            os.write(
                fd, line
            )  # one write with O_APPEND: lines from many processes don't interleave
        finally:
            os.close(fd)
        if not _config["pruned"]:
            _config["pruned"] = True
            prune(int(_config["retention"]))
    except (OSError, ValueError):
        pass


def debug(component: str, message: str, **fields: object) -> None:
    event("DEBUG", component, message, **fields)


def info(component: str, message: str, **fields: object) -> None:
    event("INFO", component, message, **fields)


def warn(component: str, message: str, **fields: object) -> None:
    event("WARN", component, message, **fields)


def error(component: str, message: str, **fields: object) -> None:
    event("ERROR", component, message, **fields)


def log_files() -> list[Path]:
    """All daily log files, oldest first."""
    directory = paths.logs_dir()
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob(f"{PREFIX}*.log") if p.is_file())


def prune(retention_days: int) -> list[Path]:
    """Delete daily files beyond the newest `retention_days`; returns what was removed."""
    removed = log_files()[:-retention_days] if retention_days > 0 else []
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def tail(lines: int = 50, path: Path | None = None) -> list[str]:
    """The last `lines` lines of a log file (today's by default), read from the end."""
    path = path or log_path()
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            end = handle.tell()
            chunk, data = 64 * 1024, b""
            while end > 0 and data.count(b"\n") <= lines:
                start = max(0, end - chunk)
                handle.seek(start)
                data = handle.read(end - start) + data
                end = start
    except FileNotFoundError:
        return []
    kept: deque[str] = deque(maxlen=lines)
    for raw in data.splitlines():
        kept.append(raw.decode("utf-8", "replace"))
    return list(kept) if lines > 0 else []
