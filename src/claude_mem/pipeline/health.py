"""Is compression working? A small persisted ledger per provider, read by the session-start
context (one warning line), /api/stats and `doctor`, so a failing observer is never silent."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from pathlib import Path
from typing import Any

from claude_mem import paths
from claude_mem.pipeline.providers.base import ProviderError

# How long a provider that needs the user's action is left alone before it is tried again
# (a settings change ends the pause at once).
PAUSE_S = {"quota": 3600.0, "auth": 1800.0, "setup_required": 1800.0}
WARN_AFTER_FAILURES = 3


def health_path() -> Path:
    return paths.state_dir() / "observer-health.json"


class HealthLedger:
    """Per-provider consecutive failures, last error and pause; written atomically."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or health_path()
        self._lock = threading.Lock()
        self._data: dict[str, dict[str, Any]] = self._load()

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self) -> None:
        # A full disk must not stop compression: the ledger is advisory.
        with contextlib.suppress(OSError):
            paths.write_private_file(self.path, json.dumps(self._data, indent=1, sort_keys=True))

    def ok(self, provider: str) -> None:
        with self._lock:
            entry = self._data.setdefault(provider, {})
            recovering = entry.get("consecutive_failures") or entry.get("paused_until")
            entry.update(consecutive_failures=0, paused_until=None, last_success_at=time.time())
            if recovering:  # only a change of state is worth a write
                self._save()

    def failed(self, provider: str, error: Exception) -> None:
        kind = error.kind if isinstance(error, ProviderError) else "unrecoverable"
        message = error.message if isinstance(error, ProviderError) else repr(error)
        now = time.time()
        with self._lock:
            entry = self._data.setdefault(provider, {})
            entry["consecutive_failures"] = int(entry.get("consecutive_failures") or 0) + 1
            entry.update(last_error=message[:300], last_error_kind=kind, last_failure_at=now)
            if kind in PAUSE_S:
                entry.update(paused_until=now + PAUSE_S[kind], paused_reason=kind,
                             paused_settings_mtime=_settings_mtime())  # fmt: skip
            self._save()

    def paused(self, provider: str) -> str | None:
        """Why `provider` should not be called right now, or None."""
        with self._lock:
            entry = self._data.get(provider) or {}
            until = entry.get("paused_until")
            if not until:
                return None
            if time.time() >= until or entry.get("paused_settings_mtime") != _settings_mtime():
                entry["paused_until"] = None  # time is up, or the user changed settings
                return None
            return f"{entry.get('paused_reason')}: {entry.get('last_error', '')}"

    def warning(self, providers: list[str]) -> str | None:
        """One line for the top of the injected context when a configured provider fails."""
        with self._lock:
            for name in providers:
                entry = self._data.get(name) or {}
                failures = int(entry.get("consecutive_failures") or 0)
                if failures >= WARN_AFTER_FAILURES or entry.get("paused_until"):
                    return (
                        f"⚠ claude-mem: compression with '{name}' is failing "
                        f"({entry.get('last_error_kind')}: {entry.get('last_error', '')[:120]}; "
                        f"{failures} in a row); the offline compressor is used meanwhile. "
                        "Run `claude-mem doctor`."
                    )
        return None

    def snapshot(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            copy: dict[str, dict[str, Any]] = json.loads(json.dumps(self._data))
            return copy


def _settings_mtime() -> float | None:
    try:
        return paths.settings_path().stat().st_mtime
    except OSError:
        return None
