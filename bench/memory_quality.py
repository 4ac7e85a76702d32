"""Memory quality: does memory hold what was learned, and does it come back when asked?

    .venv/bin/python bench/memory_quality.py [--json] [--check] [--sessions ID,ID] [--noise N]

The hand-written sessions of bench/memory_quality_corpus/*.toml (an invoicing service, a job
scheduler, a deploy CLI: bug hunts with their root cause, decisions amended or reverted in a
later session, chat-only rules, refactors, features, dead ends, investigations) and
generated unrelated sessions as noise are replayed the way Claude Code runs the installed
hooks: one hook process per event, with a real transcript file that grows as the session
goes, into a real worker (`CLAUDE_MEM_PROVIDER=local`) on a loopback port. Every target
session has a question a later session would ask in other words; its answer is the unit
(observation or summary) made from one turn of that session.

Measured, beside the floors of issue #15: recall@5 of the answering unit through
`/api/search`, with vectors and with full text alone (a second worker with
`CLAUDE_MEM_EMBEDDING_MODEL=none`); the share of questions whose answer the prompt-time
injection carries (the UserPromptSubmit hook of a new session, default settings, asked the
question: the unit's id or the answer's words in its additionalContext); stored observations
per tool call; and, for every amended decision, whether the current rule ranks above each
stale one. Floors: recall@5 >= 0.9 (both modes), injection >= 0.8, observations per tool call
<= 0.35, every amended decision current-first. Exit 0 unless `--check` and a floor is missed.

Issue #30 adds a held-out set, bench/memory_quality_heldout/*.toml, written before any tuning by
someone who saw only the session texts, and never tuned on; its files are checked against
bench/memory_quality_heldout.sha256 (`sha256sum` lines) and a mismatch fails `--check`. Each set
(the dev corpus, then the held-out one when present) is replayed into its own fresh worker and
data dir with the same noise, and reported side by side. Per set, beside the figures above:
recall@5 by session (any observation, decision or summary made from the question's session),
hybrid and full text alone, next to plain BM25 over whole sessions (`memory_quality_measures`);
queries whose top 5 holds the same text twice; push (the answer's own words in the injected
context); decision precision and recall against the rules labelled in `[[session.rule]]`; the
current rule above the stale one by session, and, when `/api/search` takes `as_of`, the stale
one first as of a moment between the two sessions. `--check` holds the held-out set to the
floors of issue #30 (and the dev set to hybrid >= full text alone).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repo root

from bench.memory_quality_measures import (
    DecisionRecord,
    LabelledRule,
    Rule,
    bm25_ranking,
    check_hashes,
    decision_precision,
    decision_recall,
    normalised,
    repeated_pairs,
    share,
    stating,
)

from claude_mem.demo import recorded
from claude_mem.demo import run as demo
from claude_mem.hooks.command import hook_argv

CORPUS = Path(__file__).resolve().parent / "memory_quality_corpus"
HELDOUT = CORPUS.with_name("memory_quality_heldout")  # never tuned on (issue #30)
TOP = 5
DEEP = 50  # how far down the ranking an amended decision's current and stale units are looked for
NOISE = 120
SEED = 15
DRAIN_WAIT_S = 900.0
HOOK_TIMEOUT_S = 30.0
MODEL = "claude-sonnet-4-5"
FLOORS = {
    "recall_hybrid": 0.9,
    "recall_fulltext": 0.9,
    "injection": 0.8,
    "obs_per_tool_call": 0.35,
    "amended_current_first": 1.0,
}
# Issue #30's floors, held on the held-out set (`repeated_text` and `bm25_gap` at most).
FLOORS_30 = {
    "recall_session_hybrid": 0.95,
    "recall_session_fulltext": 0.9,
    "bm25_gap": 0.03,
    "hybrid_minus_fulltext": 0.0,
    "repeated_text": 0,
    "push": 0.8,
    "amended_current_first_session": 1.0,
    "as_of_old_first": 1.0,
    "decision_precision": 0.9,
    "decision_recall": 0.9,
}
AT_MOST = {"obs_per_tool_call", "bm25_gap", "repeated_text"}
# The transcripts' clock: the first session on a Monday morning, the next ones hours to days
# apart, so a corpus spans weeks (the worker stamps its records itself, by its own clock).
CLOCK_START = 1767603600.0  # 2026-01-05 09:00 UTC
SESSION_GAP_H = (2.0, 30.0)
LINE_GAP_S = 25.0
SESSION_NS = uuid.UUID("5f1f6a0e-15be-4c3e-9a51-000000000015")


# --- the corpus -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """Agent text (`say`) or one tool call with its input and what the tool answered."""

    say: str = ""
    tool: str = ""
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    prompt: str
    reply: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Session:
    id: str
    project: str
    kind: str
    turns: tuple[Turn, ...]
    question: str = ""
    target_turn: int = 0
    answer: tuple[str, ...] = ()
    amends: str = ""
    rules: tuple[Rule, ...] = ()

    @property
    def host_id(self) -> str:
        return str(uuid.uuid5(SESSION_NS, self.id))

    @property
    def tool_calls(self) -> int:
        return sum(1 for turn in self.turns for step in turn.steps if step.tool)


def _step(raw: dict[str, Any]) -> Step:
    if "say" in raw:
        return Step(say=str(raw["say"]))
    fields = {key: value for key, value in raw.items() if key != "tool"}
    return Step(tool=str(raw["tool"]), fields=fields)


def _rule(raw: dict[str, Any]) -> Rule:
    """A `[[session.rule]]`: its `words` are what is measured (a rule without any is refused);
    its text and turn document it."""
    words = raw["words"]
    if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
        raise ValueError(f"a rule's words must be a list of strings, not {words!r}")
    return Rule(str(raw.get("text", "")), tuple(words), int(raw.get("turn", 0)))


def load_corpus(folder: Path = CORPUS) -> list[Session]:
    """The hand-written sessions, in replay order (file by file, as written). A file that is
    not a corpus file stops the run with its name and what is wrong."""
    sessions: list[Session] = []
    for path in sorted(folder.glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text("utf-8"))
            for raw in data["session"]:
                turns = tuple(
                    Turn(t["prompt"], t["reply"], tuple(_step(s) for s in t.get("step", [])))
                    for t in raw["turn"]
                )
                session = Session(
                    id=raw["id"],
                    project=data["project"],
                    kind=raw.get("kind", ""),
                    turns=turns,
                    question=raw.get("question", ""),
                    target_turn=raw.get("target_turn", 0),
                    answer=tuple(raw.get("answer", ())),
                    amends=raw.get("amends", ""),
                    rules=tuple(_rule(r) for r in raw.get("rule", [])),
                )
                if session.amends and session.amends not in {s.id for s in sessions}:
                    raise ValueError(f"{session.id} amends {session.amends!r}, not an earlier id")
                sessions.append(session)
        except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
            detail = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise SystemExit(f"{path}: not a memory-quality corpus file ({detail})") from None
    return sessions


def stale_of(session: Session, by_id: dict[str, Session]) -> list[Session]:
    """The sessions whose rule `session` replaced, directly or through earlier amendments."""
    found, current = [], session
    while current.amends:
        current = by_id[current.amends]
        found.append(current)
    return found


# Noise: unrelated chores in the same code bases and in others, from templates.
NOISE_PROJECTS = ("invoicer", "cronwell", "shipkit", "recipebox", "tilemap", "weatherd")
NOISE_MODULES = (
    "parser",
    "render",
    "settings",
    "client",
    "models",
    "views",
    "utils",
    "cache",
    "router",
    "storage",
    "themes",
    "metrics",
    "auth",
    "upload",
    "search",
    "i18n",
)
NOISE_CHORES = (
    ("Add type hints to {m}.py", "Added type hints to the public functions of {m}.py."),
    ("Fix the typo in the {m} docstring", "Fixed the docstring typo in {m}.py ('recieve')."),
    ("Rename `tmp` to something meaningful in {m}.py", "Renamed `tmp` to `pending_{m}` in {m}.py."),
    ("Bump the {m} dependency pin", "Bumped the pin in requirements.txt; the suite still passes."),
    ("Make the {m} tests less chatty", "Silenced the debug prints in test_{m}.py with capsys."),
    ("Sort the imports in {m}.py", "Sorted the imports of {m}.py with ruff's isort rules."),
    ("Add a README section about {m}", "Added a '{m}' section to README.md with a usage example."),
    ("Extract the magic number in {m}.py into a constant", "Moved 86400 into `SECONDS_PER_DAY`."),
    ("Add a __repr__ to the {m} class", "Added `__repr__` showing a {m} object's id and name."),
    ("Replace os.path with pathlib in {m}.py", "{m}.py now uses pathlib.Path throughout."),
    ("Drop the unused helper in {m}.py", "Removed `_legacy_{m}()`: nothing called it since 2023."),
    ("Add a --verbose flag to the {m} command", "Added --verbose: log level DEBUG."),
)


def noise_sessions(count: int, seed: int = SEED) -> list[Session]:
    """`count` deterministic chore sessions: a Read, an Edit, a test run, sometimes a commit."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        module = rng.choice(NOISE_MODULES)
        prompt, reply = (text.format(m=module) for text in rng.choice(NOISE_CHORES))
        path = f"src/{module}.py"
        name = f"{module}_{rng.randrange(100, 999)}"
        code = (
            f'"""The {module} helpers."""\n\n\ndef {name}(value):\n'
            f'    """Return the {module} value normalised."""\n    tmp = value\n    return tmp\n'
        )
        passed = rng.randrange(3, 60)
        steps = [
            Step(tool="Read", fields={"path": path, "content": code}),
            Step(
                tool="Edit",
                fields={
                    "path": path,
                    "old": "    tmp = value\n    return tmp\n",
                    "new": "    return value\n",
                },
            ),
            Step(
                tool="Bash",
                fields={
                    "command": "python -m pytest -q",
                    "description": "Run tests",
                    "out": f"{'.' * passed}\n{passed} passed in 0.{passed}s",
                },
            ),
        ]
        turns = [Turn(prompt, reply, tuple(steps))]
        if rng.random() < 0.4:
            commit = Step(
                tool="Bash",
                fields={
                    "command": f"git commit -am '{prompt}'",
                    "description": "Commit",
                    "out": f"[main {rng.randrange(16**7):07x}] {prompt}",
                },
            )
            turns.append(Turn("commit it", "Committed.", (commit,)))
        project = NOISE_PROJECTS[n % len(NOISE_PROJECTS)]
        out.append(Session(id=f"noise-{n:03d}", project=project, kind="noise", turns=tuple(turns)))
    return out


