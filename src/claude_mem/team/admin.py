"""Running a team server as its owner: the schema and teams (`init`), and members.

A member is a PostgreSQL login role with a generated password, granted the schema's reader
role and, unless read-only, its writer role, and listed in `claude_mem.members` with its team:
the engine's row-level security does the rest. Removing a member deletes that row and its
shares of projects in one transaction (its sessions see nothing from then on), ends its
sessions when the owner may (superuser or `pg_signal_backend`; otherwise it says how many are
left open) and drops the role, so its URL stops working at once; what it wrote stays, keyed by
its name. Resetting a member gives its role a new password and ends its sessions (which needs
the same privilege, asked for first): a lost or leaked join URL is replaced. Role names are
validated and every identifier goes through `psycopg.sql`; the password is hashed on this side
(libpq's `PQencryptPasswordConn`), so it never travels to the server, or its logs, in the clear.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from claude_mem.team import pg, schema

if TYPE_CHECKING:
    import psycopg

DEFAULT_TEAM = "default"
ROLE_NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")
TERMINATE_WAIT_MS = 5000  # how long remove-member waits for each of the member's sessions to end


class TeamAdminError(RuntimeError):
    """An administration step that cannot be done; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class Removed:
    """What `remove_member` did beyond dropping the role."""

    shares: list[str]  # the projects the member shared, no longer shared by it
    sessions_left: int  # its open sessions not ended: the owner may not signal them


@dataclass(frozen=True, slots=True)
class Member:
    role: str
    team: str
    can_write: bool
    added_at: datetime


def check_role_name(name: str) -> str:
    """`name` if it can be a member's role: lowercase letters, digits and `_`, at most 63."""
    if not ROLE_NAME.fullmatch(name) or name.startswith(("pg_", "claude_mem")):
        raise TeamAdminError(
            f"{name!r} cannot be a member's name: use lowercase letters, digits and '_', "
            "starting with a letter, at most 63 (not pg_… nor claude_mem…)"
        )
    return name


def init(owner_url: str, team: str = DEFAULT_TEAM) -> list[str]:
    """Bring the server's schema up to date and make sure `team` exists (again is fine).
    The migrations applied now."""
    if not team.strip():
        raise TeamAdminError("a team needs a name")
    with pg.connect(owner_url, autocommit=True) as conn:
        _require_owner(conn)
        applied = schema.migrate(conn)
        conn.execute(
            "INSERT INTO claude_mem.teams (name) VALUES (%s) ON CONFLICT (name) DO NOTHING",
            (team,),
        )
    return applied


def add_member(owner_url: str, name: str, team: str | None = None, read_only: bool = False) -> str:
    """Create member `name` of `team` (the only team when None); its join URL."""
    from psycopg import sql  # noqa: PLC0415 - the driver loads only when a team is used

    check_role_name(name)
    with pg.connect(owner_url) as conn, conn.transaction():
        team_id = _team_id(conn, team)
        if _is_member(conn, name):
            raise TeamAdminError(
                f"{name} is a member already; to give it a new join URL (the old one stops "
                f"working): claude-mem team reset-member {name}"
            )
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone():
            raise TeamAdminError(f"a role named {name} exists on this server already")
        role = sql.Identifier(name)
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(role))
        password = _new_password(conn, name)
        groups = [schema.READER] if read_only else [schema.READER, schema.WRITER]
        conn.execute(
            sql.SQL("GRANT {} TO {}").format(sql.SQL(", ").join(map(sql.Identifier, groups)), role)
        )
        conn.execute(
            "INSERT INTO claude_mem.members (role, team_id, can_write) VALUES (%s, %s, %s)",
            (name, team_id, not read_only),
        )
    return pg.with_credentials(owner_url, name, password)


def remove_member(owner_url: str, name: str) -> Removed:
    """Take `name` out of its team with its shares, end its sessions (when this owner may
    signal them) and drop its role."""
    from psycopg import sql  # noqa: PLC0415

    role = sql.Identifier(check_role_name(name))
    with pg.connect(owner_url, autocommit=True) as conn:
        with conn.transaction():
            gone = conn.execute(
                "DELETE FROM claude_mem.members WHERE role = %s RETURNING role", (name,)
            ).fetchone()
            if gone is None:
                raise TeamAdminError(f"{name} is not a member of a team on this server")
            shares = conn.execute(
                "DELETE FROM claude_mem.shared_projects WHERE shared_by = %s RETURNING project",
                (name,),
            ).fetchall()
            conn.execute(sql.SQL("ALTER ROLE {} NOLOGIN").format(role))
        sessions_left = 0
        if _may_signal(conn):
            _end_sessions(conn, name)
        else:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (name,)
            ).fetchone()
            sessions_left = 0 if row is None else int(str(row[0]))
        conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(role))
    return Removed(sorted({str(r[0]) for r in shares}), sessions_left)


