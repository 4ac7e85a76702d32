"""What each host session was already given, so no prompt is handed the same memory twice.

The session-start context's rows replace a session's set (a new start, a `/clear` or a
compaction hands the agent a fresh context); each prompt-time injection adds to it. Labels are
the ones the agent reads: `12` (observation), `S4` (summary), `P7` (prompt). One small JSON
file in the state dir, written by the worker only (under a lock), bounded to the newest
`MAX_SESSIONS` sessions and `MAX_IDS` labels each: kept across worker restarts, cheap to read.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable

from claude_mem import paths

GIVEN = "given.json"
MAX_SESSIONS = 200
MAX_IDS = 500
_LOCK = threading.Lock()


def _key(platform: str, host_session_id: str) -> str:
    return f"{platform}/{host_session_id}"


def _load() -> dict[str, list[str]]:
    try:
        data = json.loads((paths.state_dir() / GIVEN).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: [str(i) for i in v] for k, v in data.items() if isinstance(v, list)}


def given(platform: str, host_session_id: str) -> set[str]:
    """The labels this session was given so far."""
    with _LOCK:
        return set(_load().get(_key(platform, host_session_id), ()))


def record(
    platform: str, host_session_id: str, labels: Iterable[str], *, start: bool = False
) -> None:
    """Add `labels` to the session's set; `start` replaces the set (a new context)."""
    key = _key(platform, host_session_id)
    with _LOCK:
        state = _load()
        earlier = state.pop(key, [])  # popped either way: the session becomes the newest
        kept = [] if start else earlier
        state[key] = list(dict.fromkeys([*kept, *labels]))[-MAX_IDS:]
        for old in list(state)[: max(0, len(state) - MAX_SESSIONS)]:
            del state[old]
        # Not flushed to disk: on the path of every session start and prompt, and a crash
        # that loses the newest labels only lets one be given again.
        paths.write_private_file(paths.state_dir() / GIVEN, json.dumps(state) + "\n", durable=False)
