"""Claude Code (verified against 2.1.332's real payloads).

Every event carries session_id, transcript_path, cwd and hook_event_name; PostToolUse adds a
tool_response object and PostToolUseFailure an `error` string instead. Context reaches the model
through `hookSpecificOutput.additionalContext`; `systemMessage` is shown to the user.
"""

from __future__ import annotations

import os

from claude_mem.hooks import jsonio
from claude_mem.hooks.adapters.base import (
    agent_field,
    context_output,
    first,
    flag,
    nonempty,
    string,
    table,
)
from claude_mem.hooks.event import HookEvent, HookResult
from claude_mem.settings import stamp

NAME = "claude-code"
PLUGIN = "claude-mem-py"  # our name in Claude Code's `enabledPlugins`
_SETTINGS_FILES = ("settings.local.json", "settings.json")  # a project's, strongest first

EVENTS = table(
    ("SessionStart", "session_start", ("context",)),
    ("UserPromptSubmit", "prompt", ("session-init",)),
    ("PreToolUse", "pre_read", ("file-context",)),
    ("PostToolUse", "tool", ("observation",)),
    ("PostToolUseFailure", "tool", ()),
    ("Stop", "stop", ("summarize",)),
    ("SubagentStop", "stop", ()),
    ("SessionEnd", "session_end", ()),
    ("Setup", "setup", ()),
    ("Notification", "noop", ()),
    ("PermissionRequest", "noop", ()),
    ("PreCompact", "noop", ()),
    ("SubagentStart", "noop", ()),
)
# Exit 2 blocks PreToolUse and erases a submitted prompt, and makes Stop continue the turn;
# after a tool ran, or at session start/end, it only shows our line.
LOUD = frozenset({"tool", "session_start", "session_end"})
CONTEXT_KINDS = frozenset({"session_start", "prompt", "pre_read"})


def normalize(payload: dict[str, object], host_event: str, kind: str) -> HookEvent:
    response = payload.get("tool_response")
    if host_event == "PostToolUseFailure" and response is None:
        error = payload.get("error")
        response = {"error": error if isinstance(error, str) else jsonio.dumps(error)}
    agent_id = agent_field(payload.get("agent_id"))
    if host_event == "SubagentStop" and agent_id is None:
        agent_id = "subagent"  # always a subagent, whatever this version sends
    return HookEvent(
        NAME,
        host_event,
        kind,
        session_id=first(payload.get("session_id"), payload.get("id"), payload.get("sessionId")),
        cwd=nonempty(payload.get("cwd")),
        prompt=string(payload.get("prompt")),
        tool_name=nonempty(payload.get("tool_name")),
        tool_input=payload.get("tool_input"),
        tool_response=response,
        tool_use_id=nonempty(payload.get("tool_use_id")),
        last_assistant_message=string(payload.get("last_assistant_message")),
        transcript_path=nonempty(payload.get("transcript_path")),
        stop_hook_active=flag(payload.get("stop_hook_active")),
        agent_id=agent_id,
        agent_type=agent_field(payload.get("agent_type")),
        source=string(payload.get("source")),
        reason=string(payload.get("reason")),
    )


def output(event: HookEvent, result: HookResult) -> dict[str, object]:
    out: dict[str, object] = {}
    if result.context and event.kind in CONTEXT_KINDS:
        out.update(context_output(event.host_event, result.context))
    if result.system_message:
        out["systemMessage"] = result.system_message
    return out


def _config_dir() -> str:
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def disabled(payload: dict[str, object]) -> bool:
    """Whether the user switched our plugin off (`enabledPlugins`) in Claude Code's settings.

    Local project settings beat project settings beat user settings, as in Claude Code. Cheap:
    a project without a `.claude` folder costs one stat, a file is read again only when its
    stat changed (the worker asks on every http hook), one that does not mention us is never
    parsed.
    """
    files = []
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        folder = os.path.join(cwd, ".claude")
        if os.path.isdir(folder):
            files += [os.path.join(folder, name) for name in _SETTINGS_FILES]
    files.append(os.path.join(_config_dir(), "settings.json"))
    for path in files:
        decision = _plugin_flag(path)
        if decision is not None:
            return not decision
    return False


_FLAGS_CACHED = 256  # settings files remembered (a worker serves many projects' hooks)
_flags: dict[str, tuple[tuple[int, int, int], bool | None]] = {}


def _plugin_flag(path: str) -> bool | None:
    """The file's say on our plugin, remembered while its stamp (as settings.json's) stays."""
    found = stamp(path)
    if found is None:
        return None
    cached = _flags.get(path)
    if cached is not None and cached[0] == found:
        return cached[1]
    decision = _read_flag(path)
    if len(_flags) >= _FLAGS_CACHED:
        _flags.clear()
    _flags[path] = (found, decision)
    return decision


def _read_flag(path: str) -> bool | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(4 << 20)
    except OSError:
        return None
    if PLUGIN.encode() not in raw:
        return None
    try:
        plugins = jsonio.loads(raw.decode("utf-8-sig", "replace")).get("enabledPlugins")
    except (ValueError, AttributeError):
        return None
    if not isinstance(plugins, dict):
        return None
    for key, value in plugins.items():
        if isinstance(value, bool) and (key == PLUGIN or key.split("@", 1)[0] == PLUGIN):
            return value
    return None