def reset_member(owner_url: str, name: str) -> str:
    """A new password for member `name`, its sessions ended: its new join URL. The old URL
    stops working (a lost or leaked one); the member keeps its team, access and rows."""
    check_role_name(name)
    # One transaction: an owner that may not end the sessions leaves the password as it was,
    # rather than changed with its new URL lost in the error.
    with pg.connect(owner_url) as conn, conn.transaction():
        if not _is_member(conn, name):
            raise TeamAdminError(
                f"{name} is not a member of a team on this server "
                f"(add it: claude-mem team add-member {name})"
            )
        if not _may_signal(conn):
            raise TeamAdminError(
                "resetting a member ends its sessions, which needs an owner that is a superuser "
                "or has the pg_signal_backend role (GRANT pg_signal_backend TO <owner>)"
            )
        password = _new_password(conn, name)
        _end_sessions(conn, name)
    return pg.with_credentials(owner_url, name, password)


def members(owner_url: str) -> list[Member]:
    """Every member of every team on the server, by team then name."""
    from psycopg.rows import class_row  # noqa: PLC0415

    with pg.connect(owner_url, autocommit=True) as conn:
        cur = conn.cursor(row_factory=class_row(Member))
        return cur.execute(
            "SELECT m.role, t.name AS team, m.can_write, m.added_at FROM claude_mem.members m"
            " JOIN claude_mem.teams t ON t.id = m.team_id ORDER BY t.name, m.role"
        ).fetchall()


def teams(owner_url: str) -> list[str]:
    """The teams on the server, by name; none before `init`."""
    with pg.connect(owner_url, autocommit=True) as conn:
        row = conn.execute("SELECT to_regclass('claude_mem.teams')").fetchone()
        if row is None or row[0] is None:
            return []
        return [str(r[0]) for r in conn.execute("SELECT name FROM claude_mem.teams ORDER BY name")]


def _is_member(conn: psycopg.Connection[tuple[object, ...]], name: str) -> bool:
    found = conn.execute("SELECT 1 FROM claude_mem.members WHERE role = %s", (name,)).fetchone()
    return found is not None


def _new_password(conn: psycopg.Connection[tuple[object, ...]], name: str) -> str:
    """A generated password set for role `name`, hashed on this side (module docstring)."""
    from psycopg import sql  # noqa: PLC0415

    password = secrets.token_urlsafe(24)
    hashed = conn.pgconn.encrypt_password(password.encode(), name.encode()).decode()
    conn.execute(
        sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(name), sql.Literal(hashed))
    )
    return password


def _end_sessions(conn: psycopg.Connection[tuple[object, ...]], name: str) -> None:
    """End the sessions open as role `name`, each waited for up to TERMINATE_WAIT_MS."""
    conn.execute(
        "SELECT pg_terminate_backend(pid, %s) FROM pg_stat_activity WHERE usename = %s",
        (TERMINATE_WAIT_MS, name),
    )


def _require_owner(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Init creates a schema, group roles and, later, members: a role that may not is told so."""
    row = conn.execute(
        "SELECT current_user, rolsuper OR (rolcreaterole"
        " AND has_database_privilege(current_database(), 'CREATE'))"
        " FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if row is None or not row[1]:
        who = row[0] if row else "this role"
        raise TeamAdminError(
            f"team init needs the server's owner (a role that may create roles and schemas); "
            f"{who} may not"
        )


def _may_signal(conn: psycopg.Connection[tuple[object, ...]]) -> bool:
    """Whether this role may end another role's sessions (superuser or `pg_signal_backend`)."""
    row = conn.execute(
        "SELECT rolsuper OR pg_has_role(current_user, 'pg_signal_backend', 'USAGE')"
        " FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    return row is not None and bool(row[0])


def _team_id(conn: psycopg.Connection[tuple[object, ...]], team: str | None) -> int:
    if team is not None:
        found = conn.execute("SELECT id FROM claude_mem.teams WHERE name = %s", (team,)).fetchone()
        if found is None:
            raise TeamAdminError(f"no team {team!r} here: create it with claude-mem team init")
        return int(str(found[0]))
    rows = conn.execute("SELECT id, name FROM claude_mem.teams ORDER BY name").fetchall()
    if not rows:
        raise TeamAdminError("no team on this server yet: run claude-mem team init URL first")
    if len(rows) > 1:
        names = ", ".join(str(r[1]) for r in rows)
        raise TeamAdminError(f"this server has several teams ({names}): name one with --team")
    return int(str(rows[0][0]))
