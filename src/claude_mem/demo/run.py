"""The demo itself: worker, replay through the real hooks, wait for compression, report.

Everything it touches is its own: a scratch folder (the project, and the memory unless
`--data-dir` is given) and the worker it starts, which it stops again unless `--keep`. The
hooks and the worker get embedded defaults whatever the user's environment says (the offline
`local` compressor, no API key, loopback only) and never see the user's Claude Code settings.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from claude_mem.demo import recorded
from claude_mem.text import counted

START_WAIT_S = 15.0
READY_WAIT_S = 15.0
DRAIN_WAIT_S = 30.0
HOOK_TIMEOUT_S = 30.0
POLL_S = 0.05
DEFAULT_QUERY = "Decimal"
SEARCH_LIMIT = 5
# What the demo pins, whatever the user's environment or settings file say.
EMBEDDED = {
    "CLAUDE_MEM_WORKER_HOST": "127.0.0.1",
    "CLAUDE_MEM_PROVIDER": "local",
    "CLAUDE_MEM_FALLBACK_PROVIDERS": "local",
}


class DemoError(Exception):
    """A step of the demo failed; the message says what and where to look."""


@dataclass
class Worker:
    pid: int
    port: int
    started: bool  # by this demo (so it is this demo's to stop)
    host: str = "127.0.0.1"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"


@dataclass
class Replayed:
    session: recorded.Session
    hooks: int = 0
    injected: int | None = None  # memories its SessionStart hook gave the model
    problems: list[str] = field(default_factory=list)


def run_demo(
    *,
    keep: bool = False,
    data_dir: str | os.PathLike[str] | None = None,
    port: int | None = None,
    query: str = DEFAULT_QUERY,
    out: TextIO | None = None,
) -> int:
    """Run the demo, printing to `out` (default stdout); the exit code (0 = success)."""
    out = out or sys.stdout
    began = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="claude-mem-demo-")).resolve()
    data = Path(data_dir).expanduser().absolute() if data_dir else scratch / "data"
    project = scratch / recorded.PROJECT_NAME
    home = scratch / "home"
    worker: Worker | None = None
    ok = False
    try:
        sessions = recorded.load_sessions()
        _pin_environment(data, port or _free_port())
        _prepare(data, temporary=data_dir is None)
        files = recorded.project_files(sessions)
        recorded.write_project(project, files)
        _git_init(project)
        worker = _start_worker()
        _say(out, f"claude-mem demo: {len(sessions)} recorded Claude Code sessions, replayed "
                  "through the real hook command")  # fmt: skip
        where = "temporary; your own memory is not touched" if data_dir is None else "--data-dir"
        _say(out, f"  memory   {data}  ({where})")
        _say(out, f"  project  {project}  ({counted(len(files), 'file')})")
        how = "started for this demo" if worker.started else "already running; left as it was"
        chain = ", then ".join(_get_json(worker, "/api/stats")["provider_chain"]) or "?"
        _say(out, f"  worker   pid {worker.pid} at {worker.url}  ({how}; compressor: {chain})")
        _say(out, "")
        _say(out, "Replaying: one hook process per event, as Claude Code runs our hooks")
        replayed = []
        for n, session in enumerate(sessions, 1):
            if n > 1:  # the next session starts once the last one's turn is compressed
                _wait_drained(worker)
            label = f"{n}/{len(sessions)}"
            replayed.append(_replay(session, label, project=project, home=home, out=out))
        stats, seconds = _wait_drained(worker)
        counts = stats["counts"]
        _say(out, f"Compressed into {counted(counts['observations'], 'observation')} and "
                  f"{counted(counts['session_summaries'], 'session summary')} by the worker "
                  f"(queue drained {seconds:.1f} s after the last hook).")  # fmt: skip
        problems = [p for r in replayed for p in r.problems]
        for problem in problems:
            _say(out, f"  warning: {problem}")
        _say(out, "")
        _show_context(worker, project, out)
        _show_search(project, query, out)
        note = "" if keep else "  (served while the worker runs: add --keep to browse it)"
        _say(out, f"Viewer: {_viewer_link(worker)}{note}")
        ok = not problems
    except DemoError as exc:
        _say(sys.stderr, f"claude-mem demo: {exc}")
        return 1
    finally:
        _finish(worker, scratch, data, keep=keep, ok=ok, out=out, began=began)
    return 0 if ok else 1


# --- set-up ----------------------------------------------------------------------------------


def _say(out: TextIO, line: str) -> None:
    out.write(line + "\n")
    out.flush()


def _free_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pin_environment(data: Path, port: int) -> None:
    """This process's environment, inherited by the worker and the hooks: demo values only."""
    for key in [k for k in os.environ if k.startswith("CLAUDE_MEM_")]:
        del os.environ[key]
    os.environ.update(EMBEDDED)
    os.environ["CLAUDE_MEM_DATA_DIR"] = str(data)
    os.environ["CLAUDE_MEM_WORKER_PORT"] = str(port)


