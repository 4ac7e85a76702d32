"""Talking to the worker from a hook, with the failure contract in one place.

A request that cannot reach the worker (refused, timed out, 5xx, 429) gets exactly one recovery:
start the worker if it is not running (lifecycle.ensure_running, bounded wait), wait for its
store to open, and send again. What is left failing is reported to the runner through `error`,
which counts it (hooks.state), and an event it carried goes to the spool (hooks.spool) for the
next worker to ingest. 4xx answers mean the worker is there and said no: logged, not a
failure, except 401/403 (our token is refused: nothing will ever be captured, so it counts)
and answers that are not the worker's JSON (another program holds the port).

The port comes from the data dir's pid file first: when another data dir's worker holds the
configured port, this data dir's worker listens elsewhere, and only the pid file knows where.
"""

from __future__ import annotations

from time import monotonic, sleep

from claude_mem.hooks import jsonio
from claude_mem.worker.client import Response, WorkerUnavailable, request, snippet
from claude_mem.worker.pidfile import recorded_port
from claude_mem.worker.token import HEADER, read_token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from claude_mem.settings import Settings

RESTART_SHARE = 0.75  # of the hook timeout, spent waiting for a worker we started
READY_POLL_S = 0.025


class Worker:
    """The worker as one hook sees it: address, token, and what went wrong (if anything)."""

    in_process = False  # a socket away (or the spool): the hook cleans what it sends

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.timeout = settings.get_int("CLAUDE_MEM_HOOK_TIMEOUT_MS") / 1000
        self.host = settings.get_str("CLAUDE_MEM_WORKER_HOST")
        self.port = recorded_port() or settings.get_int("CLAUDE_MEM_WORKER_PORT")
        self.threshold = settings.get_int("CLAUDE_MEM_HOOK_FAIL_LOUD_THRESHOLD")
        self.token = read_token()
        self.error: str | None = None  # why the worker could not be used, once all retries ran
        self.reached = False  # the worker answered some request properly
        self.start_attempted = False
        self._recovered = False  # the one recovery per hook has been spent
        self.spool_note: str | None = None  # set when an event could not even be spooled

    def ensure_started(self, wait_s: float) -> bool:
        """Start the worker unless it runs (session start does this first); False if it won't."""
        from claude_mem.worker import lifecycle  # noqa: PLC0415 - only when starting

        self.start_attempted = True
        try:
            info = lifecycle.ensure_running(self.settings, wait_s=wait_s)
        except Exception as exc:  # lifecycle must never take the hook down
            info, reason = None, f"{type(exc).__name__}: {exc}"
        else:
            reason = f"no healthy worker within {wait_s:.1f} s"
        if info is None:
            self.error = snippet(f"worker unreachable: {_obstacle(self.settings) or reason}", 400)
            return False
        self.port = info.port
        self.token = read_token() or self.token
        if not info.ready:
            self._await_ready(monotonic() + wait_s)
        return True

    def call(self, method: str, path: str, payload: object = None) -> Response | None:
        """Send one request; the answer, or None once the worker counts as unreachable."""
        body = None
        if payload is not None:
            body = jsonio.dumps(payload, ensure_ascii=False).encode("utf-8", "replace")
        response, error = self._send(method, path, body)
        if error is not None and not self._recovered:
            self._recovered = True
            if self._recover(error):
                response, error = self._send(method, path, body)
        if error is not None:
            self.error = snippet(error, 400)  # the fail-loud report is one line
            self._spool(method, path, body)
            return None
        self.reached = True
        if response is not None and response.status >= 400:
            _log_refusal(method, path, response)
        return response

    def _spool(self, method: str, path: str, body: bytes | None) -> None:
        """Keep an undelivered event for the next worker (hooks.spool); never raises."""
        from claude_mem.hooks import spool  # noqa: PLC0415 - failure path only

        if body is None or not spool.wanted(method, path):
            return
        try:
            limit = self.settings.get_int("CLAUDE_MEM_SPOOL_MAX_BYTES")
            self.spool_note = spool.append(method, path, body, limit)
        except Exception:  # the spool must never take the hook down
            return

    def _send(
        self, method: str, path: str, body: bytes | None
    ) -> tuple[Response | None, str | None]:
        try:
            response = request(
                method,
                path,
                port=self.port,
                host=self.host,
                body=body,
                token=self.token,
                timeout=self.timeout,
            )
        except WorkerUnavailable as exc:
            return None, f"worker unreachable: {exc}"
        status = response.status
        if status >= 400 and not response.headers.get("content-type", "").startswith(
            "application/json"
        ):
            return response, (
                f"something else (not a claude-mem worker) answers on {self.host}:{self.port}: "
                f"HTTP {status}: {_reason(response)}"
            )
        if status >= 500 or status == 429:
            return response, f"worker answered HTTP {status}: {_reason(response)}"
        if status in (401, 403):
            return response, f"worker refused our API token (HTTP {status}; {HEADER})"
        return response, None

    def _recover(self, error: str) -> bool:
        """One attempt to make the next request work; True if it is worth sending again."""
        if "API token" in error:
            fresh = read_token()
            changed = fresh is not None and fresh != self.token
            self.token = fresh or self.token
            if changed:
                return True
            # Same token refused: maybe another data dir's worker holds the port; starting
            # ours (on a free port if need be) is the one recovery that can help.
        from claude_mem.hooks import state  # noqa: PLC0415 - failure path only

        if not state.may_start_worker(self.threshold):
            return False
        return self.ensure_started(self.timeout * RESTART_SHARE)

    def _await_ready(self, deadline: float) -> None:
        """Wait (bounded) until the worker's store is open: data routes answer 503 before."""
        while monotonic() < deadline:
            timeout = max(0.05, deadline - monotonic())
            try:
                got = request(
                    "GET", "/api/readiness", port=self.port, host=self.host, timeout=timeout
                )
            except WorkerUnavailable:
                got = None
            if got is not None and got.status == 200:
                return
            sleep(READY_POLL_S)


def _log_refusal(method: str, path: str, response: Response) -> None:
    """A 4xx: the worker is fine but rejected this event (bad field, unknown session...)."""
    try:
        from claude_mem import log  # noqa: PLC0415 - rare path

        level = "INFO" if response.status == 404 else "WARN"
        where = path.split("?", 1)[0]
        log.event(level, "hook", "worker refused the event", request=f"{method} {where}",
                  status=response.status, reason=_reason(response))  # fmt: skip
    except Exception:  # logging must never be why a hook fails
        return


def _reason(response: Response) -> str:
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return snippet(data["error"], 200)
    return snippet(response.body) or "no details"


def _obstacle(settings: Settings) -> str | None:
    """What holds the configured port instead of this data dir's worker, in one line."""
    from claude_mem.worker import lifecycle  # noqa: PLC0415 - failure path only

    try:
        return lifecycle.lookup(settings).problem()
    except Exception:  # diagnosing must never take the hook down
        return None
