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

from claude_mem.demo import recorded
from claude_mem.demo import run as demo
from claude_mem.hooks.command import hook_argv

CORPUS = Path(__file__).resolve().parent / "memory_quality_corpus"
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


def load_corpus(folder: Path = CORPUS) -> list[Session]:
    """The hand-written sessions, in replay order (file by file, as written)."""
    sessions = []
    for path in sorted(folder.glob("*.toml")):
        data = tomllib.loads(path.read_text("utf-8"))
        for raw in data["session"]:
            turns = tuple(
                Turn(t["prompt"], t["reply"], tuple(_step(s) for s in t.get("step", [])))
                for t in raw["turn"]
            )
            sessions.append(
                Session(
                    id=raw["id"],
                    project=data["project"],
                    kind=raw["kind"],
                    turns=turns,
                    question=raw.get("question", ""),
                    target_turn=raw.get("target_turn", 0),
                    answer=tuple(raw.get("answer", ())),
                    amends=raw.get("amends", ""),
                )
            )
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


# --- Claude Code's side: hook payloads and the transcript ----------------------------------


class Transcript:
    """A session's transcript JSONL, written line by line before the hook that follows it."""

    def __init__(self, path: Path, host_id: str, cwd: Path) -> None:
        self.path, self.host_id, self.cwd = path, host_id, cwd
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
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            **extra,
        }
        self.parent = line_id
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
    hooks: int = 0
    post_tool_use: int = 0
    problems: list[str] = field(default_factory=list)

    def project(self, name: str) -> Path:
        folder = self.root / "projects" / name
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def transcript(self, host_id: str, project: Path) -> Transcript:
        slug = re.sub(r"[^A-Za-z0-9]", "-", str(project))
        return Transcript(
            self.root / "home/.claude/projects" / slug / f"{host_id}.jsonl", host_id, project
        )

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


def wait_settled(worker: demo.Worker) -> dict[str, Any]:
    """The worker's stats once its queue is empty and every record has its vector (twice in a
    row, a second apart: a summary queued by the last hook is then seen)."""
    deadline, settled = time.monotonic() + DRAIN_WAIT_S, 0
    while True:
        stats: dict[str, Any] = demo._get_json(worker, "/api/stats")
        queue, embedding = stats["queue"], stats.get("embedding")
        idle = queue["pending"] == 0 and queue["processing"] == 0
        embedded = embedding is None or embedding.get("pending") in (0, None)
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


def ranking(
    worker: demo.Worker, query: str, limit: int, project: str = ""
) -> tuple[list[str], str]:
    """The labels `/api/search` ranks for `query` (within `project` if given), best first,
    and its mode."""
    within = f"&project={quote(project)}" if project else ""
    status, body = demo._get(worker, f"/api/search?query={quote(query)}&limit={limit}{within}")
    if status != 200:
        raise demo.DemoError(f"/api/search answered {status}: {body[:200]!r}")
    answer = json.loads(body)
    kinds = {"observation": "", "summary": "S", "prompt": "P"}
    return [f"#{kinds[h['kind']]}{h['id']}" for h in answer["hits"]], str(answer["mode"])


def first_rank(ranked: list[str], labels: set[str]) -> int | None:
    return next((i for i, label in enumerate(ranked) if label in labels), None)


def carried(context: str, labels: set[str], answer: tuple[str, ...]) -> bool:
    """Whether injected text carries the answer: a target unit's id, or all the answer's words."""
    ids = set(re.findall(r"#S?\d+\b", context))
    lowered = context.lower()
    return bool(ids & labels) or (bool(answer) and all(a.lower() in lowered for a in answer))


# --- the run --------------------------------------------------------------------------------


def searched(
    worker: demo.Worker,
    questions: list[Session],
    by_id: dict[str, Session],
    targets: dict[str, set[str]],
) -> tuple[dict[str, dict[str, Any]], str]:
    """Per question: the answer's rank, and each stale unit's rank against the current one."""
    out, mode = {}, ""
    for session in questions:
        ranked, mode = ranking(worker, session.question, DEEP)
        rank = first_rank(ranked, targets[session.id])
        stale = {
            old.id: {"stale_rank": first_rank(ranked, targets[old.id]), "current_rank": rank}
            for old in stale_of(session, by_id)
        }
        for pair in stale.values():
            current, old_rank = pair["current_rank"], pair["stale_rank"]
            pair["current_first"] = current is not None and (old_rank is None or current < old_rank)
        out[session.id] = {"rank": rank, "hit": rank is not None and rank < TOP, "stale": stale}
    return out, mode


