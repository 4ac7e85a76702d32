"""Our entries in and out of an IDE's `"hooks"` table, leaving everything else as it was.

Ours are the handlers whose command runs our hook entry point, and Claude Code http hooks
that post to our hook route (`install.http_hooks`). Two shapes exist. *Grouped* (Claude Code,
Codex, Gemini CLI):
`{"hooks": {"Event": [{"matcher": "...", "hooks": [{"type": "command", "command": ...}]}]}}`.
*Flat* (Cursor, Windsurf): `{"hooks": {"event": [{"command": ...}]}}`.

Installing first removes our handlers from every event (so an event an older version registered
does not linger), then puts the new ones back where the old ones were, or at the end: a
re-install changes nothing, and other hooks keep their order. A group shared with someone
else's handler keeps theirs.
"""

from __future__ import annotations

from typing import Any

from claude_mem.install import http_hooks
from claude_mem.install.base import Doc, Hook, HookCommand, ShapeError, is_ours


def grouped(
    platform: str, hooks: tuple[Hook, ...], command: HookCommand
) -> list[tuple[str, dict[str, Any]]]:
    """(event, matcher group holding one command handler) per hook, in order."""
    out: list[tuple[str, dict[str, Any]]] = []
    for hook in hooks:
        handler: dict[str, Any] = {"type": "command", "command": command.line(platform, hook.event)}
        if hook.timeout is not None:
            handler["timeout"] = hook.timeout
        group: dict[str, Any] = {} if hook.matcher is None else {"matcher": hook.matcher}
        out.append((hook.event, {**group, "hooks": [handler]}))
    return out


def _ours(handler: object) -> bool:
    """One of our command handlers, or one of our http hooks (Claude Code)."""
    if http_hooks.is_ours(handler):
        return True
    return isinstance(handler, dict) and is_ours(handler.get("command"))


def _table(doc: Doc, key: str = "hooks") -> dict[str, Any] | None:
    table = doc.get(key)
    if table is not None and not isinstance(table, dict):
        raise ShapeError(f'"{key}" is not a JSON object')
    return table


def _strip(table: dict[str, Any], *, flat: bool) -> dict[str, int]:
    """Remove our handlers from every event: {event: index where the first of ours was}."""
    where: dict[str, int] = {}
    for event, items in table.items():
        if not isinstance(items, list):
            continue  # not an event list (Gemini's old `"enabled": true`): not ours to judge
        kept: list[Any] = []
        for item in items:
            if flat:
                if _ours(item):
                    where.setdefault(event, len(kept))
                else:
                    kept.append(item)
                continue
            handlers = item.get("hooks") if isinstance(item, dict) else None
            if not isinstance(handlers, list) or not any(_ours(h) for h in handlers):
                kept.append(item)
                continue
            where.setdefault(event, len(kept))
            rest = [h for h in handlers if not _ours(h)]
            if rest:
                kept.append({**item, "hooks": rest})
        items[:] = kept
    return where


def _drop_emptied(table: dict[str, Any], where: dict[str, int]) -> None:
    for event in where:
        if table.get(event) == []:
            del table[event]


def add(doc: Doc, entries: list[tuple[str, dict[str, Any]]], *, flat: bool) -> None:
    """Put `entries` ((event, group or handler), in order) in place of ours."""
    table = _table(doc)
    if table is None:
        table = doc["hooks"] = {}
    for event, _ in entries:
        if not isinstance(table.get(event, []), list):
            raise ShapeError(f'"hooks.{event}" is not a list')
    where = _strip(table, flat=flat)
    for event, entry in entries:
        items = table.setdefault(event, [])
        at = where.get(event, len(items))
        items.insert(at, entry)
        where[event] = at + 1
    _drop_emptied(table, where)


def remove(doc: Doc, *, flat: bool) -> None:
    """Remove every handler of ours; an event (and `"hooks"`) we leave empty goes too."""
    table = doc.get("hooks")
    if not isinstance(table, dict):
        return
    where = _strip(table, flat=flat)
    _drop_emptied(table, where)
    if where and not table:
        del doc["hooks"]


def add_server(doc: Doc, name: str, entry: dict[str, Any], key: str = "mcpServers") -> None:
    """Register (or replace in place) MCP server `name`."""
    servers = _table(doc, key)
    if servers is None:
        servers = doc[key] = {}
    servers[name] = entry


def remove_server(doc: Doc, name: str, key: str = "mcpServers") -> None:
    servers = doc.get(key)
    if isinstance(servers, dict) and name in servers:
        del servers[name]
        if not servers:
            del doc[key]
