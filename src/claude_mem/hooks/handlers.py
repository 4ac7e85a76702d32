"""What each kind of event does. One function per kind, each returning a HookResult.

Text leaves the hook only after privacy cleaning (tags stripped, secrets redacted per
CLAUDE_MEM_REDACT_SECRETS): the worker cleans again, but a private region never crosses the
socket. Handlers never raise for bad input; the runner catches anything unexpected.
"""

from __future__ import annotations

from claude_mem.hooks.event import HookEvent, HookResult
from claude_mem.hooks.percent import quote

TYPE_CHECKING = False
if TYPE_CHECKING:  # never true at run time: `typing` stays out of the hook process
    from collections.abc import Callable
    from typing import Protocol

    from claude_mem.settings import Settings
    from claude_mem.worker.client import Response

    class WorkerLink(Protocol):
        """What handlers use of the worker: hooks.transport.Worker (a socket, in a command
        hook) or worker.local_worker.LocalWorker (in the worker, serving an http hook)."""

        timeout: float
        # True for the worker's own in-process link: nothing leaves the process before the
        # worker's ingest checks pauses and its store cleans every value, so a handler's edge
        # check of either would only repeat it.
        in_process: bool

        @property
        def host(self) -> str: ...  # where the viewer is (the session-start line)

        @property
        def port(self) -> int: ...

        def ensure_started(self, wait_s: float) -> bool: ...

        def call(self, method: str, path: str, payload: object = None) -> Response | None: ...


# Sent instead of a prompt that was private as a whole: the worker sees an empty private block,
# numbers the prompt as private (so the rest of that turn is skipped too) and stores no text.
# Sending the original would move private text over the socket; sending "" would be recorded
# as a media prompt and the turn's tool events would be captured.
PRIVATE_PROMPT = "<private></private>"
SEMANTIC_MIN_CHARS = 20  # the worker answers nothing for shorter prompts: skip the call
READ_TOOLS = frozenset({"Read", "read_file"})  # Claude Code's, Gemini CLI's: whole-file reads
FILE_GATE_TIMEOUT_S = 0.5  # a Read waits at most about this long for its file's timeline


def sent_prompt(raw: str, *, redact: bool) -> str | None:
    """A prompt as memory takes it: privacy-cleaned, PRIVATE_PROMPT when private as a whole,
    None when it is agent-to-agent plumbing rather than the user's words. The prompt hook and
    the recovery of prompts from a transcript (transcripts/calls.py) must agree on it."""
    from claude_mem import privacy  # noqa: PLC0415 - privacy's regexes cost import time

    if raw and privacy.is_protocol_payload(raw):
        return None
    text = privacy.clean_text(raw, redact=redact)
    return PRIVATE_PROMPT if not text and raw.strip() else text


PAUSED_NOTE = (
    "claude-mem: #nomem - this session is not remembered from here on "
    "(`claude-mem resume` to undo)."
)


class Context:
    """What handlers share: resolved settings and the worker connection."""

    __slots__ = ("settings", "worker")

    def __init__(self, settings: Settings, worker: WorkerLink) -> None:
        self.settings, self.worker = settings, worker

    @property
    def redact(self) -> bool:
        return self.settings.get_bool("CLAUDE_MEM_REDACT_SECRETS")

    @property
    def mode(self) -> str:
        return self.settings.get_str("CLAUDE_MEM_MODE")


def _session(event: HookEvent) -> dict[str, object]:
    return {"host_session_id": event.session_id, "platform": event.platform}


def session_start(event: HookEvent, ctx: Context) -> HookResult:
    """Start the worker if needed; the memory index as context, its terminal view for the user."""
    from claude_mem.hooks import state, version_check  # noqa: PLC0415

    hint = version_check.hint_once(event.platform, event.cwd)
    notes = [line for line in (state.take_capture_broken(), hint) if line]
    text = terminal = None
    worker = ctx.worker
    if worker.ensure_started(worker.timeout):
        where = quote(event.cwd or "")
        if event.session_id:  # what the session is given is not injected again later
            where += f"&session={quote(event.session_id)}"
            where += f"&platform={quote(event.platform)}"
        answer = _json(worker.call("GET", f"/api/context/session-start?cwd={where}"))
        text = _text(answer.get("context"))
        terminal = _text(answer.get("terminal"))
    context = "\n\n".join([*notes, text] if text else notes) or None
    lines = list(notes)
    if text and ctx.settings.get_bool("CLAUDE_MEM_CONTEXT_SHOW_TERMINAL_OUTPUT"):
        lines.append(_terminal_line(text, worker.host, worker.port))
        if terminal:
            lines.append(terminal)
    return HookResult(context, "\n".join(lines) or None)


