"""How people name a session on the command line, the same in `pause`, `resume` and `forget`,
and as `status` lists them: the agent's own session id (what pauses are keyed on), or its
start when no other session's id starts so, or the session number the viewer shows.

An exact id wins over a number (an agent may name a session `12`), a number over a prefix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

SESSION_HELP = (
    "the agent's session id as `claude-mem status` lists it (or its start, when no other "
    "session's id starts so), or the session number the viewer shows"
)
SHOWN_MATCHES = 5  # ids listed when a prefix names several sessions


class NoSession(Exception):
    """The session to act on cannot be found, or the name fits several; the message says so."""


def named_session(conn: sqlite3.Connection, given: str) -> dict[str, Any]:
    """The stored session `given` names (see the module docstring); NoSession otherwise."""
    from claude_mem.store.sessions import get_session, sessions_with_host_id, sessions_with_prefix

    given = given.strip()
    if not given:
        raise NoSession("give a session id; `claude-mem status` lists the recent ones")
    found = sessions_with_host_id(conn, given)
    if found:
        return found[0]
    row = get_session(conn, int(given)) if given.isdigit() and len(given) < 19 else None
    if row is not None:
        return row
    matches = sessions_with_prefix(conn, given, SHOWN_MATCHES + 1)
    ids = list(dict.fromkeys(str(match["host_session_id"]) for match in matches))
    if len(ids) == 1:
        return matches[0]
    if ids:
        listed = ", ".join(ids[:SHOWN_MATCHES]) + (", …" if len(ids) > SHOWN_MATCHES else "")
        raise NoSession(f"{given} starts several sessions' ids ({listed}): give more of it")
    raise NoSession(f"no session {given} is recorded; `claude-mem status` lists the recent ones")


def label(row: dict[str, Any]) -> str:
    """`session <agent's id> (project, platform)`: a session as every command names it."""
    return f"session {row['host_session_id']} ({row['project']}, {row['platform']})"