def replay_order(targets: list[Session], noise: list[Session], seed: int = SEED) -> list[Session]:
    """Noise spread among the target sessions; the targets keep their own order."""
    rng = random.Random(seed)
    slots = sorted(rng.randrange(len(targets) + 1) for _ in noise)
    out, queue = [], list(noise)
    for index, session in enumerate(targets):
        while queue and slots[0] <= index:
            slots.pop(0)
            out.append(queue.pop(0))
        out.append(session)
    return out + queue


def session_clock(seed: int = SEED) -> Iterator[float]:
    """When each replayed session starts (epoch seconds, for its transcript): from
    `CLOCK_START`, every next one `SESSION_GAP_H` hours later, so ~170 sessions span weeks."""
    rng, moment = random.Random(seed), CLOCK_START
    while True:
        yield moment
        moment += rng.uniform(*SESSION_GAP_H) * 3600


# --- Claude Code's side: hook payloads and the transcript ----------------------------------


class Transcript:
    """A session's transcript JSONL, written line by line before the hook that follows it."""

    def __init__(self, path: Path, host_id: str, cwd: Path, start: float) -> None:
        self.path, self.host_id, self.cwd, self.clock = path, host_id, cwd, start
        self.parent: str | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", "utf-8")

    def add(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        line_id = str(uuid.uuid4())
        row = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(self.cwd),
            "sessionId": self.host_id,
            "version": "2.1.332",
            "type": kind,
            "message": message,
            "uuid": line_id,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(self.clock)),
            **extra,
        }
        self.parent, self.clock = line_id, self.clock + LINE_GAP_S
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")

    def user(self, text: str) -> None:
        self.add("user", {"role": "user", "content": text})

    def assistant(self, block: dict[str, Any]) -> None:
        message = {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [block],
            "stop_reason": None,
        }
        self.add("assistant", message)

    def tool_result(self, tool_use_id: str, text: str, response: dict[str, Any]) -> None:
        content = [{"tool_use_id": tool_use_id, "type": "tool_result", "content": text}]
        self.add("user", {"role": "user", "content": content}, toolUseResult=response)


