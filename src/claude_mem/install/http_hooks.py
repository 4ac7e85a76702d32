"""Claude Code's http hooks: the handler entries, the token's place in the settings file, and
whether what is installed still reaches this data dir's worker.

A hook of `"type": "http"` costs Claude Code one loopback POST instead of a Python process.
The URL names the port this data dir's worker listens on; the header carries the hook token
(worker/token.py: it opens the hook routes only). In a settings file the header reads
`$CLAUDE_MEM_HOOK_TOKEN`, which Claude Code fills from the file's own `env` (listed in
`allowedEnvVars`); a plugin's hooks.json has no `env`, so it holds the token itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from claude_mem.hooks.installed import HTTP_MARKER
from claude_mem.install.base import ConfigError, Doc, ShapeError
from claude_mem.worker.token import HOOK_ENV, HOOK_HEADER

# Once per tool call, or the end of a turn or session: no need to start a worker from here.
# SessionStart, UserPromptSubmit and Setup stay command hooks: they start (or restart) it.
EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"})


@dataclass(frozen=True)
class HttpHooks:
    """Where the http hooks post and the token they carry; `in_env`: the token goes in the
    settings file's `env` (a settings file) or in the header itself (a plugin's hooks.json)."""

    host: str
    port: int
    token: str
    in_env: bool = True

    def url(self, event: str) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{HTTP_MARKER}{event}"

    def handler(self, event: str, timeout: int | None) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "http", "url": self.url(event)}
        if timeout is not None:
            out["timeout"] = timeout
        if self.in_env:
            out["headers"] = {HOOK_HEADER: f"${HOOK_ENV}"}
            out["allowedEnvVars"] = [HOOK_ENV]
        else:
            out["headers"] = {HOOK_HEADER: self.token}
        return out


def current(*, create_token: bool) -> HttpHooks:
    """This data dir's: its running worker's port (else the configured one) and hook token."""
    from claude_mem.settings import load  # noqa: PLC0415
    from claude_mem.worker import lifecycle  # noqa: PLC0415
    from claude_mem.worker.token import ensure_hook_token, read_hook_token  # noqa: PLC0415

    found = lifecycle.lookup(load())
    port = found.ours.port if found.ours is not None else found.port
    token = ensure_hook_token() if create_token else read_hook_token() or "<a new hook token>"
    return HttpHooks(found.host, port, token)


def is_ours(handler: object) -> bool:
    return (
        isinstance(handler, dict)
        and handler.get("type") == "http"
        and isinstance(handler.get("url"), str)
        and HTTP_MARKER in handler["url"]
    )


def set_env(doc: Doc, hooks: HttpHooks | None) -> None:
    """Our variable in the file's `env`: the token with http hooks, gone without them."""
    env = doc.get("env")
    if env is not None and not isinstance(env, dict):
        raise ShapeError('"env" is not a JSON object')
    if hooks is not None and hooks.in_env:
        doc.setdefault("env", {})[HOOK_ENV] = hooks.token
    elif env is not None and HOOK_ENV in env:
        del env[HOOK_ENV]
        if not env:
            del doc["env"]


def installed(doc: Doc) -> list[tuple[str, str | None]]:
    """(url, token it sends) of each of our http handlers in a settings or hooks.json doc."""
    env = doc.get("env")
    env = env if isinstance(env, dict) else {}
    table = doc.get("hooks")
    found: list[tuple[str, str | None]] = []
    for groups in table.values() if isinstance(table, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else ():
                if not is_ours(handler):
                    continue
                headers = handler.get("headers")
                sent = headers.get(HOOK_HEADER) if isinstance(headers, dict) else None
                if isinstance(sent, str) and sent == f"${HOOK_ENV}":
                    sent = env.get(HOOK_ENV)
                found.append((handler["url"], sent if isinstance(sent, str) else None))
    return found


def mismatch(path: Path, doc: Doc, hooks: HttpHooks) -> str | None:
    """What is wrong with the http hooks `doc` (the file at `path`) holds, or None."""
    problems = []
    ports = {urlsplit(url).port for url, _ in installed(doc)}
    if ports - {hooks.port}:
        listed = ", ".join(str(p) for p in sorted(p or 0 for p in ports))
        problems.append(f"post to port {listed}, but this data dir's worker uses {hooks.port}")
    if any(token != hooks.token for _, token in installed(doc)):
        problems.append("carry a hook token this data dir's worker does not accept")
    if not problems:
        return None
    return f"{path}: the http hooks {' and '.join(problems)}; `claude-mem install` rewrites them"


def doctor_checks(home: str, cwd: str, env: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(check, status, detail) for each Claude Code settings file (the user's, the current
    project's) holding our http hooks: do they still reach this data dir's worker?"""
    from claude_mem.hooks.installed import hook_file  # noqa: PLC0415
    from claude_mem.install.files import parse, read_text  # noqa: PLC0415

    files = [hook_file("claude-code", home, env), hook_file("claude-code", home, env, cwd)]
    hooks: HttpHooks | None = None
    out = []
    for name in dict.fromkeys(files):
        path = Path(name)
        try:
            doc = parse(read_text(path), path)
        except ConfigError:
            continue  # not ours to diagnose here: install names it
        if not installed(doc):
            continue
        hooks = hooks or current(create_token=False)
        problem = mismatch(path, doc, hooks)
        detail = problem or f"{path}: post to port {hooks.port} with this data dir's hook token"
        out.append(("http hooks", "fail" if problem else "ok", detail))
    return out
