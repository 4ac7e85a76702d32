"""Which files the read gate already annotated in each session: at most once per file.

One small JSON file, `<data dir>/state/file-gate.json`, read by a Read hook only after the
cheap checks passed and written only when a timeline was injected. Bounded: the most recent
sessions are kept. Two parallel Reads of one file may both annotate it: harmless.
"""

from __future__ import annotations

import time

from claude_mem import locations
from claude_mem.hooks import jsonio

NAME = "file-gate.json"
MAX_SESSIONS = 100
MAX_FILES = 2000  # per session


def _read() -> dict[str, object]:
    try:
        with open(locations.state_file(NAME), "rb") as handle:
            data = jsonio.loads(handle.read())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _files(entry: object) -> list[object]:
    files = entry.get("files") if isinstance(entry, dict) else None
    return files if isinstance(files, list) else []


def seen(session_id: str, path: str) -> bool:
    return path in _files(_read().get(session_id))


def remember(session_id: str, path: str) -> bool:
    """Note the file as annotated; False when the state could not be written (a full disk
    costs at most a repeated timeline)."""
    data = _read()
    files = [*_files(data.pop(session_id, None)), path][-MAX_FILES:]
    data[session_id] = {"at": time.time(), "files": files}  # last: keys stay oldest first
    for key in list(data)[: max(0, len(data) - MAX_SESSIONS)]:
        del data[key]
    try:
        locations.write_private_file(locations.state_file(NAME), jsonio.dumps(data) + "\n")
    except OSError:
        return False
    return True
