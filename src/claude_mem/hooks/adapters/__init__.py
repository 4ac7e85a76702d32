"""Platform adapters: each turns one host's hook payload into a HookEvent and formats the answer.

An adapter is a module with:

- `NAME`: the canonical platform name (sent to the worker as `platform`);
- `EVENTS`: event_key(name) → (host event name, kind), aliases included;
- `LOUD`: kinds where exit code 2 only *reports* (never blocks the user's work), so a broken
  capture may be announced there;
- `normalize(payload, host_event, kind) -> HookEvent` and `output(event, result) -> dict`;
- optionally `disabled(payload) -> bool` (the user switched us off in the host's settings).

Only the adapter named on the command line is imported.
"""

from __future__ import annotations

TYPE_CHECKING = False  # importing `typing` shows in a hook's time (bench/hook_bench.py)
if TYPE_CHECKING:
    from types import ModuleType

# platform argument → module; aliases point at the same module
MODULES = {
    "claude-code": "claude_code",
    "claude": "claude_code",
    "codex": "codex",
    "codex-cli": "codex",
    "cursor": "cursor",
    "gemini-cli": "gemini_cli",
    "gemini": "gemini_cli",
    "antigravity": "gemini_cli",
    "antigravity-cli": "gemini_cli",
    "windsurf": "windsurf",
    "raw": "raw",
}
PLATFORMS = ("claude-code", "codex", "cursor", "gemini-cli", "windsurf", "raw")


def load(platform: str) -> ModuleType | None:
    """The adapter module for a platform argument (case-insensitive), or None if unknown."""
    name = MODULES.get(platform.strip().lower())
    if name is None:
        return None
    return __import__(f"claude_mem.hooks.adapters.{name}", fromlist=["NAME"])