def tool_call(step: Step, project: Path) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(tool_input, tool_response, the tool_result text) as Claude Code shapes them."""
    f = step.fields
    where = str(project / f["path"]) if "path" in f else str(project)
    if step.tool == "Read":
        lines = f["content"].splitlines()
        file = {
            "filePath": where,
            "content": f["content"],
            "numLines": len(lines),
            "startLine": 1,
            "totalLines": len(lines),
        }
        shown = "\n".join(f"{n:>6}→{line}" for n, line in enumerate(lines, 1))
        return {"file_path": where}, {"type": "text", "file": file}, shown
    if step.tool == "Edit":
        given = {
            "file_path": where,
            "old_string": f["old"],
            "new_string": f["new"],
            "replace_all": False,
        }
        answer = {
            "filePath": where,
            "oldString": f["old"],
            "newString": f["new"],
            "structuredPatch": [],
            "userModified": False,
            "replaceAll": False,
        }
        return given, answer, f"The file {where} has been updated."
    if step.tool == "Write":
        answer = {
            "type": "create",
            "filePath": where,
            "content": f["content"],
            "structuredPatch": [],
        }
        return (
            {"file_path": where, "content": f["content"]},
            answer,
            f"File created successfully at: {where}",
        )
    if step.tool == "Bash":
        out, err = f.get("out", ""), f.get("err", "")
        answer = {"stdout": out, "stderr": err, "interrupted": False, "isImage": False}
        given = {"command": f["command"], "description": f.get("description", "")}
        return given, answer, "\n".join(filter(None, (out, err)))
    if step.tool == "Grep":
        files = list(f["files"])
        answer = {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}
        return (
            {"pattern": f["pattern"], "path": where},
            answer,
            f"Found {len(files)} files\n" + "\n".join(files),
        )
    if step.tool == "Glob":
        files = [str(project / name) for name in f["files"]]
        answer = {"filenames": files, "durationMs": 4, "numFiles": len(files), "truncated": False}
        return {"pattern": f["pattern"]}, answer, "\n".join(files)
    raise ValueError(f"unknown tool {step.tool!r} in the corpus")


@dataclass
class Replayer:
    """Runs the installed hook command per event, as Claude Code does, and counts what it sent."""

    root: Path
    starts: Iterator[float] = field(default_factory=session_clock)
    hooks: int = 0
    post_tool_use: int = 0
    problems: list[str] = field(default_factory=list)

    def project(self, name: str) -> Path:
        folder = self.root / "projects" / name
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def transcript(self, host_id: str, project: Path) -> Transcript:
        slug = re.sub(r"[^A-Za-z0-9]", "-", str(project))
        path = self.root / "home/.claude/projects" / slug / f"{host_id}.jsonl"
        return Transcript(path, host_id, project, next(self.starts))

    def hook(self, name: str, base: dict[str, Any], **payload: Any) -> dict[str, Any] | None:
        """Run the hook for host event `name` if Claude Code would; its JSON answer, if any."""
        body = {**base, "hook_event_name": name, **payload}
        if not recorded.registered(recorded.Event(name, body)):
            return None
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(self.root / "home/.claude")}
        try:
            done = subprocess.run(
                hook_argv(recorded.PLATFORM, name),
                input=json.dumps(body).encode(),
                env=env,
                cwd=base["cwd"],
                capture_output=True,
                timeout=HOOK_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            self.problems.append(f"{name} hook took over {HOOK_TIMEOUT_S:.0f} s")
            return None
        self.hooks += 1
        self.post_tool_use += name == "PostToolUse"
        stderr = done.stderr.decode("utf-8", "replace").strip()
        if done.returncode != 0 or stderr:
            self.problems.append(f"{name} hook exited {done.returncode}: {stderr[:200]}")
        lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
        try:
            answer = json.loads(lines[-1]) if lines else None
        except ValueError:
            return None
        return answer if isinstance(answer, dict) else None

    def session(self, session: Session) -> None:
        """One whole session: start, every turn (prompt, text, tools, reply), end."""
        project = self.project(session.project)
        log = self.transcript(session.host_id, project)
        base = {
            "session_id": session.host_id,
            "transcript_path": str(log.path),
            "cwd": str(project),
        }
        self.hook("SessionStart", base, source="startup")
        for turn in session.turns:
            log.user(turn.prompt)
            asked = {**base, "prompt_id": str(uuid.uuid4()), "permission_mode": "default"}
            self.hook("UserPromptSubmit", asked, prompt=turn.prompt)
            for step in turn.steps:
                if not step.tool:
                    log.assistant({"type": "text", "text": step.say})
                    continue
                tool_use_id = f"toolu_01{uuid.uuid4().hex[:22]}"
                given, answer, shown = tool_call(step, project)
                log.assistant(
                    {"type": "tool_use", "id": tool_use_id, "name": step.tool, "input": given}
                )
                call = {"tool_name": step.tool, "tool_input": given, "tool_use_id": tool_use_id}
                self.hook("PreToolUse", asked, **call)
                log.tool_result(tool_use_id, shown, answer)
                self.hook("PostToolUse", asked, **call, tool_response=answer, duration_ms=12)
            log.assistant({"type": "text", "text": turn.reply})
            self.hook("Stop", asked, stop_hook_active=False, last_assistant_message=turn.reply)
        self.hook("SessionEnd", base, reason="prompt_input_exit")

    def ask(self, session: Session, n: int) -> str:
        """The additionalContext a new session's first prompt (the question) is given."""
        project = self.project(session.project)
        host_id = str(uuid.uuid5(SESSION_NS, f"ask-{n}-{session.id}"))
        log = self.transcript(host_id, project)
        base = {"session_id": host_id, "transcript_path": str(log.path), "cwd": str(project)}
        self.hook("SessionStart", base, source="startup")
        log.user(session.question)
        asked = {**base, "prompt_id": str(uuid.uuid4()), "permission_mode": "default"}
        answer = self.hook("UserPromptSubmit", asked, prompt=session.question) or {}
        output = answer.get("hookSpecificOutput")
        context = output.get("additionalContext") if isinstance(output, dict) else None
        return context if isinstance(context, str) else ""


