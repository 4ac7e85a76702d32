"""The user's switches over capture and injection, besides per-project exclusions.

- `CLAUDE_MEM_MODE` (a setting): `normal`, `recall-only` (inject, capture nothing) or
  `capture-only` (capture, inject nothing);
- pauses, in `<data dir>/state/pauses.json`: one session (`claude-mem pause`, or a prompt
  containing `#nomem`) or all capture (`claude-mem pause --all`) until `claude-mem resume`.

Stdlib only and one small file read: hooks check it on every event, and so does the worker
(the authority: an event from any source is dropped while its session is paused).
"""

from __future__ import annotations

import time

from claude_mem import locations
from claude_mem.hooks import jsonio

TYPE_CHECKING = False  # `typing` costs milliseconds in a hook; annotations are strings anyway
if TYPE_CHECKING:
    from typing import TypedDict

    class Pauses(TypedDict):
        all: dict[str, object] | None  # {"at", "reason"}
        sessions: dict[str, object]  # host session id → {"at", "reason"}, oldest first


PAUSES = "pauses.json"
NOMEM = "#nomem"
MAX_PAUSED_SESSIONS = 500  # the oldest pauses are forgotten past this (sessions end)
MODES = ("normal", "recall-only", "capture-only")


def _path() -> str:
    return locations.state_file(PAUSES)


def pauses() -> Pauses:
    """{"all": {"at", "reason"} or None, "sessions": {host session id: {"at", "reason"}}}."""
    try:
        with open(_path(), "rb") as handle:
            data = jsonio.loads(handle.read())
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    sessions = data.get("sessions")
    return {
        "all": data.get("all") if isinstance(data.get("all"), dict) else None,
        "sessions": sessions if isinstance(sessions, dict) else {},
    }


def _save(state: Pauses) -> None:
    import json  # noqa: PLC0415 - indented output is json's (and this runs on #nomem only)

    locations.write_private_file(_path(), json.dumps(state, indent=1) + "\n")


def _sessions(state: Pauses) -> dict[str, object]:
    sessions = state["sessions"]
    assert isinstance(sessions, dict)
    return sessions


def pause(host_session_id: str | None = None, *, reason: str = "claude-mem pause") -> None:
    """Pause capture for one session (by the host's session id), or for everything."""
    state = pauses()
    entry = {"at": time.time(), "reason": reason}
    if host_session_id is None:
        state["all"] = entry
    else:
        sessions = _sessions(state)
        sessions.pop(host_session_id, None)
        sessions[host_session_id] = entry  # last: keys stay oldest first
        for key in list(sessions)[: max(0, len(sessions) - MAX_PAUSED_SESSIONS)]:
            del sessions[key]
    _save(state)


def resume(host_session_id: str | None = None) -> bool:
    """Lift one session's pause, or (None) every pause; False when nothing was paused."""
    state = pauses()
    sessions = _sessions(state)
    if host_session_id is None:
        if state["all"] is None and not sessions:
            return False
        _save({"all": None, "sessions": {}})
        return True
    if sessions.pop(host_session_id, None) is None:
        return False
    _save(state)
    return True


def lift_global() -> bool:
    """Lift `pause --all` alone (sessions paused one by one stay so); False when it was off."""
    state = pauses()
    if state["all"] is None:
        return False
    state["all"] = None
    _save(state)
    return True


def capture_blocked(
    mode: str, host_session_id: str | None, *, held: bool | None = None
) -> str | None:
    """Why an event must not be captured (`recall_only`, `paused`), or None. `held`: whether
    the session is paused, when the caller read it already (one read of the file per hook)."""
    if mode == "recall-only":
        return "recall_only"
    return "paused" if (paused(host_session_id) if held is None else held) else None


def paused(host_session_id: str | None) -> bool:
    """Whether all capture or this session is paused: nothing is injected into it either."""
    state = pauses()
    return state["all"] is not None or bool(host_session_id and host_session_id in _sessions(state))


def injection_allowed(mode: str) -> bool:
    return mode != "capture-only"


def asks_no_memory(prompt: str | None) -> bool:
    """Whether a prompt opts its session out of capture (`#nomem`, any case)."""
    return prompt is not None and NOMEM in prompt.lower()
