"""`claude-mem mcp` through the SDK's own client over stdio, against a real worker process."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from claude_mem.mcp.tools import format_search
from claude_mem.records import Observation
from claude_mem.store.db import open_database
from claude_mem.store.fulltext import QUERY_CHARS
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session
from tests.net import free_port
from tests.test_store_fulltext import STACK_TRACE
from tests.worker_process import CLI, Env, worker_env

T = TypeVar("T")
TOOLS = {"search", "timeline", "get_observations", "save_memory", "session_start_context"}
CORPUS_TOOLS = {"corpus_list", "corpus_build", "corpus_query"}  # tested in test_corpus_mcp.py


@pytest.fixture
def env(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from worker_env(data_dir, monkeypatch)


def with_session(
    env_vars: dict[str, str], cwd: Path, work: Callable[[ClientSession], Awaitable[T]]
) -> T:
    """Spawn `claude-mem mcp`, initialize a client session, run `work`, close everything."""
    params = StdioServerParameters(command=str(CLI), args=["mcp"], env=env_vars, cwd=cwd)

    async def main() -> T:
        with (cwd / "mcp-stderr.txt").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, read_timeout_seconds=60) as session,
            ):
                await session.initialize()
                return await work(session)

    return asyncio.run(main())


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def store_observations(project: str) -> list[int]:
    """Three observations in one session, a minute apart, written straight to the store."""
    base = int(time.time() * 1000) - 3_600_000
    with open_database() as db, db.write() as conn:
        sid = ensure_session(conn, platform="claude-code", host_session_id="h1", project=project)
        rows = [
            ("bugfix", "Fix token refresh race in auth client", "Refresh raced logout."),
            ("decision", "Use SQLite WAL for the queue", "WAL lets readers run during writes."),
            ("feature", "Add parquet export command", "Exports observations to parquet."),
        ]
        return [
            insert_observation(
                conn,
                Observation(
                    session_id=sid, project=project, type=kind, title=title, narrative=story,
                    facts=[f"fact about {kind}"], concepts=["how-it-works"],
                    files_modified=[f"src/{kind}.py"], prompt_number=i + 1,
                    created_at=base + i * 60_000,
                ),
            )[0]
            for i, (kind, title, story) in enumerate(rows)
        ]  # fmt: skip


def test_tools_over_stdio_against_a_real_worker(env: Env, tmp_path: Path) -> None:
    project_dir = tmp_path / "demo-proj"
    project_dir.mkdir()
    ids = store_observations("demo-proj")
    with open_database() as db, db.write() as conn:  # a newer record replaced the first one
        conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?", (ids[2], ids[0]))
    env.start()

    async def work(session: ClientSession) -> dict[str, Any]:
        listed = await session.list_tools()
        out: dict[str, Any] = {"tools": {t.name: t for t in listed.tools}}

        async def call(name: str, **arguments: Any) -> Any:
            return await session.call_tool(name, arguments)

        out["search"] = await call("search", query="token refresh race")
        out["search_filtered"] = await call("search", query="WAL", project="demo-proj",
                                            type="decision", limit=5)  # fmt: skip
        out["timeline"] = await call("timeline", anchor=ids[1], depth_before=1, depth_after=1)
        out["timeline_query"] = await call("timeline", query="parquet export")
        out["get"] = await call("get_observations", ids=[ids[0], ids[2], 999_999])
        out["save"] = await call(
            "save_memory",
            text="Deploys need VPN. <private>vpn password hunter2</private>",
            title="Deploy needs VPN",
            type="decision",
            concepts=["gotcha"],
        )
        out["context"] = await call("session_start_context")
        out["context_other"] = await call("session_start_context", project="nothing-here")
        out["bad_anchor"] = await call("timeline", anchor="not-an-anchor")
        out["no_anchor"] = await call("timeline")
        out["bad_args"] = await call("get_observations", ids=[])
        out["bad_type"] = await call("search", query="WAL", type="nosuchtype")
        out["bad_limit"] = await call("search", query="WAL", limit=500)
        out["no_query"] = await call("search")
        out["long"] = await call("search", query="Crash in token_refresh_race\n" + STACK_TRACE)
        return out

    out = with_session(env.vars, project_dir, work)

    tools = out["tools"]
    assert set(tools) == TOOLS | CORPUS_TOOLS
    for tool in tools.values():
        assert len(tool.description) > 100, tool.name  # each says when to use it
    assert "FIRST" in tools["search"].description
    assert tools["get_observations"].input_schema["required"] == ["ids"]

    for name in ("get", "save"):
        assert not out[name].is_error, (name, text_of(out[name]))

    full = text_of(out["get"])
    assert "Refresh raced logout." in full
    assert "fact about feature" in full
    assert "src/bugfix.py" in full
    assert "prompt 1" in full
    assert "from hooks" in full
    assert "Not found: 999999" in full
    assert f"Superseded by #{ids[2]}: a newer memory replaced this one" in full
    assert full.count("Superseded by") == 1  # the newer one is current
    assert "WAL lets readers" not in full  # only the ids asked for

    saved = text_of(out["save"])
    assert "Saved memory #" in saved
    assert "demo-proj" in saved  # the project came from the server's cwd
    memory_id = int(saved.split("#", 1)[1].split()[0])
    with open_database() as db:
        row = (
            db.read()
            .execute("SELECT title, narrative, type FROM observations WHERE id = ?", (memory_id,))
            .fetchone()
        )
    assert tuple(row) == ("Deploy needs VPN", "Deploys need VPN.", "decision")

    context = text_of(out["context"])
    assert not out["context"].is_error
    assert "Use SQLite WAL for the queue" in context
    assert "Deploy needs VPN" in context
    assert "no memory yet" in text_of(out["context_other"])

    assert out["bad_anchor"].is_error
    assert "400" in text_of(out["bad_anchor"])
    assert out["no_anchor"].is_error
    assert "anchor" in text_of(out["no_anchor"])
    assert out["bad_args"].is_error
    assert out["bad_type"].is_error
    assert "unknown type 'nosuchtype': the types are bugfix, feature" in text_of(out["bad_type"])
    # Tool errors are one line in our words: no pydantic report, no link, no SDK prefix.
    assert text_of(out["bad_args"]) == (
        "get_observations: invalid arguments: `ids` list should have at least 1 item after"
        " validation, not 0 (see its input schema)"
    )
    assert text_of(out["bad_limit"]) == (
        "search: invalid arguments: `limit` input should be less than or equal to 100"
        " (see its input schema)"
    )
    assert text_of(out["no_query"]).startswith("search: invalid arguments: `query` is required")
    assert text_of(out["no_anchor"]).startswith("give anchor")
    for name in ("bad_anchor", "no_anchor", "bad_args", "bad_type", "bad_limit", "no_query"):
        shown = text_of(out[name])
        assert out[name].is_error, name
        assert "\n" not in shown, shown
        assert "pydantic" not in shown, shown
        assert "http" not in shown, shown
        assert not shown.startswith("Error executing tool"), shown
    assert not out["long"].is_error, text_of(out["long"])
    long = text_of(out["long"])
    assert long.startswith(f"(The query was clipped to {QUERY_CHARS:,} characters.)")
    assert f"#{ids[0]}" in long  # its identifier is among the distinctive terms searched

    # Search and timeline last: they depend on the search routes (checked in detail elsewhere).
    for name in ("search", "search_filtered", "timeline", "timeline_query"):
        assert not out[name].is_error, (name, text_of(out[name]))

    search = text_of(out["search"])
    assert f"#{ids[0]}" in search
    assert search.count("| ID |") == 1  # one table, whatever the hits' days
    assert "src/bugfix.py" in search  # the files a hit touched
    assert "Fix token refresh race" in search
    assert f"(superseded by #{ids[2]})" in search
    filtered = text_of(out["search_filtered"])
    assert f"#{ids[1]}" in filtered
    assert f"#{ids[0]}" not in filtered

    timeline = text_of(out["timeline"])
    assert all(f"#{i}" in timeline for i in ids)  # one before, the anchor, one after
    order = [timeline.rindex(title) for title in ("Fix token", "Use SQLite WAL", "Add parquet")]
    assert order == sorted(order)  # time order
    assert "parquet" in text_of(out["timeline_query"]).lower()


def test_restarts_a_stopped_worker(env: Env, tmp_path: Path) -> None:
    """The worker dies between two calls: the server starts a new one and answers."""
    ids = store_observations("proj")
    first_pid = env.start()

    async def work(session: ClientSession) -> tuple[Any, Any]:
        before = await session.call_tool("get_observations", {"ids": ids[:1]})
        assert env.cli("worker", "stop").returncode == 0
        after = await session.call_tool("get_observations", {"ids": ids[:1]})
        return before, after

    before, after = with_session(env.vars, tmp_path, work)
    assert not before.is_error
    assert not after.is_error, text_of(after)
    assert "Fix token refresh race" in text_of(after)
    health = env.health()
    assert health is not None
    assert health["pid"] != first_pid


def test_worker_that_cannot_start_is_a_tool_error(tmp_path: Path) -> None:
    """No worker and none can start (the data dir is a file): a clear error, quickly."""
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    env_vars = dict(os.environ)
    env_vars["CLAUDE_MEM_DATA_DIR"] = str(blocked)
    env_vars["CLAUDE_MEM_WORKER_PORT"] = str(free_port())

    async def work(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("search", {"query": "anything"}),
            await session.call_tool("session_start_context", {}),
        ]

    results = with_session(env_vars, tmp_path, work)
    for result in results:
        assert result.is_error
        assert "worker is not running and could not be started" in text_of(result)


def test_counts_use_the_right_noun() -> None:
    hit = {"id": 3, "kind": "observation", "type": "bugfix", "title": "Fix it", "time": 0}
    assert format_search({"hits": [hit]}, "fix").startswith("1 result for 'fix':")
    assert format_search({"hits": [hit, {**hit, "id": 4}]}, "fix").startswith("2 results for")
