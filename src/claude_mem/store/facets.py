"""The values the viewer's filters offer: platforms and observation types present in memory."""

from __future__ import annotations

import sqlite3


def platforms(conn: sqlite3.Connection) -> list[str]:
    return [row[0] for row in conn.execute("SELECT DISTINCT platform FROM sessions ORDER BY 1")]


def observation_types(conn: sqlite3.Connection) -> list[str]:
    # DISTINCT over idx_observations_type reads the index, not the table.
    return [row[0] for row in conn.execute("SELECT DISTINCT type FROM observations ORDER BY 1")]