def _json(response: Response | None) -> dict[str, object]:
    """A 200 answer's JSON object, else {}."""
    if response is None or response.status != 200:
        return {}
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _terminal_line(context: str, host: str, port: int) -> str:
    """The user's one-line summary, read off the context's index (its header and ID lines)."""
    # The header, not the first line: warning lines (settings, compression) come before it.
    first = next((line for line in context.splitlines() if line.startswith("# [")), "")
    project = "this project"
    if "# [" in first and "]" in first:
        project = first.split("# [", 1)[1].split("]", 1)[0] or project
    count = sum(1 for line in context.splitlines() if line.split(" ", 1)[0].strip("*").isdigit())
    where = f"[{host}]" if ":" in host else host
    noun = "memory" if count == 1 else "memories"
    return f"claude-mem: {count} {noun} for {project} - viewer: http://{where}:{port}/"


def prompt(event: HookEvent, ctx: Context) -> HookResult:
    """Register the prompt (and the session, on its first prompt); with
    CLAUDE_MEM_SEMANTIC_INJECT on (the default), answer with the past work relevant to it.

    A prompt containing `#nomem` pauses capture for the rest of its session and is not sent.
    Nothing is injected into a paused session nor in capture-only mode; recall-only injects.
    """
    if not event.session_id:
        return HookResult()
    from claude_mem import control  # noqa: PLC0415

    raw = event.prompt or ""
    text = sent_prompt(raw, redact=ctx.redact)
    if text is None:
        return HookResult()  # agent-to-agent plumbing, not the user's words
    if control.asks_no_memory(raw):
        control.pause(event.session_id, reason=control.NOMEM)
        return HookResult(system_message=PAUSED_NOTE)
    held = control.paused(event.session_id)
    if not control.capture_blocked(ctx.mode, event.session_id, held=held):
        body = {**_session(event), "cwd": event.cwd, "prompt": text,
                "transcript_path": event.transcript_path}  # fmt: skip
        ctx.worker.call("POST", "/api/sessions/init", body)
    if text == PRIVATE_PROMPT or not ctx.settings.get_bool("CLAUDE_MEM_SEMANTIC_INJECT"):
        return HookResult()
    if not control.injection_allowed(ctx.mode) or held:
        return HookResult()
    return HookResult(_related_work(text, event, ctx))


def _related_work(text: str, event: HookEvent, ctx: Context) -> str | None:
    """Past work relevant to the prompt, as context, or None. The worker leaves out what this
    session already has (its own records, its start context, earlier injections)."""
    if len(text.strip()) < SEMANTIC_MIN_CHARS:
        return None
    limit = ctx.settings.get_int("CLAUDE_MEM_SEMANTIC_INJECT_LIMIT")
    body = {"q": text, "cwd": event.cwd, "limit": limit, "session": event.session_id,
            "platform": event.platform}  # fmt: skip
    response = ctx.worker.call("POST", "/api/context/semantic", body)
    if response is None or response.status != 200:
        return None
    try:
        answer = response.json()
    except ValueError:
        return None
    context = answer.get("context") if isinstance(answer, dict) else None
    return context if isinstance(context, str) and context.strip() else None


