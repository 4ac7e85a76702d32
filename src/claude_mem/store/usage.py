"""LLM token spend per day, session, provider and model: what budgets and `usage` read."""

from __future__ import annotations

import sqlite3
import time
from typing import Any


def today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())


def record(
    conn: sqlite3.Connection,
    *,
    session_id: int,
    provider: str,
    model: str | None,
    input_tokens: int,
    output_tokens: int,
    day: str | None = None,
) -> None:
    conn.execute(
        """INSERT INTO token_usage
               (day, session_id, provider, model, input_tokens, output_tokens, calls)
           VALUES (?, ?, ?, ?, ?, ?, 1)
           ON CONFLICT (day, session_id, provider, model) DO UPDATE SET
               input_tokens = input_tokens + excluded.input_tokens,
               output_tokens = output_tokens + excluded.output_tokens,
               calls = calls + 1""",
        (day or today(), session_id, provider, model or "", input_tokens, output_tokens),
    )


def spent_on_day(conn: sqlite3.Connection, day: str | None = None) -> int:
    row = conn.execute(
        "SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM token_usage WHERE day = ?",
        (day or today(),),
    ).fetchone()
    return int(row[0])


def spent_on_session(conn: sqlite3.Connection, session_id: int) -> int:
    row = conn.execute(
        """SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM token_usage
           WHERE session_id = ?""",
        (session_id,),
    ).fetchone()
    return int(row[0])


def report(conn: sqlite3.Connection, days: int = 30) -> list[dict[str, Any]]:
    """Per day and provider/model, newest day first."""
    cutoff = time.strftime("%Y-%m-%d", time.gmtime(time.time() - days * 86400))
    rows = conn.execute(
        """SELECT day, provider, model, SUM(input_tokens) AS input_tokens,
                  SUM(output_tokens) AS output_tokens, SUM(calls) AS calls,
                  COUNT(DISTINCT session_id) AS sessions
           FROM token_usage WHERE day >= ?
           GROUP BY day, provider, model ORDER BY day DESC, provider, model""",
        (cutoff,),
    )
    return [dict(row) for row in rows]