# --- the worker and what it stored ----------------------------------------------------------


def wait_settled(worker: demo.Worker, vectors: bool = True) -> dict[str, Any]:
    """The worker's stats once its queue is empty and (unless not `vectors`) every record has
    its vector, twice in a row, a second apart: a summary queued by the last hook is then seen."""
    deadline, settled = time.monotonic() + DRAIN_WAIT_S, 0
    while True:
        stats: dict[str, Any] = demo._get_json(worker, "/api/stats")
        queue, embedding = stats["queue"], stats.get("embedding")
        idle = queue["pending"] == 0 and queue["processing"] == 0
        embedded = not vectors or embedding is None or embedding.get("pending") in (0, None)
        settled = settled + 1 if idle and embedded else 0
        if settled >= 2:
            return stats
        if time.monotonic() >= deadline:
            raise demo.DemoError(f"the worker did not settle within {DRAIN_WAIT_S:.0f} s: {queue}")
        time.sleep(1.0)


def target_units(db: Path, sessions: list[Session]) -> dict[str, set[str]]:
    """Per session id, the labels (`#12`, `#S3`) of the units made from each session's answering
    turn: observations of that prompt number or linked to its tool events, and its summaries."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out: dict[str, set[str]] = {}
        for session in sessions:
            row = conn.execute(
                "SELECT id FROM sessions WHERE host_session_id = ?", (session.host_id,)
            ).fetchone()
            labels: set[str] = set()
            if row is not None:
                turn = (row[0], session.target_turn)
                observations = conn.execute(
                    "SELECT id FROM observations WHERE session_id = ? AND prompt_number = ? "
                    "UNION SELECT observation_id FROM tool_uses WHERE session_id = ? AND "
                    "prompt_number = ? AND observation_id IS NOT NULL",
                    turn + turn,
                )
                labels |= {f"#{found}" for (found,) in observations}
                # A session's one summary covers every turn up to its newest (no target
                # turn, 0: no label, as before).
                summaries = conn.execute(
                    "SELECT id FROM session_summaries WHERE session_id = ?1 AND ?2 > 0"
                    " AND prompt_number >= ?2",
                    turn,
                )
                labels |= {f"#S{found}" for (found,) in summaries}
            out[session.id] = labels
        return out
    finally:
        conn.close()


def count_observations(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM observations").fetchone()[0])
    finally:
        conn.close()


class Stored:
    """What the worker stored, read from its database: which corpus session a hit was made
    from, a hit's text, the records typed decision."""

    def __init__(self, db: Path, sessions: list[Session]) -> None:
        self.conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        by_host = {s.host_id: s.id for s in sessions}
        rows = self.conn.execute("SELECT id, host_session_id FROM sessions").fetchall()
        self.origins = {int(row): by_host[host] for row, host in rows if host in by_host}

    def close(self) -> None:
        self.conn.close()

    def origin(self, hit: dict[str, Any]) -> str | None:
        """The corpus session an observation (decisions included) or summary was made from."""
        if hit["kind"] not in ("observation", "summary"):
            return None
        return self.origins.get(int(hit["session_id"]))

    def text(self, hit: dict[str, Any]) -> str:
        """A hit's text: an observation's title and narrative, a summary's fields, a prompt."""
        columns = {
            "observation": ("observations", "title || ' ' || narrative"),
            "summary": ("session_summaries", "request || ' ' || investigated || ' ' || learned "
                        "|| ' ' || completed || ' ' || next_steps || ' ' || notes"),
            "prompt": ("user_prompts", "text"),
        }[hit["kind"]]  # fmt: skip
        row = self.conn.execute(
            f"SELECT {columns[1]} FROM {columns[0]} WHERE id = ?", (hit["id"],)
        ).fetchone()
        return str(row[0]) if row else ""

    def decisions(self, sessions: list[Session]) -> list[DecisionRecord]:
        """The records typed decision made from `sessions`, superseded (by a newer record, or
        no longer valid where the store keeps `valid_to`) or not."""
        names = {s.id for s in sessions}
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(observations)")}
        ended = "superseded_by IS NOT NULL"
        if "valid_to" in columns:
            ended += " OR valid_to IS NOT NULL"
        found = self.conn.execute(
            f"SELECT session_id, title, subtitle, narrative, facts, {ended} "
            "FROM observations WHERE type = 'decision' ORDER BY id"
        )
        out = []
        for session_id, title, subtitle, narrative, facts, superseded in found:
            origin = self.origins.get(int(session_id))
            if origin not in names:
                continue
            try:
                listed = json.loads(facts)
            except ValueError:
                listed = [facts]
            said = " ".join([title, subtitle, narrative, *map(str, listed)])
            out.append(DecisionRecord(str(origin), said, bool(superseded)))
        return out


