"""Where each agent keeps the hooks `claude-mem install` writes, and which of ours are there.

One table for both sides: the installer writes these files, and a session-start hook reads
them to tell whether the hooks it runs from are complete (an upgrade may add events). The
answer comes from the agent's own config, never from the data dir, which may be one the
installer never saw. Stdlib only and cheap (hooks import it).
"""

from __future__ import annotations

import os

from claude_mem.hooks import jsonio

TYPE_CHECKING = False  # `typing` costs milliseconds in a hook; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Mapping

# Present in every hook command we write, and in nobody else's.
MARKER = "claude_mem/hooks/entry.py"
# The path of every Claude Code http hook URL we write (worker/routes/hooks.py serves it).
HTTP_MARKER = "/api/hooks/claude-code/"
# platform -> (user folder under HOME, env var that replaces it, project folder, file name)
HOOK_FILES = {
    "claude-code": (".claude", "CLAUDE_CONFIG_DIR", ".claude", "settings.json"),
    "codex": (".codex", "CODEX_HOME", ".codex", "hooks.json"),
    "gemini-cli": (".gemini", "", ".gemini", "settings.json"),
    "cursor": (".cursor", "", ".cursor", "hooks.json"),
    "windsurf": (os.path.join(".codeium", "windsurf"), "", ".windsurf", "hooks.json"),
}
MAX_CONFIG_BYTES = 4 << 20

# Host events the installer should register per platform, in the order they fire. Claude
# Code's PreToolUse is wanted for Read only (the file-read gate); the others take every tool.
REGISTER: dict[str, tuple[str, ...]] = {
    "claude-code": (
        "Setup", "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
        "PostToolUseFailure", "Stop", "SessionEnd",
    ),
    "codex": (
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd",
    ),
    "gemini-cli": ("SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"),
    "cursor": (
        "beforeSubmitPrompt", "afterShellExecution", "afterMCPExecution", "afterFileEdit", "stop",
    ),
    "windsurf": (
        "pre_user_prompt", "post_run_command", "post_mcp_tool_use", "post_write_code",
        "post_cascade_response",
    ),
}  # fmt: skip


def expand(value: str, home: str) -> str:
    """`~` and `~/x` against `home` (not the process's HOME: the installer may be given one)."""
    if value == "~" or value.startswith("~/"):
        return os.path.join(home, value[2:])
    return value


def user_dir(platform: str, home: str, env: Mapping[str, str]) -> str:
    """The agent's own folder: `~/.claude`, or `$CLAUDE_CONFIG_DIR` / `$CODEX_HOME` when set."""
    folder, variable, _, _ = HOOK_FILES[platform]
    custom = env.get(variable, "").strip() if variable else ""
    return expand(custom, home) if custom else os.path.join(home, folder)


def hook_file(platform: str, home: str, env: Mapping[str, str], project: str | None = None) -> str:
    """The file our hooks go in: the user's, or `<project>/<folder>/<file>` with --project."""
    _, _, folder, name = HOOK_FILES[platform]
    base = os.path.join(project, folder) if project is not None else user_dir(platform, home, env)
    return os.path.join(base, name)


def _candidates(platform: str, cwd: str | None, env: Mapping[str, str]) -> list[str]:
    """The user's file, the project files of `cwd` and its parents, and a plugin's hooks."""
    home = env.get("HOME", "")
    out = [hook_file(platform, home, env)] if os.path.isabs(home) else []
    folder = os.path.abspath(cwd) if cwd else None
    while folder:
        out.append(hook_file(platform, home, env, folder))
        parent = os.path.dirname(folder)
        folder = parent if parent != folder else None
    plugin = env.get("CLAUDE_PLUGIN_ROOT", "") if platform == "claude-code" else ""
    if plugin:
        out.append(os.path.join(plugin, "hooks", "hooks.json"))
    return list(dict.fromkeys(out))


def events_in(path: str) -> set[str]:
    """Events of `path`'s `"hooks"` table that run one of our commands or post to our http
    hook route (none if unreadable)."""
    try:
        with open(path, "rb") as handle:
            doc = jsonio.loads(handle.read(MAX_CONFIG_BYTES).decode("utf-8-sig", "replace"))
    except (OSError, ValueError, RecursionError):
        return set()
    table = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(table, dict):
        return set()
    return {str(event) for event, entries in table.items() if _holds_ours(entries)}


def _holds_ours(entries: object) -> bool:
    text = jsonio.dumps(entries).replace("\\\\", "/")
    return MARKER in text or HTTP_MARKER in text


def installed(platform: str, cwd: str | None) -> tuple[list[str], set[str]]:
    """(files holding our hooks for `platform`, the events they register together)."""
    if platform not in HOOK_FILES:
        return [], set()
    files, events = [], set()
    for path in _candidates(platform, cwd, os.environ):
        found = events_in(path)
        if found:
            files.append(path)
            events |= found
    return files, events
