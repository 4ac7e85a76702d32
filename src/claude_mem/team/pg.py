"""Connections to the team's PostgreSQL, team URLs as they may be shown, and vectors as the
server's `vector` type reads them.

psycopg is imported here, when a connection is made, never at import time: the CLI and the
worker load this module without paying for the driver unless a team is configured.
"""

from __future__ import annotations

import array
import struct
import sys
import urllib.parse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from claude_mem.team.schema import DIMENSIONS

if TYPE_CHECKING:
    import psycopg

CONNECT_TIMEOUT_S = 5
APPLICATION = "claude-mem"


class TeamURLError(ValueError):
    """A team URL that is not a PostgreSQL URL we can use; the message says what is wrong."""


def check_url(url: str) -> str:
    """`url` stripped, if it names a PostgreSQL server with a user; else TeamURLError."""
    url = url.strip()
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise TeamURLError("a team URL starts with postgresql://")
    if not parts.hostname:
        raise TeamURLError("a team URL names its server: postgresql://USER:PASSWORD@HOST:PORT/DB")
    if not parts.username:
        raise TeamURLError("a team URL names its member: postgresql://USER:PASSWORD@HOST:PORT/DB")
    return url


def redact(url: str | None) -> str | None:
    """`url` with its password replaced by `***`: what logs, status and errors may show."""
    if not url:
        return url
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def redact_text(text: str, url: str | None) -> str:
    """`text` (an error message, say) with `url`'s password taken out wherever it appears."""
    password = urllib.parse.urlsplit(url).password if url else None
    if password:
        text = text.replace(password, "***")
        quoted = urllib.parse.quote(password, safe="")
        if quoted != password:
            text = text.replace(quoted, "***")
    return text


def with_credentials(url: str, user: str, password: str, database: str | None = None) -> str:
    """`url`'s server (and database, unless `database` is given) for another role."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    auth = urllib.parse.quote(user, safe="") + ":" + urllib.parse.quote(password, safe="")
    netloc = f"{auth}@{host}" + (f":{parts.port}" if parts.port else "")
    path = f"/{database}" if database is not None else parts.path
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, path=path))


def user_of(url: str) -> str | None:
    """The role a team URL connects as."""
    name = urllib.parse.urlsplit(url).username
    return urllib.parse.unquote(name) if name else None


def connect(
    url: str, *, autocommit: bool = False, statement_timeout_s: float | None = None
) -> psycopg.Connection[tuple[object, ...]]:
    """A connection as `url`'s role, failing within CONNECT_TIMEOUT_S when the server is away.

    TCP keepalives notice a server that vanished without closing the connection; with
    `statement_timeout_s` (the sync's and search's connections) no statement waits longer, so
    a stalled server fails a round instead of hanging it.
    """
    import psycopg  # noqa: PLC0415 - the driver loads only when a team is used

    limit = (
        "" if statement_timeout_s is None else f"-c statement_timeout={statement_timeout_s:.0f}s"
    )
    return psycopg.connect(
        url,
        autocommit=autocommit,
        connect_timeout=CONNECT_TIMEOUT_S,
        application_name=APPLICATION,
        keepalives=1,
        keepalives_idle=10,
        keepalives_interval=5,
        keepalives_count=3,
        options=limit,
    )


class Vector(bytes):
    """A vector in pgvector's binary form (dimensions, a reserved zero, big-endian float4s):
    the server reads it as it is, no float printed here nor parsed there."""


_VECTOR_HEAD = struct.pack(">HH", DIMENSIONS, 0)


def vector(values: Sequence[float]) -> Vector | None:
    """`values` as the server's binary vector, or None for a vector of another model's size,
    which the server's column cannot hold."""
    if len(values) != DIMENSIONS:
        return None
    floats = array.array("f", values)
    if sys.byteorder == "little":
        floats.byteswap()
    return Vector(_VECTOR_HEAD + floats.tobytes())


def binary_vectors(conn: psycopg.Connection[Any]) -> None:
    """`Vector`s sent to this connection's server as its `vector` type, in binary (the type's
    id is the server's own: the extension made it); once per connection."""
    if conn.adapters.types.get("vector") is not None:
        return
    from psycopg.adapt import Dumper  # noqa: PLC0415 - psycopg loads with the first connection
    from psycopg.pq import Format  # noqa: PLC0415
    from psycopg.types import TypeInfo  # noqa: PLC0415

    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise RuntimeError("the team server has no vector type (pgvector's): run `team init`")
    info.register(conn)
    vector_oid = info.oid

    class VectorDumper(Dumper):
        format = Format.BINARY
        oid = vector_oid

        def dump(self, obj: Vector) -> bytes:
            return obj

    conn.adapters.register_dumper(Vector, VectorDumper)