def _prepare(data: Path, *, temporary: bool) -> None:
    from claude_mem import paths  # noqa: PLC0415
    from claude_mem.settings import SettingsError  # noqa: PLC0415
    from claude_mem.settings import load as load_settings  # noqa: PLC0415

    try:
        paths.ensure_data_dir()
        load_settings()
    except (OSError, SettingsError) as exc:
        raise DemoError(f"cannot use the data dir {data}: {exc}") from None
    if temporary:
        # The replayed hooks are the ones this version installs: no "run the installer" hint.
        from claude_mem.hooks.version_check import write_install_marker  # noqa: PLC0415

        write_install_marker()


def _git_init(project: Path) -> None:
    """Make the project a git repository when git is there (its identity is then its own)."""
    git = shutil.which("git")
    if git is None:
        return
    with contextlib.suppress(OSError, subprocess.SubprocessError):  # a plain folder will do
        subprocess.run([git, "init", "-q", str(project)], capture_output=True, timeout=10,
                       check=False)  # fmt: skip


def _start_worker() -> Worker:
    from claude_mem.worker import lifecycle  # noqa: PLC0415

    found = lifecycle.find_running()
    started = found is None
    info = found or lifecycle.ensure_running(wait_s=START_WAIT_S)
    if info is None:
        host, port = lifecycle.address()
        said = _tail(Path(lifecycle.stderr_log_path()))  # the scratch folder goes: quote it here
        raise DemoError(
            f"the worker could not start on {host}:{port} (is the port taken? try another "
            "--port)" + (f". It said:\n{said}" if said else "; it left no message.")
        )
    owner = lifecycle.read_pid_info()
    if owner is None or owner.get("pid") != info.pid:
        # Something else's worker answers on that port (say, the user's own, at --port):
        # replaying into it would write into someone else's memory.
        raise DemoError(
            f"{info.host}:{info.port} is served by a claude-mem worker (pid {info.pid}) for "
            f"another data dir, not {os.environ['CLAUDE_MEM_DATA_DIR']}; choose another --port"
        )
    os.environ["CLAUDE_MEM_WORKER_PORT"] = str(info.port)  # the hooks must find this one
    worker = Worker(info.pid, info.port, started, info.host)
    deadline = time.monotonic() + READY_WAIT_S
    while _get(worker, "/api/readiness", token=False)[0] != 200:
        if time.monotonic() >= deadline:
            _stop(worker)
            raise DemoError(f"the worker's database did not open within {READY_WAIT_S:.0f} s")
        time.sleep(POLL_S)
    return worker


def _tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join("    " + line for line in text.strip().splitlines()[-lines:])


# --- talking to the worker -------------------------------------------------------------------


def _get(worker: Worker, path: str, *, token: bool = True) -> tuple[int, bytes]:
    from claude_mem.worker.client import WorkerUnavailable, request  # noqa: PLC0415
    from claude_mem.worker.token import read_token  # noqa: PLC0415

    try:
        response = request(
            "GET",
            path,
            port=worker.port,
            host=worker.host,
            token=read_token() if token else None,
            timeout=5.0,
        )
    except WorkerUnavailable:
        return 0, b""
    return response.status, response.body


def _get_json(worker: Worker, path: str) -> Any:
    status, body = _get(worker, path)
    if status != 200:
        raise DemoError(f"GET {path} answered {status or 'nothing'}: {body[:200]!r}")
    return json.loads(body)


def _viewer_link(worker: Worker) -> str:
    """A one-time sign-in link (the page needs it to read memory), else the bare URL."""
    from claude_mem.viewer.link import LinkError, sign_in_link  # noqa: PLC0415

    try:
        return sign_in_link(worker.host, worker.port)
    except LinkError:
        return worker.url


# --- the replay ------------------------------------------------------------------------------