def found(
    worker: demo.Worker, query: str, limit: int, project: str = "", as_of: int | None = None
) -> tuple[list[dict[str, Any]], str]:
    """The hits `/api/search` ranks for `query` (within `project` if given; as it stood at
    `as_of`, epoch ms, if given), best first, and its mode."""
    within = f"&project={quote(project)}" if project else ""
    then = f"&as_of={as_of}" if as_of is not None else ""
    path = f"/api/search?query={quote(query)}&limit={limit}{within}{then}"
    status, body = demo._get(worker, path)
    if status != 200:
        raise demo.DemoError(f"/api/search answered {status}: {body[:200]!r}")
    answer = json.loads(body)
    return list(answer["hits"]), str(answer["mode"])


def label(hit: dict[str, Any]) -> str:
    return "#" + {"observation": "", "summary": "S", "prompt": "P"}[hit["kind"]] + str(hit["id"])


def ranking(
    worker: demo.Worker, query: str, limit: int, project: str = ""
) -> tuple[list[str], str]:
    """The labels `/api/search` ranks for `query` (within `project` if given), best first,
    and its mode."""
    hits, mode = found(worker, query, limit, project)
    return [label(hit) for hit in hits], mode


def takes_as_of(worker: demo.Worker) -> bool:
    """Whether `/api/search` reads `as_of`: it answers a moment (epoch ms) and refuses a
    non-date with 400 (one that ignores the parameter answers both, one that refuses it
    neither)."""
    moment = int(time.time() * 1000)
    taken, _ = demo._get(worker, f"/api/search?query=probe&limit=1&as_of={moment}")
    refused, _ = demo._get(worker, "/api/search?query=probe&limit=1&as_of=not-a-date")
    return taken == 200 and refused == 400


def first_rank(ranked: list[str], labels: set[str]) -> int | None:
    return next((i for i, label in enumerate(ranked) if label in labels), None)


def first_of(origins: list[str | None], session: str) -> int | None:
    return next((i for i, origin in enumerate(origins) if origin == session), None)


def ahead(rank: int | None, other: int | None) -> bool:
    """Whether `rank` is found and above `other` (or `other` is not found)."""
    return rank is not None and (other is None or rank < other)


def carried(context: str, labels: set[str], answer: tuple[str, ...]) -> bool:
    """Whether injected text carries the answer: a target unit's id, or all the answer's words."""
    ids = set(re.findall(r"#S?\d+\b", context))
    return bool(ids & labels) or pushed(context, answer)


def pushed(context: str, answer: tuple[str, ...]) -> bool:
    """Whether injected text carries the answer's own words (all of them), not only an id."""
    held = normalised(context)
    return bool(answer) and all(normalised(word) in held for word in answer)


def session_text(session: Session) -> str:
    """A whole session as one document: its prompts, replies and the agent's words."""
    said = (step.say for turn in session.turns for step in turn.steps if step.say)
    return "\n".join([*(f"{t.prompt}\n{t.reply}" for t in session.turns), *said])


# --- the run --------------------------------------------------------------------------------


def searched(
    worker: demo.Worker,
    questions: list[Session],
    by_id: dict[str, Session],
    targets: dict[str, set[str]],
    stored: Stored,
) -> tuple[dict[str, dict[str, Any]], str]:
    """Per question: the answer's rank (by unit and by session), each stale unit's and stale
    session's rank against the current one, and whether its top 5 holds the same text twice."""
    out, mode = {}, ""
    for session in questions:
        hits, mode = found(worker, session.question, DEEP)
        ranked = [label(hit) for hit in hits]
        origins = [stored.origin(hit) for hit in hits]
        rank = first_rank(ranked, targets[session.id])
        by_session = first_of(origins, session.id)
        stale = {}
        for old in stale_of(session, by_id):
            old_rank, old_session = first_rank(ranked, targets[old.id]), first_of(origins, old.id)
            stale[old.id] = {
                "stale_rank": old_rank,
                "current_rank": rank,
                "current_first": ahead(rank, old_rank),
                "current_first_session": ahead(by_session, old_session),
            }
        out[session.id] = {
            "rank": rank,
            "hit": rank is not None and rank < TOP,
            "session_rank": by_session,
            "session_hit": by_session is not None and by_session < TOP,
            "repeated": bool(repeated_pairs([stored.text(hit) for hit in hits[:TOP]])),
            "stale": stale,
        }
    return out, mode


