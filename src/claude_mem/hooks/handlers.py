"""What each kind of event does. One function per kind, each returning a HookResult.

Text leaves the hook only after privacy cleaning (tags stripped, secrets redacted per
CLAUDE_MEM_REDACT_SECRETS): the worker cleans again, but a private region never crosses the
socket. Handlers never raise for bad input; the runner catches anything unexpected.
"""

from __future__ import annotations

from urllib.parse import quote

from claude_mem.hooks.event import HookEvent, HookResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from claude_mem.hooks.transport import Worker
    from claude_mem.settings import Settings

# Sent instead of a prompt that was private as a whole: the worker sees an empty private block,
# numbers the prompt as private (so the rest of that turn is skipped too) and stores no text.
# Sending the original would move private text over the socket; sending "" would be recorded
# as a media prompt and the turn's tool events would be captured.
PRIVATE_PROMPT = "<private></private>"


class Context:
    """What handlers share: resolved settings and the worker connection."""

    __slots__ = ("settings", "worker")

    def __init__(self, settings: Settings, worker: Worker) -> None:
        self.settings, self.worker = settings, worker

    @property
    def redact(self) -> bool:
        return self.settings.get_bool("CLAUDE_MEM_REDACT_SECRETS")


def _session(event: HookEvent) -> dict[str, object]:
    return {"host_session_id": event.session_id, "platform": event.platform}


def session_start(event: HookEvent, ctx: Context) -> HookResult:
    """Start the worker if needed and return the memory index as context."""
    from claude_mem.hooks import state, version_check  # noqa: PLC0415

    notes = [line for line in (state.take_capture_broken(), version_check.hint_once()) if line]
    text = None
    worker = ctx.worker
    if worker.ensure_started(worker.timeout):
        response = worker.call("GET", f"/api/context/inject?cwd={quote(event.cwd or '', safe='')}")
        if response is not None and response.status == 200:
            text = response.body.decode("utf-8", "replace").strip() or None
    context = "\n\n".join([*notes, text] if text else notes) or None
    lines = list(notes)
    if text and ctx.settings.get_bool("CLAUDE_MEM_CONTEXT_SHOW_TERMINAL_OUTPUT"):
        lines.append(_terminal_line(text, worker.host, worker.port))
    return HookResult(context, "\n".join(lines) or None)


def _terminal_line(context: str, host: str, port: int) -> str:
    """The user's one-line summary, read off the context's index (its header and ID lines)."""
    first = context.split("\n", 1)[0]
    project = "this project"
    if "# [" in first and "]" in first:
        project = first.split("# [", 1)[1].split("]", 1)[0] or project
    count = sum(1 for line in context.splitlines() if line.split(" ", 1)[0].isdigit())
    where = f"[{host}]" if ":" in host else host
    noun = "memory" if count == 1 else "memories"
    return f"claude-mem: {count} {noun} for {project} - viewer: http://{where}:{port}/"


def prompt(event: HookEvent, ctx: Context) -> HookResult:
    """Register the prompt (and the session, on its first prompt)."""
    if not event.session_id:
        return HookResult()
    from claude_mem import privacy  # noqa: PLC0415 - its regexes cost ~5 ms; not every kind needs them

    raw = event.prompt or ""
    if raw and privacy.is_protocol_payload(raw):
        return HookResult()  # agent-to-agent plumbing, not the user's words
    text = privacy.clean_text(raw, redact=ctx.redact)
    if not text and raw.strip():
        text = PRIVATE_PROMPT
    body = {**_session(event), "cwd": event.cwd, "prompt": text}
    ctx.worker.call("POST", "/api/sessions/init", body)
    return HookResult()


def pre_read(event: HookEvent, ctx: Context) -> HookResult:
    """Before a file is read. Never blocks the read.

    The file-read gate (a later issue) adds its lookup here: GET /api/observations/by-file for
    the file(s) in event.tool_input, returned as context. Until then, nothing to say.
    """
    return HookResult()


def tool(event: HookEvent, ctx: Context) -> HookResult:
    """Queue a finished tool call for compression (skip-listed tools never leave the hook)."""
    if not event.session_id or not event.tool_name:
        return HookResult()
    if event.tool_name in ctx.settings.get_list("CLAUDE_MEM_SKIP_TOOLS"):
        return HookResult()
    from claude_mem import privacy  # noqa: PLC0415

    redact = ctx.redact
    body = {
        **_session(event),
        "cwd": event.cwd,
        "tool_name": event.tool_name,
        "tool_input": privacy.clean_value(event.tool_input, redact=redact),
        "tool_response": privacy.clean_value(event.tool_response, redact=redact),
        "tool_use_id": event.tool_use_id,
        "agent_id": event.agent_id,
        "agent_type": event.agent_type,
    }
    ctx.worker.call("POST", "/api/sessions/observations", body)
    return HookResult()


def stop(event: HookEvent, ctx: Context) -> HookResult:
    """Ask for a summary of the turn; not for subagents, nor when a Stop hook re-entered."""
    if event.stop_hook_active or event.agent_id or not event.session_id:
        return HookResult()
    message = event.last_assistant_message
    if message is None and event.transcript_path:
        from claude_mem.hooks.transcript import last_assistant_text  # noqa: PLC0415

        message = last_assistant_text(event.transcript_path)
    from claude_mem import privacy  # noqa: PLC0415

    message = privacy.clean_text(message or "", redact=ctx.redact)
    if not message:
        return HookResult()
    body = {**_session(event), "cwd": event.cwd, "last_assistant_message": message}
    ctx.worker.call("POST", "/api/sessions/summarize", body)
    return HookResult()


def session_end(event: HookEvent, ctx: Context) -> HookResult:
    if event.session_id:
        ctx.worker.call("POST", "/api/sessions/end", {**_session(event), "reason": event.reason})
    return HookResult()


def setup(event: HookEvent, ctx: Context) -> HookResult:
    """Version check (Claude Code's Setup hook): one hint line when an upgrade needs a repair."""
    from claude_mem.hooks.version_check import hint  # noqa: PLC0415

    line = hint()
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
