"""`claude-mem doctor`: is everything in place? One line per check, exit 1 on any failure."""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING

from claude_mem.text import counted

if TYPE_CHECKING:
    from claude_mem.settings import Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def checks() -> list[dict[str, str]]:
    """Each check: name, status (ok | warn | fail) and a detail line."""
    import os
    import sqlite3

    from claude_mem import paths, settings
    from claude_mem.pipeline import registry
    from claude_mem.pipeline.health import HealthLedger
    from claude_mem.search import embedding_health
    from claude_mem.store import queue
    from claude_mem.store.db import fts5_available, open_database
    from claude_mem.store.migrations import SchemaError

    found: list[dict[str, str]] = []

    def add(name: str, status: str, detail: str) -> None:
        found.append({"check": name, "status": status, "detail": detail})

    directory = paths.data_dir()
    try:
        paths.ensure_data_dir()
        mode = directory.stat().st_mode & 0o777
        writable = os.access(directory, os.W_OK)
        status = "ok" if writable and mode == paths.DIR_MODE else "warn"
        add("data dir", status if writable else "fail", f"{directory} (mode {mode:o})")
    except OSError as exc:
        add(
            "data dir", "fail", str(exc) if exc.strerror is None else f"{directory}: {exc.strerror}"
        )
        return found

    loaded = settings.load()
    if loaded.problems:
        for problem in loaded.problems:
            add("settings", "fail", problem)
    elif not paths.settings_path().exists():
        add("settings", "ok", f"{paths.settings_path()} absent; defaults apply")
    else:
        add("settings", "ok", f"{paths.settings_path()} valid")
    for key in sorted(loaded.unknown):
        add("settings", "warn", f"{key}: unknown key (kept in the file, not used)")

    add("sqlite", "ok", f"SQLite {sqlite3.sqlite_version}")
    add(
        "full-text search",
        "ok" if fts5_available() else "fail",
        "FTS5 available" if fts5_available() else "this SQLite lacks FTS5",
    )
    try:
        with open_database(loaded) as db:
            done, todo = db.schema_state()
            detail = (
                f"{db.path}: {counted(len(done), 'migration')}, latest {done[-1] if done else '-'}"
            )
            add(
                "database", "fail" if todo else "ok", detail + (f"; pending {todo}" if todo else "")
            )
            integrity = db.read().execute("PRAGMA quick_check").fetchone()[0]
            add("database integrity", "ok" if integrity == "ok" else "fail", integrity)
            counts = queue.counts(db.read())
            detail = f"{counts['pending']} pending, {counts['dead']} dead"
            if counts["dead"]:
                detail += " (see `claude-mem queue`, then `queue retry` or `queue drop`)"
            add("queue", "warn" if counts["dead"] else "ok", detail)
    except (SchemaError, sqlite3.DatabaseError, OSError) as exc:
        add("database", "fail", str(exc))
    add(*_worker(loaded))
    for check in _http_hooks():
        add(*check)
    for check in _hook_python():
        add(*check)
    add(*_spool())
    add(*_embeddings(loaded))
    if (embedder := embedding_health.doctor_check()) is not None:
        add(*embedder)
    chain = list(
        dict.fromkeys(
            [
                loaded.get_str("CLAUDE_MEM_PROVIDER"),
                *loaded.get_list("CLAUDE_MEM_FALLBACK_PROVIDERS"),
            ]
        )
    )
    known = registry.available()
    for name in chain:
        if name not in known:
            add("provider", "fail", f"{name}: not installed; available: {', '.join(known)}")
    ledger = HealthLedger()
    warning = ledger.warning(chain)
    add(
        "compression", "warn" if warning else "ok", warning or f"provider chain {' → '.join(chain)}"
    )
    if (team := _team(loaded)) is not None:
        add(*team)
    return found