def _replay(
    session: recorded.Session, label: str, *, project: Path, home: Path, out: TextIO
) -> Replayed:
    from claude_mem.hooks.command import hook_argv  # noqa: PLC0415

    result = Replayed(session)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(home / ".claude")}  # not the user's config
    transcript = recorded.Transcript(session, project, home)
    for event in session.events:
        transcript.grow(event)  # what Claude Code had written when it ran this hook
        if not recorded.registered(event):
            continue  # Claude Code would not run our hook for it
        payload = recorded.relocate(event.payload, project, home)
        argv = hook_argv(recorded.PLATFORM, event.name)
        try:
            done = subprocess.run(
                argv,
                input=json.dumps(payload).encode(),
                env=env,
                cwd=project,
                capture_output=True,
                timeout=HOOK_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            result.problems.append(f"{event.name} hook took over {HOOK_TIMEOUT_S:.0f} s")
            continue
        result.hooks += 1
        stderr = done.stderr.decode("utf-8", "replace").strip()
        if done.returncode != 0 or stderr:
            result.problems.append(
                f"{event.name} hook exited {done.returncode}: {stderr[:300] or 'no message'}"
            )
        if event.name == "SessionStart":
            result.injected = _injected(done.stdout)
    _say(
        out, f"  {label} {session.slug}: {session.tool_calls} tool calls, {result.hooks} hook runs"
    )
    _say(out, f"      prompt: {_clip(session.prompt, 88)}")
    if result.injected is not None:
        memories = counted(result.injected, "memory", "memories") if result.injected else ""
        memories = memories or "no memory yet"
        _say(out, f"      its SessionStart hook injected: {memories}")
    return result


def _injected(stdout: bytes) -> int | None:
    """How many memories a SessionStart hook's answer gave the model (None: no context)."""
    try:
        answer = json.loads(stdout.decode("utf-8", "replace").strip().splitlines()[-1])
        context = answer["hookSpecificOutput"]["additionalContext"]
    except (ValueError, IndexError, KeyError, TypeError):
        return None
    if not isinstance(context, str):
        return None
    # An observation's row starts with its id: "12 …" in the index, "**12** …" expanded.
    return sum(1 for line in context.splitlines() if line.split(" ", 1)[0].strip("*").isdigit())


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return f'"{flat}"' if len(flat) <= width else f'"{flat[: width - 1]}…"'


def _wait_drained(worker: Worker) -> tuple[dict[str, Any], float]:
    """Wait until the worker's queue is empty; its stats and how long that took."""
    began = time.monotonic()
    deadline = began + DRAIN_WAIT_S
    while True:
        stats = _get_json(worker, "/api/stats")
        queue = stats["queue"]
        if queue["pending"] == 0 and queue["processing"] == 0:
            return stats, time.monotonic() - began
        if time.monotonic() >= deadline:
            raise DemoError(
                f"compression did not finish within {DRAIN_WAIT_S:.0f} s "
                f"({queue['pending']} pending, {queue['processing']} processing, "
                f"{queue['dead']} dead); see `claude-mem queue` and `claude-mem logs`"
            )
        time.sleep(POLL_S)


# --- the report ------------------------------------------------------------------------------


def _show_context(worker: Worker, project: Path, out: TextIO) -> None:
    status, body = _get(worker, f"/api/context/inject?cwd={quote(str(project), safe='')}")
    if status != 200:
        raise DemoError(f"GET /api/context/inject answered {status or 'nothing'}")
    _say(out, f"What the next session in {project.name} gets injected "
              "(GET /api/context/inject, as the SessionStart hook does):")  # fmt: skip
    for line in body.decode("utf-8", "replace").strip().splitlines():
        _say(out, f"  │ {line}".rstrip())
    _say(out, "")


def _show_search(project: Path, query: str, out: TextIO) -> None:
    from claude_mem import paths  # noqa: PLC0415
    from claude_mem.project import resolve_project  # noqa: PLC0415
    from claude_mem.store.db import connect  # noqa: PLC0415
    from claude_mem.store.fulltext import search_observations  # noqa: PLC0415

    projects = resolve_project(project).all_projects
    conn = connect(paths.db_path(), readonly=True)
    try:
        hits = search_observations(conn, query, projects=projects, limit=SEARCH_LIMIT)
    finally:
        conn.close()
    _say(out, f'Full-text search for "{query}" ({counted(len(hits), "hit")}, best first):')
    if not hits:
        _say(out, "  (nothing matched)")
    for hit in hits:
        _say(out, f"  #{hit['id']:<3} {hit['type']:<10} {hit['title']}")
        files = list(dict.fromkeys([*(hit.get("files_modified") or []),
                                    *(hit.get("files_read") or [])]))  # fmt: skip
        if files:
            _say(out, f"       files: {', '.join(str(f) for f in files[:4])}")
    _say(out, "")


def _program() -> str:
    """How the user ran us: `.venv/bin/claude-mem` stays that, anything else `claude-mem`."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "claude-mem":
        return shlex.quote(argv0)
    return "claude-mem"


def _stop(worker: Worker) -> bool:
    """Stop the worker if this demo started it and it is still that process."""
    from claude_mem.worker import lifecycle  # noqa: PLC0415

    info = lifecycle.read_pid_info()
    if not worker.started or info is None or info.get("pid") != worker.pid:
        return False
    return lifecycle.stop()


def _finish(
    worker: Worker | None,
    scratch: Path,
    data: Path,
    *,
    keep: bool,
    ok: bool,
    out: TextIO,
    began: float,
) -> None:
    seconds = time.monotonic() - began
    if keep and worker is not None:
        if worker.started:
            env = f"CLAUDE_MEM_DATA_DIR={shlex.quote(str(data))}"
            _say(out, f"Worker left running (pid {worker.pid}, {worker.url}). Explore it with")
            _say(out, f"  {env} {_program()} status")
            _say(out, "and stop it with")
            _say(out, f"  {env} {_program()} worker stop")
        _say(out, f"Files kept in {scratch}. Done in {seconds:.1f} s.")
        return
    stopped = worker is not None and _stop(worker)
    shutil.rmtree(scratch, ignore_errors=True)
    if worker is None or (not ok and not stopped):
        return
    what = "Worker stopped" if stopped else "Worker left as it was"
    kept = "" if data.is_relative_to(scratch) else f"; memory kept in {data}"
    _say(out, f"{what}, scratch files removed{kept} (--keep keeps both). "
              f"Done in {seconds:.1f} s.")  # fmt: skip