def believed_then(
    worker: demo.Worker,
    corpus: list[Session],
    questions: list[Session],
    instants: dict[str, int],
    stored: Stored,
) -> list[dict[str, Any]] | None:
    """Per amended pair, whether the question searched `as_of` the moment just before the
    amendment ranks the stale session's records above the current one's; None when
    `/api/search` does not take `as_of`."""
    if not takes_as_of(worker):
        return None
    by_id = {s.id: s for s in corpus}
    successor = {s.amends: s.id for s in corpus if s.amends}
    out = []
    for session in questions:
        for old in stale_of(session, by_id):
            hits, _ = found(worker, session.question, DEEP, as_of=instants[successor[old.id]])
            origins = [stored.origin(hit) for hit in hits]
            first = ahead(first_of(origins, old.id), first_of(origins, session.id))
            out.append({"question": session.id, "stale": old.id, "old_first": first})
    return out


def replayed(worker: demo.Worker, replayer: Replayer, order: list[Session]) -> dict[str, int]:
    """Replays `order`; before each session that amends another, the worker's queue is let
    empty and the moment noted (epoch ms): the worker stamps records by its own clock, so
    every record of the stale rule is older than that moment and the amendment's newer."""
    instants = {}
    for session in order:
        if session.amends:
            wait_settled(worker, vectors=False)
            instants[session.id] = int(time.time() * 1000)
            time.sleep(0.01)
        replayer.session(session)
    return instants


def select(corpus: list[Session], only: list[str]) -> list[Session]:
    """The sessions of `only` in `corpus`, with the stale ones they amend."""
    by_id = {s.id: s for s in corpus}
    chosen = [name for name in only if name in by_id]
    wanted = {name for s in chosen for name in [s, *(o.id for o in stale_of(by_id[s], by_id))]}
    return [s for s in corpus if s.id in wanted]


def hashes_of(folder: Path) -> Path:
    """The hash file committed beside a held-out folder: `<folder>.sha256`."""
    return folder.with_name(folder.name + ".sha256")


def measure(
    only: list[str] | None, noise: int, keep: bool = False, held: Path = HELDOUT
) -> dict[str, Any]:
    """The dev set's figures (at the top level, as before issue #30), the held-out set's of
    `held` (`heldout`, None when absent or not chosen) and its files' hash check."""
    dev, heldout = load_corpus(), load_corpus(held) if held.is_dir() else []
    if only:
        unknown = sorted(set(only) - {s.id for s in dev} - {s.id for s in heldout})
        if unknown:
            raise SystemExit(f"unknown session ids: {', '.join(unknown)}")
        dev, heldout = select(dev, only), select(heldout, only)
        if not dev:
            raise SystemExit("give at least one session id of the dev corpus")
    hashes = check_hashes(held, hashes_of(held))
    result = measure_set(dev, noise, keep)
    result["heldout"] = measure_set(heldout, noise, keep) if heldout else None
    result["heldout_hashes"] = {
        "present": hashes.present,
        "matches": hashes.matches,
        "files": hashes.files,
        "problems": hashes.problems,
        "folder": str(held),
    }
    result["floors30"] = FLOORS_30
    return result