def pre_read(event: HookEvent, ctx: Context) -> HookResult:
    """The file-read gate: before a Read of a big file, what memory knows about it.

    Once per file per session, only for a regular file of at least
    CLAUDE_MEM_FILE_GATE_MIN_BYTES; the worker decides the rest (exclusions, whether the file
    changed since its newest observation). Never blocks the Read: a short timeout, no
    permission decision, nothing on any failure.
    """
    import os  # noqa: PLC0415
    import stat  # noqa: PLC0415

    from claude_mem import control  # noqa: PLC0415
    from claude_mem.hooks import seen_files  # noqa: PLC0415

    tool_input = event.tool_input if isinstance(event.tool_input, dict) else {}
    path = tool_input.get("file_path")
    minimum = ctx.settings.get_int("CLAUDE_MEM_FILE_GATE_MIN_BYTES")
    if event.tool_name not in READ_TOOLS or not event.session_id or not minimum:
        return HookResult()
    if not isinstance(path, str) or not path.strip():
        return HookResult()
    if event.agent_id or not control.injection_allowed(ctx.mode):
        return HookResult()
    path = os.path.normpath(os.path.join(event.cwd or "", os.path.expanduser(path)))
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return HookResult()  # missing or unreadable: the Read itself will say so
    if not stat.S_ISREG(info.st_mode) or info.st_size < minimum:
        return HookResult()
    if seen_files.seen(event.session_id, path):
        return HookResult()
    ctx.worker.timeout = min(ctx.worker.timeout, FILE_GATE_TIMEOUT_S)
    query = f"path={quote(path)}&mtime_ms={int(info.st_mtime * 1000)}"
    if event.cwd:
        query += f"&cwd={quote(event.cwd)}"
    response = ctx.worker.call("GET", f"/api/context/file?{query}")
    if response is None or response.status != 200:
        return HookResult()
    text = response.body.decode("utf-8", "replace").strip()
    if not text:
        return HookResult()
    seen_files.remember(event.session_id, path)
    return HookResult(text)


def tool(event: HookEvent, ctx: Context) -> HookResult:
    """Queue a finished tool call for compression (skip-listed tools never leave the hook)."""
    if not event.session_id or not event.tool_name:
        return HookResult()
    if event.tool_name in ctx.settings.get_list("CLAUDE_MEM_SKIP_TOOLS"):
        return HookResult()
    tool_input, tool_response = event.tool_input, event.tool_response
    # Without a tool_use_id the worker derives one from the values: from cleaned ones only.
    if not (ctx.worker.in_process and event.tool_use_id):
        from claude_mem import control, privacy  # noqa: PLC0415

        if control.capture_blocked(ctx.mode, event.session_id):
            return HookResult()
        redact = ctx.redact
        tool_input = privacy.clean_value(tool_input, redact=redact)
        tool_response = privacy.clean_value(tool_response, redact=redact)
    body = {
        **_session(event),
        "cwd": event.cwd,
        "tool_name": event.tool_name,
        "tool_input": tool_input,
        "tool_response": tool_response,
        "tool_use_id": event.tool_use_id,
        "agent_id": event.agent_id,
        "agent_type": event.agent_type,
        "transcript_path": event.transcript_path,
    }
    ctx.worker.call("POST", "/api/sessions/observations", body)
    return HookResult()


def stop(event: HookEvent, ctx: Context) -> HookResult:
    """End the turn and ask for its summary; not for subagents, nor when a Stop hook
    re-entered."""
    if event.stop_hook_active or event.agent_id or not event.session_id:
        return HookResult()
    from claude_mem import control  # noqa: PLC0415

    if control.capture_blocked(ctx.mode, event.session_id):
        return HookResult()
    message = event.last_assistant_message
    if message is None and event.transcript_path:
        from claude_mem.hooks.transcript import last_assistant_text  # noqa: PLC0415

        message = last_assistant_text(event.transcript_path)
    from claude_mem import privacy  # noqa: PLC0415

    # Sent even when empty (or private as a whole): the Stop ends the turn, whose events are
    # then compressed together; the worker makes no summary of nothing.
    message = privacy.clean_text(message or "", redact=ctx.redact)
    body = {**_session(event), "cwd": event.cwd, "last_assistant_message": message,
            "transcript_path": event.transcript_path}  # fmt: skip
    ctx.worker.call("POST", "/api/sessions/summarize", body)
    return HookResult()


def session_end(event: HookEvent, ctx: Context) -> HookResult:
    if event.session_id:
        ctx.worker.call("POST", "/api/sessions/end", {**_session(event), "reason": event.reason})
    return HookResult()


def setup(event: HookEvent, ctx: Context) -> HookResult:
    """Version check (Claude Code's Setup hook): one hint line when an upgrade needs a repair."""
    from claude_mem.hooks.version_check import hint  # noqa: PLC0415

    line = hint(event.platform, event.cwd)
    return HookResult(line, stderr=line) if line else HookResult()


def noop(event: HookEvent, ctx: Context) -> HookResult:
    return HookResult()


HANDLERS: dict[str, Callable[[HookEvent, Context], HookResult]] = {
    "session_start": session_start,
    "prompt": prompt,
    "pre_read": pre_read,
    "tool": tool,
    "stop": stop,
    "session_end": session_end,
    "setup": setup,
    "noop": noop,
}
