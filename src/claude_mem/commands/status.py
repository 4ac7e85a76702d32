"""`claude-mem status`: what memory holds right now, and the sessions seen last, named by the
agent's session id as `pause`, `resume` and `forget --session` take it."""

from __future__ import annotations

import argparse
import json

from claude_mem.text import counted

RECENT_SESSIONS = 5  # sessions listed, newest first


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def collect() -> dict[str, object]:
    from claude_mem import control, paths, settings
    from claude_mem.search import embedding_health
    from claude_mem.store import git_history, stats
    from claude_mem.store.db import open_database

    pauses = control.pauses()
    loaded = settings.load()
    model = embedding_health.configured_model(loaded)
    with open_database(loaded) as db:
        conn = db.read()
        sizes = stats.file_bytes(db.path)
        return {
            "data_dir": str(paths.data_dir()),
            "database": str(db.path),
            "database_bytes": sum(sizes.values()),
            "database_files": sizes,
            **stats.snapshot(conn),
            "projects": [project["name"] for project in stats.projects(conn)],
            "git_history": git_history.histories(conn),
            "mode": loaded.get_str("CLAUDE_MEM_MODE"),
            "paused_all": pauses["all"] is not None,
            "paused_sessions": sorted(pauses["sessions"]),
            "recent_sessions": [
                {
                    "id": row["host_session_id"],
                    "number": row["id"],
                    "project": row["project"],
                    "platform": row["platform"],
                    "status": row["status"],
                    "paused": control.paused(row["host_session_id"]),
                }
                for row in stats.recent_sessions(conn, RECENT_SESSIONS)
            ],
            "worker": _worker(),
            "embedding": embedding_health.from_worker(),  # the worker's embedder, or None
            # records the configured model has not embedded yet (None: vectors off)
            "embedding_backlog": embedding_health.backlog(db, model) if model else None,
        }


def _worker() -> dict[str, object]:
    """Whether this data dir's worker runs (pid, port), or what holds its port instead."""
    from claude_mem.worker import lifecycle

    found = lifecycle.lookup()
    if found.ours is None:
        return {"running": False, "port": found.port, "problem": found.problem()}
    return {"running": True, "pid": found.ours.pid, "port": found.ours.port}


def _capture_line(info: dict[str, object]) -> str:
    """What is captured and injected right now, in one line."""
    mode = info["mode"]
    line = {
        "normal": "capture and injection on",
        "recall-only": "recall-only: injecting, capturing nothing",
        "capture-only": "capture-only: capturing, injecting nothing",
    }[str(mode)]
    paused = info["paused_sessions"]
    assert isinstance(paused, list)
    if info["paused_all"]:
        line += "; capture PAUSED for every session (`claude-mem resume --all`)"
    elif paused:
        line += f"; capture paused for {counted(len(paused), 'session')}: {', '.join(paused[-3:])}"
    return line


def _history_line(histories: object) -> str:
    """Commits kept per project whose history was read ("partly" until HEAD's is whole)."""
    assert isinstance(histories, list)
    if not histories:
        return "none read yet (`claude-mem import --git`, or a session in a git checkout)"
    parts = [
        f"{h['project']} {counted(h['commits'], 'commit')}{'' if h['head'] else ' (partly)'}"
        for h in histories
    ]
    return ", ".join(parts)


def _session_lines(sessions: object) -> list[str]:
    """One line per recent session: its id first, as the commands that take one want it."""
    assert isinstance(sessions, list)
    if not sessions:
        return ["none recorded yet"]
    width = max(len(str(s["id"])) for s in sessions)
    return [
        f"{s['id']:<{width}}  {s['project']}, {s['platform']}, "
        f"{'ended' if s['status'] != 'active' else 'active'}{', paused' if s['paused'] else ''}"
        for s in sessions
    ]


def _worker_line(worker: object) -> str:
    assert isinstance(worker, dict)
    if worker["running"]:
        return f"running, pid {worker['pid']}, port {worker['port']}"
    line = f"not running (port {worker['port']}; hooks start it, or `claude-mem worker start`)"
    return line + (f"; {worker['problem']}" if worker["problem"] else "")


def run(args: argparse.Namespace) -> int:
    info = collect()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    counts = info["counts"]
    queue = info["queue"]
    assert isinstance(counts, dict)
    assert isinstance(queue, dict)
    print(f"data dir      {info['data_dir']}")
    sizes = info["database_files"]
    assert isinstance(sizes, dict)
    print(
        f"database      {info['database']} ({info['database_bytes']:,} bytes, "
        f"of which {sizes['wal']:,} in the WAL)"
    )
    print(f"worker        {_worker_line(info['worker'])}")
    from claude_mem.store.stats import MEMORY_TABLES, describe

    print(f"memory        {describe({table: counts[table] for table in MEMORY_TABLES})}")
    print(
        f"queue         {queue['pending']} pending, {queue['processing']} processing, "
        f"{queue['dead']} dead"
    )
    projects = info["projects"]
    assert isinstance(projects, list)
    print(f"projects      {', '.join(projects) if projects else '(none yet)'}")
    print(f"git history   {_history_line(info['git_history'])}")
    print(f"mode          {_capture_line(info)}")
    for n, line in enumerate(_session_lines(info["recent_sessions"])):
        print(f"{'sessions' if n == 0 else '':<14}{line}")
    embeddings = _embedding_line(info["embedding"], info["embedding_backlog"])
    if embeddings:
        print(f"embeddings    {embeddings}")
    return 0


def _embedding_line(embedding: object, backlog: object) -> str:
    """The worker's embedder (when one runs) and the records still to embed (when any)."""
    from claude_mem.search.embedding_health import describe, describe_backlog

    parts = [describe(embedding)[1]] if isinstance(embedding, dict) else []
    if isinstance(backlog, int) and backlog:
        parts.append(describe_backlog(backlog))
    return "; ".join(parts)