def _worker(loaded: Settings) -> tuple[str, str, str]:
    """The worker this data dir's CLI and hooks would talk to: ours, same version, our token."""
    from claude_mem import __version__, paths
    from claude_mem.worker import lifecycle
    from claude_mem.worker.client import WorkerUnavailable, request
    from claude_mem.worker.token import read_token

    found = lifecycle.lookup(loaded)
    worker = found.ours
    info = lifecycle.read_pid_info()
    alive = info is not None and lifecycle.pid_alive_and_ours(info)
    if worker is None and found.foreign is not None and not alive:  # each its own port: fine
        return (
            "worker",
            "ok",
            f"not running; {lifecycle.foreign_line(found.foreign)}: this data dir's worker "
            "will take a free port, recorded in its worker.pid (hooks start it on demand)",
        )
    if worker is None:
        problem = found.problem()
        if problem:
            return "worker", "fail", problem
        return "worker", "ok", f"not running (port {found.port}); hooks start it on demand"
    where = f"pid {worker.pid}, port {worker.port}, version {worker.version}"
    try:
        answer = request("GET", "/api/openapi.json", port=worker.port, host=worker.host,
                         token=read_token(), timeout=5)  # fmt: skip
    except WorkerUnavailable as exc:
        return "worker", "fail", f"{where}: stopped answering ({exc})"
    if answer.status in (401, 403):
        return (
            "worker",
            "fail",
            (
                f"{where}: refuses the token in {paths.data_dir() / 'worker.token'}; "
                "`claude-mem worker restart`"
            ),
        )
    if worker.version != __version__:
        return "worker", "warn", f"{where}; installed {__version__}: `claude-mem worker restart`"
    return "worker", "ok", f"{where}, serves {paths.data_dir()}"


def _team(loaded: Settings) -> tuple[str, str, str] | None:
    """The team server CLAUDE_MEM_TEAM_URL names, asked directly (the driver's connect timeout
    bounds it): does it answer, and as a member of which team? None when no team is set."""
    from claude_mem.commands.team import direct_status
    from claude_mem.team import pg

    url = loaded.get_str("CLAUDE_MEM_TEAM_URL")
    if not url:
        return None
    report = direct_status(url)
    if report["connected"]:
        detail = f"{report['server']}: reachable, {report['member']} in team {report['team']!r}"
        return "team", "ok", detail
    detail = f"{report['error']}; team memory does not sync meanwhile (`claude-mem team status`)"
    return "team", "fail", pg.redact_text(detail, url)


def _http_hooks() -> list[tuple[str, str, str]]:
    """Claude Code's installed http hooks against this data dir's worker port and hook token."""
    from claude_mem.install.http_hooks import doctor_checks

    home = os.environ.get("HOME", "")
    if not os.path.isabs(home):
        return []
    try:
        cwd = os.getcwd()
    except OSError:
        return []
    return doctor_checks(home, cwd, os.environ)


def _hook_python() -> list[tuple[str, str, str]]:
    """The interpreters the installed command hooks run: still there, still able to run them."""
    from claude_mem.install.hook_python import doctor_checks

    try:
        cwd: str | None = os.getcwd()
    except OSError:
        cwd = None
    return doctor_checks(cwd)


def _spool() -> tuple[str, str, str]:
    """Events hooks kept while no worker could start, and those the full spool dropped."""
    from claude_mem.hooks import spool

    waiting = spool.pending_bytes()
    state = spool.read_state()
    dropped, earlier = (
        value if isinstance(value := state.get(key), int) else 0
        for key in ("dropped", "last_dropped")
    )
    if dropped:
        why = state.get("last_reason") or "the spool is full"
        fix = "start the worker (`claude-mem worker start`); CLAUDE_MEM_SPOOL_MAX_BYTES: the size"
        return ("spool", "fail", f"{counted(dropped, 'event')} dropped ({why}); {fix}")
    detail = f"{waiting} bytes of events wait for the worker" if waiting else "empty"
    if earlier:
        detail += f"; {counted(earlier, 'event')} dropped while it was full (before the last start)"
    return ("spool", "warn" if waiting or earlier else "ok", detail)


def _embeddings(loaded: Settings) -> tuple[str, str, str]:
    """Whether vector search can work, without loading the model (slow and large to load)."""
    from claude_mem.search import embed
    from claude_mem.search.embedding_health import backlog, describe_backlog
    from claude_mem.store.db import open_database

    name = loaded.get_str("CLAUDE_MEM_EMBEDDING_MODEL")
    if name == "none":
        return "embeddings", "ok", "off (CLAUDE_MEM_EMBEDDING_MODEL=none): full-text search only"
    try:
        path, sha256 = embed.locate(name)
    except (embed.ModelUnavailable, ValueError) as exc:
        return "embeddings", "warn", f"{exc}; search falls back to full text"
    detail = f"{name} ({path.name}, checksum ok)"
    try:
        with open_database(loaded) as db:
            missing = backlog(db, embed.model_id(name, sha256))
    except Exception:  # the database check above already reports why
        return "embeddings", "ok", detail
    if missing:
        detail += f"; {describe_backlog(missing)}"
    return "embeddings", "ok", detail


def run(args: argparse.Namespace) -> int:
    results = checks()
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
        for item in results:
            print(f"[{marks[item['status']]}] {item['check']:<18} {item['detail']}")
    return 1 if any(item["status"] == "fail" for item in results) else 0