def measure_set(corpus: list[Session], noise: int, keep: bool = False) -> dict[str, Any]:
    """One set replayed among `noise` chore sessions into a fresh worker and data dir."""
    by_id = {s.id: s for s in corpus}
    scratch = Path(tempfile.mkdtemp(prefix="claude-mem-bench-quality-")).resolve()
    data = scratch / "data"
    worker: demo.Worker | None = None
    order = replay_order(corpus, noise_sessions(noise))
    try:
        demo._pin_environment(data, demo._free_port())
        demo._prepare(data, temporary=True)
        replayer = Replayer(scratch)
        worker = demo._start_worker()
        instants = replayed(worker, replayer, order)
        stats = wait_settled(worker)
        db = Path(stats["database_path"])
        questions = [s for s in corpus if s.question]
        targets = target_units(db, corpus)
        observations = count_observations(db)
        stored = Stored(db, order)
        try:
            hybrid, hybrid_mode = searched(worker, questions, by_id, targets, stored)
            then = believed_then(worker, corpus, questions, instants, stored)
            decisions = stored.decisions(corpus)
            demo._stop(worker)
            os.environ["CLAUDE_MEM_EMBEDDING_MODEL"] = "none"
            worker = demo._start_worker()
            fulltext, fulltext_mode = searched(worker, questions, by_id, targets, stored)
        finally:
            stored.close()
        demo._stop(worker)
        del os.environ["CLAUDE_MEM_EMBEDDING_MODEL"]
        worker = demo._start_worker()
        wait_settled(worker)
        contexts = {s.id: replayer.ask(s, n) for n, s in enumerate(questions)}
    finally:
        if worker is not None:
            demo._stop(worker)
        if keep:
            print(f"kept: {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    documents = {s.id: session_text(s) for s in order}
    baseline = {q.id: q.id in bm25_ranking(documents, q.question, TOP) for q in questions}
    result = figures(
        corpus,
        questions,
        noise,
        replayer,
        observations=observations,
        targets=targets,
        hybrid=(hybrid, hybrid_mode),
        fulltext=(fulltext, fulltext_mode),
        injected={s.id: carried(contexts[s.id], targets[s.id], s.answer) for s in questions},
    )
    pushes = {s.id: pushed(contexts[s.id], s.answer) for s in questions}
    result.update(
        figures_30(
            corpus,
            questions,
            hybrid=hybrid,
            fulltext=fulltext,
            baseline=baseline,
            pushes=pushes,
            then=then,
            decisions=decisions,
        )
    )
    for q in result["questions"]:
        q.update(
            session_rank_hybrid=hybrid[q["id"]]["session_rank"],
            session_rank_fulltext=fulltext[q["id"]]["session_rank"],
            bm25=baseline[q["id"]],
            pushed=pushes[q["id"]],
            repeated=hybrid[q["id"]]["repeated"] or fulltext[q["id"]]["repeated"],
        )
    return result


def _share(values: list[bool]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def figures(
    corpus: list[Session],
    questions: list[Session],
    noise: int,
    replayer: Replayer,
    *,
    observations: int,
    targets: dict[str, set[str]],
    hybrid: tuple[dict[str, dict[str, Any]], str],
    fulltext: tuple[dict[str, dict[str, Any]], str],
    injected: dict[str, bool],
) -> dict[str, Any]:
    pairs = [
        {
            "question": q.id,
            "stale": old,
            "hybrid": hybrid[0][q.id]["stale"][old]["current_first"],
            "fulltext": fulltext[0][q.id]["stale"][old]["current_first"],
            "hybrid_session": hybrid[0][q.id]["stale"][old]["current_first_session"],
            "fulltext_session": fulltext[0][q.id]["stale"][old]["current_first_session"],
        }
        for q in questions
        for old in hybrid[0][q.id]["stale"]
    ]
    measured = {
        "recall_hybrid": _share([hybrid[0][q.id]["hit"] for q in questions]),
        "recall_fulltext": _share([fulltext[0][q.id]["hit"] for q in questions]),
        "injection": _share(list(injected.values())),
        "obs_per_tool_call": round(observations / max(replayer.post_tool_use, 1), 3),
        "amended_current_first": _share([p["hybrid"] and p["fulltext"] for p in pairs]),
    }
    met = {
        name: value <= FLOORS[name] if name == "obs_per_tool_call" else value >= FLOORS[name]
        for name, value in measured.items()
    }
    return {
        "sessions": {"target": len(corpus), "noise": noise, "questions": len(questions)},
        "hooks": replayer.hooks,
        "tool_calls": replayer.post_tool_use,
        "tool_calls_in_corpus": sum(s.tool_calls for s in corpus),
        "observations": observations,
        "modes": {"hybrid": hybrid[1], "fulltext": fulltext[1]},
        "figures": measured,
        "floors": FLOORS,
        "met": met,
        "amended": pairs,
        "questions": [
            {
                "id": q.id,
                "units": sorted(targets[q.id]),
                "rank_hybrid": hybrid[0][q.id]["rank"],
                "rank_fulltext": fulltext[0][q.id]["rank"],
                "injected": injected[q.id],
            }
            for q in questions
        ],
        "problems": replayer.problems[:20],
    }


def figures_30(
    corpus: list[Session],
    questions: list[Session],
    *,
    hybrid: dict[str, dict[str, Any]],
    fulltext: dict[str, dict[str, Any]],
    baseline: dict[str, bool],
    pushes: dict[str, bool],
    then: list[dict[str, Any]] | None,
    decisions: list[DecisionRecord],
) -> dict[str, Any]:
    """Issue #30's figures of one set and whether each meets its floor. A figure with nothing
    to measure (no amended pair, no rule) is None and met; `as_of_old_first` is None and
    missed while `/api/search` does not take `as_of`."""
    amended = {s.amends for s in corpus}
    rules = [
        LabelledRule(s.id, rule, current=s.id not in amended) for s in corpus for rule in s.rules
    ]
    stale = [(q.id, old) for q in questions for old in hybrid[q.id]["stale"]]
    session_hybrid = share(hybrid[q.id]["session_hit"] for q in questions)
    session_fulltext = share(fulltext[q.id]["session_hit"] for q in questions)
    bm25 = share(baseline.values())
    measured: dict[str, float | int | None] = {
        "recall_session_hybrid": session_hybrid,
        "recall_session_fulltext": session_fulltext,
        "recall_bm25_sessions": bm25,
        "bm25_gap": None if bm25 is None else round(bm25 - (session_fulltext or 0.0), 3),
        "hybrid_minus_fulltext": None
        if session_hybrid is None
        else round(session_hybrid - (session_fulltext or 0.0), 3),
        "repeated_text": sum(
            run[q.id]["repeated"] for run in (hybrid, fulltext) for q in questions
        ),
        "push": share(pushes.values()),
        "amended_current_first_session": share(
            hybrid[q]["stale"][old]["current_first_session"]
            and fulltext[q]["stale"][old]["current_first_session"]
            for q, old in stale
        ),
        "as_of_old_first": None if then is None else share(p["old_first"] for p in then),
        "decision_precision": decision_precision(decisions, rules),
        "decision_recall": decision_recall(decisions, rules),
    }
    met = {}
    for name, floor in FLOORS_30.items():
        value = measured[name]
        if value is None:
            met[name] = {"as_of_old_first": then is not None,
                         "decision_precision": not rules}.get(name, True)  # fmt: skip
        else:
            met[name] = value <= floor if name in AT_MOST else value >= floor
    return {
        "figures30": measured,
        "met30": met,
        "decisions": {
            "stored": len(decisions),
            "stating_a_rule": sum(stating(decisions, rules)),
            "rules": len(rules),
        },
        "as_of": then,
    }


NAMES = {
    "recall_hybrid": "recall@5, hybrid (vectors)",
    "recall_fulltext": "recall@5, full text alone",
    "injection": "prompt-time injection carries the answer",
    "obs_per_tool_call": "observations per tool call",
    "amended_current_first": "amended decisions, current rule first",
    "recall_session_hybrid": "recall@5 by session, hybrid",
    "recall_session_fulltext": "recall@5 by session, full text alone",
    "recall_bm25_sessions": "recall@5, plain BM25 over whole sessions",
    "bm25_gap": "BM25 minus full text alone",
    "hybrid_minus_fulltext": "hybrid minus full text alone (by session)",
    "repeated_text": "queries whose top 5 holds the same text twice",
    "push": "push: the answer's own words injected",
    "amended_current_first_session": "amended, current rule's session first",
    "as_of_old_first": "as_of before the amendment: stale rule first",
    "decision_precision": "decision precision (records stating a rule)",
    "decision_recall": "decision recall (rules stated by a record)",
}


def _shown(value: float | int | None) -> str:
    if value is None:
        return "n/a"
    return str(value) if isinstance(value, int) else f"{value:.3f}"


def side_by_side(result: dict[str, Any]) -> Iterator[str]:
    """The dev and held-out figures in one table, each with its floor and whether it is met
    (issue #15's floors above, #30's below; `--check` holds held-out to #30's)."""
    hashes, heldout = result["heldout_hashes"], result["heldout"]
    folder = Path(hashes["folder"])
    if not hashes["present"]:
        yield f"\nHeld-out set: absent ({folder.name}/ not here): dev figures only."
    elif hashes["matches"]:
        yield (f"\nHeld-out set ({folder.name}/, never tuned on): {hashes['files']} files, "
               f"hashes match {hashes_of(folder).name}.")  # fmt: skip
    else:
        yield f"\n**HELD-OUT HASH MISMATCH** ({hashes_of(folder).name}): " + "; ".join(
            hashes["problems"]
        )
    if heldout is not None:
        s = heldout["sessions"]
        yield (f"Held-out: {s['target']} sessions ({s['questions']} questions), "
               f"{heldout['observations']} observations, {heldout['decisions']['stored']} "
               f"decision records, {heldout['decisions']['rules']} labelled rules.")  # fmt: skip
    sets = [("dev", result), *([("held-out", heldout)] if heldout is not None else [])]
    yield "\n| figure | " + " | ".join(name for name, _ in sets) + " | floor | met |"
    yield "|---|" + "---:|" * len(sets) + "---:|---|"
    for name, label in NAMES.items():
        old = name in FLOORS
        values = [r["figures" if old else "figures30"].get(name) for _, r in sets]
        floors = FLOORS if old else FLOORS_30
        floor = f"{'≤' if name in AT_MOST else '≥'} {floors[name]}" if name in floors else ""
        met = [r["met" if old else "met30"].get(name) for _, r in sets]
        verdict = " / ".join("-" if m is None else "yes" if m else "NO" for m in met)
        row = " | ".join(_shown(v) for v in values)
        yield f"| {label} | {row} | {floor} | {verdict if floor else ''} |"
    d = result["decisions"]
    as_of = "not taken by /api/search (n/a)" if result["as_of"] is None else "taken"
    yield (f"\ndev decisions: {d['stored']} records typed decision, {d['stating_a_rule']} "
           f"stating a labelled rule; {d['rules']} labelled rules. as_of: {as_of}")  # fmt: skip


def passed(result: dict[str, Any]) -> bool:
    """`--check`: dev meets issue #15's floors and hybrid >= full text alone; the held-out
    files match their hashes and the held-out set meets every floor of issue #30."""
    dev = all(result["met"].values()) and result["met30"]["hybrid_minus_fulltext"]
    hashes, heldout = result["heldout_hashes"], result["heldout"]
    held = heldout is None or all(heldout["met30"].values())
    return bool(dev and held and (not hashes["present"] or hashes["matches"]))


def markdown(result: dict[str, Any]) -> Iterator[str]:
    s = result["sessions"]
    yield (
        f"{s['target']} hand-written sessions ({s['questions']} questions), {s['noise']} noise "
        f"sessions; {result['hooks']} hook runs, {result['tool_calls']} PostToolUse events, "
        f"{result['observations']} observations stored. Search modes: "
        f"{result['modes']['hybrid']} / {result['modes']['fulltext']}."
    )
    yield from side_by_side(result)
    yield (
        "\n| question | answer's units | rank hybrid | rank full text | injected "
        "| session rank hybrid | session rank full text | BM25 top 5 | pushed |"
    )
    yield "|---|---|---:|---:|---|---:|---:|---|---|"
    for q in result["questions"]:  # the dev set's only: the held-out set is not to be tuned on
        ranks = [
            "-" if r is None else str(r + 1)
            for r in (q["rank_hybrid"], q["rank_fulltext"], q["session_rank_hybrid"],
                      q["session_rank_fulltext"])
        ]  # fmt: skip
        units = " ".join(q["units"]) or "none"
        said = ["yes" if q[name] else "no" for name in ("injected", "bm25", "pushed")]
        yield (f"| {q['id']} | {units} | {ranks[0]} | {ranks[1]} | {said[0]} | {ranks[2]} "
               f"| {ranks[3]} | {said[1]} | {said[2]} |")  # fmt: skip
    heldout = result["heldout"]
    for problem in [*result["problems"], *(heldout["problems"] if heldout else [])]:
        yield f"\nwarning: {problem}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 when a floor is missed")
    parser.add_argument(
        "--sessions", help="only these hand-written session ids, dev or held-out (comma-separated)"
    )
    parser.add_argument("--noise", type=int, default=NOISE, help="unrelated sessions replayed")
    parser.add_argument("--keep", action="store_true", help="keep the scratch data (to look)")
    parser.add_argument(
        "--heldout",
        type=Path,
        default=HELDOUT,
        help="the held-out folder (its hashes in <folder>.sha256)",
    )
    args = parser.parse_args(argv)
    only = [name for name in (args.sessions or "").split(",") if name]
    result = measure(only or None, args.noise, args.keep, args.heldout)
    print(json.dumps(result, indent=1) if args.json else "\n".join(markdown(result)))
    hashes = result["heldout_hashes"]
    if hashes["present"] and not hashes["matches"]:
        print("HELD-OUT HASH MISMATCH: " + "; ".join(hashes["problems"]), file=sys.stderr)
    return 1 if args.check and not passed(result) else 0


if __name__ == "__main__":
    sys.exit(main())
