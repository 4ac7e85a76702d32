"""Settings and logs, readable and changeable through the worker (the viewer uses these)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from claude_mem import log, settings
from claude_mem.worker.api import ApiError, Call, Endpoint

SettingValue = str | int | bool


class SettingsView(msgspec.Struct):
    values: dict[str, SettingValue]
    sources: dict[str, str]
    problems: list[str]
    unknown: list[str]


class SettingsChange(msgspec.Struct):
    values: dict[str, SettingValue]


class LogsQuery(msgspec.Struct):
    lines: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 200


class LogsView(msgspec.Struct):
    path: str
    lines: list[str]


def _view(call: Call) -> SettingsView:
    loaded = call.state.settings  # loaded again if the file changed
    return SettingsView(
        dict(loaded.public()), dict(loaded.sources), list(loaded.problems), sorted(loaded.unknown)
    )


def read_settings(call: Call) -> SettingsView:
    return _view(call)


def write_settings(call: Call) -> SettingsView:
    body: SettingsChange = call.body
    try:
        changed = settings.save(body.values)  # keys in any case: these are the settings' own
    except settings.SettingsError as exc:
        raise ApiError(400, str(exc), "invalid_setting") from None
    view = _view(call)
    call.state.stream.publish("settings_changed", keys=sorted(changed))
    return view


def read_logs(call: Call) -> LogsView:
    query: LogsQuery = call.query
    path = log.log_path()
    return LogsView(str(path), log.tail(query.lines, path))


ENDPOINTS = [
    Endpoint("GET", "/api/settings", read_settings, "Settings (secrets masked), with problems",
             "config", response=SettingsView, needs_db=False, errors=()),
    Endpoint("POST", "/api/settings", write_settings,
             "Change settings; all-or-nothing, 400 names the bad key and allowed values",
             "config", body=SettingsChange, response=SettingsView, needs_db=False),
    Endpoint("GET", "/api/logs", read_logs, "The end of today's log", "config",
             query=LogsQuery, response=LogsView, needs_db=False),
]  # fmt: skip
