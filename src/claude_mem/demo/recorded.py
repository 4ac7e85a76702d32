"""The recorded sessions: loading them, moving them into a scratch project, its files.

Each `sessions/NN-<slug>.jsonl` holds one `{"host", "event", "payload", "transcript_size"}`
object a line: the payloads Claude Code sent its hooks, with the project at
`/home/dev/invoicer` and HOME at `/home/dev` (see tests/fixtures/demo/record.py), and how much
of its transcript, `NN-<slug>.transcript.jsonl` beside it, Claude Code had written when it ran
the hook. For a replay every path is moved: the project to a folder the demo creates,
transcripts under the demo's own folder, where `Transcript` grows each one event by event.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from claude_mem.hooks.command import MATCHERS
from claude_mem.hooks.installed import REGISTER

PLATFORM = "claude-code"
PROJECT_PLACEHOLDER = "/home/dev/invoicer"
HOME_PLACEHOLDER = "/home/dev"
PROJECT_NAME = "invoicer"
TRANSCRIPT_SUFFIX = ".transcript.jsonl"


@dataclass(frozen=True)
class Event:
    name: str  # the host's event name, e.g. "PostToolUse"
    payload: dict[str, Any]
    transcript_size: int = 0  # bytes of the session's transcript written before this hook ran


@dataclass(frozen=True)
class Session:
    slug: str
    events: tuple[Event, ...]
    transcript: bytes = b""  # the whole transcript Claude Code wrote, paths as placeholders

    @property
    def prompt(self) -> str:
        for event in self.events:
            if event.name == "UserPromptSubmit":
                return str(event.payload.get("prompt") or "")
        return ""

    @property
    def tool_calls(self) -> int:
        return sum(1 for e in self.events if e.name in ("PostToolUse", "PostToolUseFailure"))


def load_sessions(folder: Path | None = None) -> list[Session]:
    """The recorded sessions in order (default: the copy shipped in this package)."""
    packaged = resources.files(__package__).joinpath("sessions")
    where: Traversable = packaged if folder is None else folder
    items = {item.name: item for item in where.iterdir() if item.name.endswith(".jsonl")}
    sessions = []
    for name in sorted(n for n in items if not n.endswith(TRANSCRIPT_SUFFIX)):
        events = []
        for line in items[name].read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                size = int(row.get("transcript_size") or 0)
                events.append(Event(str(row["event"]), dict(row["payload"]), size))
        beside = items.get(name.removesuffix(".jsonl") + TRANSCRIPT_SUFFIX)
        transcript = beside.read_bytes() if beside is not None else b""
        slug = name.removesuffix(".jsonl").split("-", 1)[-1]
        sessions.append(Session(slug, tuple(events), transcript))
    if not sessions:
        raise FileNotFoundError("no recorded sessions found (claude_mem/demo/sessions/*.jsonl)")
    return sessions


def registered(event: Event) -> bool:
    """Would Claude Code run our installed hook for this event? (events and tool matchers)"""
    if event.name not in REGISTER[PLATFORM]:
        return False
    matcher = MATCHERS.get((PLATFORM, event.name))
    if not matcher or matcher == "*":
        return True
    tool = str(event.payload.get("tool_name") or "")
    try:
        return re.fullmatch(matcher, tool) is not None
    except re.error:
        return tool in matcher.split("|")


def relocate(value: Any, project: Path, home: Path) -> Any:
    """`value` with the recorded project and HOME paths moved to `project` and `home`."""
    if isinstance(value, str):
        if PROJECT_PLACEHOLDER in value:
            value = value.replace(PROJECT_PLACEHOLDER, str(project))
        if HOME_PLACEHOLDER + "/" in value:
            value = value.replace(HOME_PLACEHOLDER + "/", f"{home}/")
        return value
    if isinstance(value, list):
        return [relocate(item, project, home) for item in value]
    if isinstance(value, dict):
        return {key: relocate(item, project, home) for key, item in value.items()}
    return value


class Transcript:
    """A session's transcript in the replay, written up to each event's recorded size before
    its hook runs, so the worker reads what Claude Code had written by then, paths moved."""

    def __init__(self, session: Session, project: Path, home: Path) -> None:
        self.recorded, self.project, self.home = session.transcript, project, home
        self.written = 0  # bytes of the recording already written

    def grow(self, event: Event) -> None:
        """Write the recording on to `event.transcript_size` (whole lines, never shrinking)."""
        size = min(event.transcript_size, len(self.recorded))
        if size <= self.written:
            return
        lines = self.recorded[self.written : size].decode("utf-8").splitlines()
        moved = [relocate(json.loads(line), self.project, self.home) for line in lines if line]
        path = Path(str(relocate(event.payload["transcript_path"], self.project, self.home)))
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a" if self.written else "w", encoding="utf-8") as out:
            out.writelines(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
                           for row in moved)  # fmt: skip
        self.written = size


def project_files(sessions: list[Session]) -> dict[str, str]:
    """The project's files as the sessions leave them, rebuilt from what the tools saw.

    Keys are paths relative to the project. A Read gives a file's text (when it read all of
    it), a Write replaces it, an Edit applies its replacement to the text known so far.
    """
    files: dict[str, str] = {}
    prefix = PROJECT_PLACEHOLDER + "/"
    for session in sessions:
        for event in session.events:
            if event.name != "PostToolUse":
                continue
            tool = event.payload.get("tool_name")
            given = event.payload.get("tool_input")
            answer = event.payload.get("tool_response")
            tool_input = given if isinstance(given, dict) else {}
            response = answer if isinstance(answer, dict) else {}
            path = str(tool_input.get("file_path") or "")
            if not path.startswith(prefix):
                continue
            name = path[len(prefix) :]
            if tool == "Read":
                file = response.get("file")
                if isinstance(file, dict) and _whole(file) and name not in files:
                    files[name] = str(file.get("content") or "")
            elif tool == "Write":
                files[name] = str(tool_input.get("content") or "")
            elif tool == "Edit":
                text = files.get(name)
                if text is None and isinstance(response.get("originalFile"), str):
                    text = response["originalFile"]
                if text is None:
                    continue
                old = str(tool_input.get("old_string") or "")
                new = str(tool_input.get("new_string") or "")
                count = -1 if tool_input.get("replace_all") else 1
                files[name] = text.replace(old, new, count) if old else text
    return files


def _whole(file: dict[str, Any]) -> bool:
    start, lines, total = file.get("startLine"), file.get("numLines"), file.get("totalLines")
    return start in (None, 1) and (total is None or lines is None or lines >= total)


def write_project(folder: Path, files: dict[str, str]) -> None:
    """Create the project folder with its files (paths stay inside `folder`)."""
    folder.mkdir(parents=True, exist_ok=True)
    root = folder.resolve()
    for name, text in files.items():
        target = (folder / name).resolve()
        if root not in target.parents:
            continue  # a recording never names a file outside its project
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
