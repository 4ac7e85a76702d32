"""A command hook's fast path: its raw payload handed to the running worker, which answers.

The worker serves the event with the adapter and handlers the full path (hooks.runner) runs
here, as it does for Claude Code's http hooks (worker/routes/hooks.py), so this process only
carries bytes: no adapter, handler, settings or privacy module is imported, and a hook costs
little more than the interpreter's start (bench/hook_bench.py). It is taken only where it gives
the full path's answer: the data dir's pid file names a live worker of this version whose
environment, as far as the hook path reads it (`ENVIRONMENT`), is this process's; the worker
declines a hook timeout longer than `WAIT_MS` (409) and answers 503 while its store opens.
Whatever goes wrong before the worker answers 200 (no pid file, a refused connection, a
decline, a timeout) runs the full path with the same stdin, whose own contract (start the
worker, spool the event) takes over.
"""

from __future__ import annotations

import os
import sys

from claude_mem import __version__, locations
from claude_mem.hooks import stdio
from claude_mem.hooks.percent import quote, unquote
from claude_mem.worker import pidfile
from claude_mem.worker.token import HEADER, HOOK_ENV, read_token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

ROUTE = "/api/hooks/command"  # + /<platform>/<event>: worker/routes/hooks.py
# The longest hook timeout the fast path serves: the setting's default, so a default install
# takes it; a longer one (a slow worker is then expected) takes the full path.
WAIT_MS = 2000
GRACE_S = 0.5  # past the worker's own bound on its answer, before it counts as hung
WAIT_HEADER = "x-claude-mem-wait-ms"
CWD_HEADER = "x-claude-mem-cwd"  # this process's, for a payload that names none
EXIT_HEADER = "x-claude-mem-exit"  # the full path's exit code, when not 0
STDERR_HEADER = "x-claude-mem-stderr"  # what the full path would print on stderr, quoted
ENV_PREFIX = "CLAUDE_MEM_"
# Besides CLAUDE_MEM_*: the variables the hook path reads (adapters, handlers, the installed
# hooks' lookup; a test keeps this list complete), so that a worker started elsewhere answers
# only as this process would.
ENVIRONMENT = frozenset({
    "HOME", "CLAUDE_CONFIG_DIR", "CLAUDE_PLUGIN_ROOT", "CODEX_HOME",
    "GEMINI_SESSION_ID", "GEMINI_CWD", "GEMINI_PROJECT_DIR",
})  # fmt: skip
# Set for Claude Code's http hooks in its settings' `env`, so its command hooks see it too;
# nothing of ours reads it.
UNREAD = frozenset({HOOK_ENV})


def environment_digest(environ: Mapping[str, str]) -> str:
    """A digest of what the hook path reads from `environ`; the worker's is in its pid file."""
    names = sorted(
        n for n in environ if (n.startswith(ENV_PREFIX) or n in ENVIRONMENT) and n not in UNREAD
    )
    text = "\0".join(f"{name}={environ[name]}" for name in names)
    return locations.sha256_hex(text.encode("utf-8", "surrogateescape"))


def run(args: list[str]) -> int:
    """The command hook: the fast path when it applies, else the full path (hooks.runner)."""
    stdin: tuple[bytes, str] | None = None
    code = None
    try:
        worker = _worker() if len(args) == 2 else None
        if worker is not None:
            stdin = stdio.read()
            raw, status = stdin
            if status == "ok" and raw.strip():
                code = _send(worker, args[0], args[1], raw)
    except Exception:  # never the host's problem: the full path runs, and reports what fails
        code = None
    if code is not None:
        return code
    from claude_mem.hooks.runner import run as full_path  # noqa: PLC0415

    return full_path(args, stdin)


def _worker() -> tuple[str, int, str] | None:
    """(host, port, API token) of this data dir's worker, when the fast path may use it."""
    info = pidfile.read_pid_info()
    if info is None or info.get("version") != __version__:
        return None
    host, port = info.get("host"), pidfile.port_of(info)
    if not isinstance(host, str) or port is None:
        return None
    if info.get("env") != environment_digest(os.environ) or not pidfile.pid_alive_and_ours(info):
        return None
    token = read_token()
    return None if token is None else (host, port, token)


def _send(worker: tuple[str, int, str], platform: str, event: str, raw: bytes) -> int | None:
    """Print the worker's answer and return the exit code; None if the worker gave none."""
    from claude_mem.worker.client import WorkerUnavailable, request  # noqa: PLC0415

    host, port, token = worker
    headers = {HEADER: token, WAIT_HEADER: str(WAIT_MS)}
    cwd = stdio.process_cwd()
    if cwd is not None:
        headers[CWD_HEADER] = quote(cwd)  # UnicodeEncodeError (undecodable bytes): full path
    path = f"{ROUTE}/{quote(platform)}/{quote(event)}"
    try:
        response = request("POST", path, port=port, host=host, body=raw,
                           timeout=WAIT_MS / 1000 + GRACE_S, headers=headers)  # fmt: skip
    except WorkerUnavailable:
        return None
    if response.status != 200:
        return None
    _print(response.body + b"\n")
    said = response.headers.get(STDERR_HEADER)
    if said:
        stdio.say(unquote(said))
    code = response.headers.get(EXIT_HEADER, "0")
    return int(code) if code.isdigit() else 0


def _print(data: bytes) -> None:
    """The worker's answer on stdout, as it came (the full path's bytes)."""
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        pass  # the host stopped listening
