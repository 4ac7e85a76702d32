"""The recorded hook payloads the tests replay, all inside the repository (tests/fixtures/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# Real captures of Claude Code, Codex and Gemini CLI (see its README.md).
AGENT_HOOKS = FIXTURES / "agent-hooks"
# Hand-written payloads for hosts without a capture (Cursor, Windsurf, raw).
HOOKS = FIXTURES / "hooks"


def captures() -> list[Path]:
    """Every real capture, sorted by name; fails loudly if the folder lost them."""
    paths = sorted(AGENT_HOOKS.glob("*.jsonl"))
    if not paths:
        pytest.fail(f"no hook captures in {AGENT_HOOKS}")
    return paths


def read_capture(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(event, payload) of each line of a capture file; a missing file fails loudly."""
    if not path.is_file():
        pytest.fail(f"hook capture {path} is missing")
    items = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [(item["event"], item["payload"]) for item in items]