def measure(only: list[str] | None, noise: int, keep: bool = False) -> dict[str, Any]:
    corpus = load_corpus()
    by_id = {s.id: s for s in corpus}
    if only:
        unknown = [name for name in only if name not in by_id]
        if unknown:
            raise SystemExit(f"unknown session ids: {', '.join(unknown)}")
        wanted = {name for s in only for name in [s, *(o.id for o in stale_of(by_id[s], by_id))]}
        corpus = [s for s in corpus if s.id in wanted]
    scratch = Path(tempfile.mkdtemp(prefix="claude-mem-bench-quality-")).resolve()
    data = scratch / "data"
    worker: demo.Worker | None = None
    try:
        demo._pin_environment(data, demo._free_port())
        demo._prepare(data, temporary=True)
        replayer = Replayer(scratch)
        worker = demo._start_worker()
        for session in replay_order(corpus, noise_sessions(noise)):
            replayer.session(session)
        stats = wait_settled(worker)
        db = Path(stats["database_path"])
        questions = [s for s in corpus if s.question]
        targets = target_units(db, corpus)
        observations = count_observations(db)
        hybrid, hybrid_mode = searched(worker, questions, by_id, targets)
        demo._stop(worker)
        os.environ["CLAUDE_MEM_EMBEDDING_MODEL"] = "none"
        worker = demo._start_worker()
        fulltext, fulltext_mode = searched(worker, questions, by_id, targets)
        demo._stop(worker)
        del os.environ["CLAUDE_MEM_EMBEDDING_MODEL"]
        worker = demo._start_worker()
        wait_settled(worker)
        injected = {
            s.id: carried(replayer.ask(s, n), targets[s.id], s.answer)
            for n, s in enumerate(questions)
        }
    finally:
        if worker is not None:
            demo._stop(worker)
        if keep:
            print(f"kept: {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return figures(
        corpus,
        questions,
        noise,
        replayer,
        observations=observations,
        targets=targets,
        hybrid=(hybrid, hybrid_mode),
        fulltext=(fulltext, fulltext_mode),
        injected=injected,
    )


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


def markdown(result: dict[str, Any]) -> Iterator[str]:
    s, f, floors, met = result["sessions"], result["figures"], result["floors"], result["met"]
    yield (
        f"{s['target']} hand-written sessions ({s['questions']} questions), {s['noise']} noise "
        f"sessions; {result['hooks']} hook runs, {result['tool_calls']} PostToolUse events, "
        f"{result['observations']} observations stored. Search modes: "
        f"{result['modes']['hybrid']} / {result['modes']['fulltext']}.\n"
    )
    yield "| figure | measured | floor | met |"
    yield "|---|---:|---:|---|"
    names = {
        "recall_hybrid": "recall@5, hybrid (vectors)",
        "recall_fulltext": "recall@5, full text alone",
        "injection": "prompt-time injection carries the answer",
        "obs_per_tool_call": "observations per tool call",
        "amended_current_first": "amended decisions, current rule first",
    }
    for name, label in names.items():
        sign = "≤" if name == "obs_per_tool_call" else "≥"
        verdict = "yes" if met[name] else "NO"
        yield f"| {label} | {f[name]:.3f} | {sign} {floors[name]} | {verdict} |"
    yield "\n| question | answer's units | rank hybrid | rank full text | injected |"
    yield "|---|---|---:|---:|---|"
    for q in result["questions"]:
        ranks = [("-" if r is None else str(r + 1)) for r in (q["rank_hybrid"], q["rank_fulltext"])]
        units = " ".join(q["units"]) or "none"
        injected = "yes" if q["injected"] else "no"
        yield f"| {q['id']} | {units} | {ranks[0]} | {ranks[1]} | {injected} |"
    for problem in result["problems"]:
        yield f"\nwarning: {problem}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 when a floor is missed")
    parser.add_argument("--sessions", help="only these hand-written session ids (comma-separated)")
    parser.add_argument("--noise", type=int, default=NOISE, help="unrelated sessions replayed")
    parser.add_argument("--keep", action="store_true", help="keep the scratch data (to look)")
    args = parser.parse_args(argv)
    only = [name for name in (args.sessions or "").split(",") if name]
    result = measure(only or None, args.noise, args.keep)
    print(json.dumps(result, indent=1) if args.json else "\n".join(markdown(result)))
    return 1 if args.check and not all(result["met"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
