"""History import rate: `claude-mem import --git` on a 50,000-commit repository made by git.

    .venv/bin/python bench/git_history_bench.py [--commits N] [--json] [--check]

The repository is generated from a seed and written by `git fast-import`: a few hundred
Python, JavaScript and Markdown files in folders; most commits change 1-5 files with small
hunks inside functions (so hunk headers name them), subjects from templates (conventional
prefixes on some), about a third with a body giving a reason, reverts naming the reverted
commit's hash, merge commits of topic branches (a few with a body), renames, dependabot
bumps, whitespace-only commits, six authors (one with a Latin-1, not UTF-8, name) and author
dates over six years. It is cached under bench/out/ keyed on a hash of the generator's source
and parameters, so re-runs skip the build.

Measured, each `claude-mem import --git REPO --json` in its own process, all into one fresh
`CLAUDE_MEM_DATA_DIR`: the first import (commits read per second of the process's wall time,
its peak RSS with its git children), a second run (nothing new), and a run after 500 more
commits land on top (only those read). "Listed" counts the revisions `git rev-list` names,
"read" those not already in memory, whose messages and patches are read and judged.
Floor (issue #16): >= 500 commits/s on the first import of a 50,000-commit history. Exit 0
unless `--check` and the floor is missed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

BENCH = Path(__file__).resolve().parent
CACHE = BENCH / "out" / "cache"
COMMITS = 50_000
ADDED = 500
SEED = 16
FLOOR_RATE = 500.0
REPO_NAME = "atlas-monorepo"
START = 1_546_300_800  # 2019-01-01 UTC
SPAN_S = 6 * 365 * 86_400


# --- the vocabulary -------------------------------------------------------------------------

AUTHORS: tuple[tuple[bytes, bytes, str, int], ...] = (
    # name (bytes as written in the commit), email, timezone, weight
    (b"Alice Moreau", b"alice@atlas.dev", "+0100", 30),
    (b"Bogdan Petrov", b"bogdan@atlas.dev", "+0200", 20),
    (b"Chen Wei", b"chen.wei@atlas.dev", "+0800", 18),
    ("José Müller".encode("latin-1"), b"jose@atlas.dev", "+0100", 12),  # not UTF-8
    (b"Dana Okafor", b"dana@atlas.dev", "-0500", 12),
    (b"Sam Lindqvist", b"sam@atlas.dev", "-0800", 8),
)
BOT = (b"dependabot[bot]", b"49699333+dependabot[bot]@users.noreply.github.com")
GITHUB = (b"GitHub", b"noreply@github.com")
PACKAGES = ("src", "api", "worker", "billing", "auth", "search", "notify", "export")
MODULES = (
    "parser", "router", "storage", "cache", "models", "views", "forms", "utils", "config",
    "session", "metrics", "upload", "schedule", "tokens", "payments", "reports",
)  # fmt: skip
WEB = ("components", "hooks", "pages", "store", "lib")
DOCS = ("guide", "api", "ops", "adr")
VERBS = (
    "parse", "load", "save", "render", "validate", "compute", "fetch", "build", "apply",
    "normalize", "resolve", "merge", "format", "check", "send", "read", "write", "update",
    "handle", "sync",
)  # fmt: skip
NOUNS = (
    "header", "invoice", "token", "payload", "schedule", "retry", "config", "row", "batch",
    "query", "page", "user", "event", "price", "report", "cursor", "path", "entry", "limit",
    "timeout", "webhook", "quota", "locale", "upload",
)  # fmt: skip
PROBLEMS = (
    "off-by-one", "race", "crash", "rounding error", "timezone bug", "memory leak",
    "double counting", "stale cache read", "wrong default", "encoding error",
)  # fmt: skip
EDGES = (
    "empty input", "None values", "a missing header", "unicode names", "a zero timeout",
    "duplicate ids", "trailing slashes", "negative amounts", "leap days", "huge batches",
)  # fmt: skip
FEATURES = (
    "retry backoff", "CSV export", "pagination", "dry-run mode", "rate limiting",
    "bulk delete", "webhooks", "an audit log", "dark mode", "response caching", "SSO login",
)  # fmt: skip
SERVICES = (
    "payment gateway", "CDN", "mail relay", "search cluster", "identity provider",
    "object store", "tax API", "SMS provider",
)  # fmt: skip
BEHAVIOURS = (
    "times out after 30 s under load", "rejects requests without an idempotency key",
    "returns 429 when a client retries too fast", "sends dates in local time",
    "truncates fields longer than 255 bytes", "drops connections idle for 60 s",
    "answers 200 with an error body", "caches negative lookups for an hour",
)  # fmt: skip
BUMPED = (
    ("requests", "2.28.0"), ("django", "4.1.0"), ("celery", "5.2.0"), ("pydantic", "1.10.0"),
    ("urllib3", "1.26.0"), ("sqlalchemy", "1.4.0"), ("pytest", "7.1.0"),
)  # fmt: skip
NPM = (("react", "18.2.0"), ("axios", "1.1.0"), ("vite", "3.2.0"), ("lodash", "4.17.20"))

FIX = (
    "Fix {problem} in {func}", "Handle {edge} in {func}", "{func}: guard against {edge}",
    "Don't crash on {edge} in {module}", "Fix {problem} when {func} sees {edge}",
)  # fmt: skip
FEAT = (
    "Add {feature} to {module}", "Support {feature} in {func}", "{module}: allow {feature}",
    "Implement {feature}",
)  # fmt: skip
REFACTOR = (
    "Extract {func} from {module}", "Simplify {func}", "Clean up {module}",
    "Split {func} into smaller steps", "Rename variables in {func}",
)  # fmt: skip
OTHER = (
    ("perf", "Speed up {func}"), ("perf", "Avoid repeated lookups in {func}"),
    ("docs", "Document {func}"), ("docs", "Fix typo in {module} docs"),
    ("test", "Add tests for {func}"), ("test", "Cover {edge} in {func} tests"),
    ("chore", "Update {module}"), ("chore", "Address review comments"), ("chore", "wip"),
)  # fmt: skip
REASONS = (
    "The {service} {behaviour}, so {func} now {action}.",
    "We keep the {noun} limit at {n}: the {service} {behaviour} above it.",
    "Without this, {module} reports a {problem} whenever it meets {edge}.",
    "Reported in #{ticket}. Until the {service} fixes it upstream, {func} {action}.",
    "We chose {feature} over a cron job because the {service} {behaviour}.",
    "Must stay in sync with the {noun} format the {service} expects; see #{ticket}.",
    "The old code assumed {edge} never happens; production logs of #{ticket} show it does.",
)  # fmt: skip
ACTIONS = (
    "retries once with backoff", "checks the {noun} first", "skips {edge}",
    "converts to UTC before comparing", "caps the batch at {n} rows",
    "logs and continues instead of raising",
)  # fmt: skip
FORMAT_SUBJECTS = (
    "style: run black", "Fix whitespace", "chore: format with prettier",
    "Strip trailing whitespace", "style: reformat {module}",
)  # fmt: skip
REVERT_REASONS = (
    "It broke {func} for {edge}; reverting until #{ticket} is understood.",
    "The {service} {behaviour} with this change in staging.",
)


# --- the files ------------------------------------------------------------------------------


@dataclass
class Function:
    name: str
    lines: list[str]


@dataclass
class SourceFile:
    """One file of the tree: top-level functions (Python, JS) or sections (Markdown)."""

    path: str
    functions: list[Function]
    raw: bytes = b""  # requirements.txt and package.json: written as is

    @property
    def kind(self) -> str:
        return self.path.rsplit(".", 1)[-1]

    def render(self) -> bytes:
        if self.raw:
            return self.raw
        if self.kind == "md":
            title = self.path.rsplit("/", 1)[-1][:-3].replace("-", " ").title()
            parts = [f"# {title}\n"] + [
                f"\n## {f.name}\n\n" + "".join(line + "\n" for line in f.lines)
                for f in self.functions
            ]
        elif self.kind == "js":
            parts = ["import { log } from './log';\n"] + [
                f"\nexport function {f.name}(input) {{\n"
                + "".join(f"  {line}\n" for line in f.lines)
                + "  return result;\n}\n"
                for f in self.functions
            ]
        else:
            parts = ['"""Helpers."""\n\nimport logging\n\nlog = logging.getLogger(__name__)\n'] + [
                f"\n\ndef {f.name}(value, options=None):\n"
                + "".join(f"    {line}\n" for line in f.lines)
                + "    return result\n"
                for f in self.functions
            ]
        return "".join(parts).encode()


@dataclass(frozen=True)
class Params:
    commits: int = COMMITS + ADDED
    base: int = COMMITS  # a ref marks the history after this many commits
    seed: int = SEED
    files: int = 320


@dataclass
class Made:
    """What the generator wrote, by kind (a check that the history is what it claims)."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1


class History:
    """Writes a fast-import stream of `params.commits` commits to a running `git fast-import`
    (reading back commit hashes with `get-mark` for the reverts)."""

    def __init__(self, params: Params, stream: IO[bytes], answers: IO[bytes]) -> None:
        self.p = params
        self.rng = random.Random(params.seed)
        self.out, self.answers = stream, answers
        self.files: dict[str, SourceFile] = {}
        self.mark = 0
        self.total = 0
        self.when = START
        self.main_tip = 0
        self.ticket = 1200
        self.pr = 300
        self.made = Made()
        self.revertible: list[tuple[int, str, list[tuple[SourceFile, int]]]] = []
        self.dirty: set[str] = set()  # paths with whitespace a formatting commit can fix
        self.versions = dict(BUMPED)
        self.npm = dict(NPM)

    # -- words ---------------------------------------------------------------------------

    def pick(self, items: tuple[str, ...]) -> str:
        return self.rng.choice(items)

    def func_name(self, js: bool) -> str:
        verb, noun = self.pick(VERBS), self.pick(NOUNS)
        name = f"{verb}{noun.title()}" if js else f"{verb}_{noun}"
        return name + self.rng.choice(("", "", "s", "_all" if not js else "All"))

    def fill(self, template: str, func: str = "", module: str = "") -> str:
        self.ticket += self.rng.randint(1, 3)
        values = {
            "func": func or self.func_name(False),
            "module": module or self.pick(MODULES),
            "problem": self.pick(PROBLEMS),
            "edge": self.pick(EDGES),
            "feature": self.pick(FEATURES),
            "service": self.pick(SERVICES),
            "behaviour": self.pick(BEHAVIOURS),
            "noun": self.pick(NOUNS),
            "n": str(self.rng.choice((3, 5, 10, 50, 100, 500))),
            "ticket": str(self.ticket),
        }
        values["action"] = self.pick(ACTIONS).format(**values)
        return template.format(**values)

    def statement(self, kind: str) -> str:
        var, other = self.pick(NOUNS), self.pick(NOUNS)
        n = self.rng.randint(0, 999)
        if kind == "md":
            return f"The {var} {self.pick(VERBS)}s the {other} after {n} ms by default."
        if kind == "js":
            call = f"{self.func_name(True)}({other}, {n})"
            return self.rng.choice((f"{var} = {call};", f"log.debug('{var}', {other});"))
        line = self.rng.choice(
            (
                f"{var} = {self.func_name(False)}({other}, {n})",
                f"{var} = {other}.get('{self.pick(NOUNS)}', {n})",
                f"log.debug('{var} %s', {other})",
                f"{var} = max({var}, {n})",
            )
        )
        if self.rng.random() < 0.08:  # left for a formatting commit
            line = line.replace(" = ", "=", 1) if " = " in line else line + "  "
        return line

    # -- the tree ------------------------------------------------------------------------

    def new_file(self, path: str) -> SourceFile:
        kind = path.rsplit(".", 1)[-1]
        functions = [
            Function(
                self.func_name(kind == "js") if kind != "md" else self.pick(NOUNS).title(),
                [self.statement(kind) for _ in range(self.rng.randint(5, 9))],
            )
            for _ in range(self.rng.randint(4, 9))
        ]
        return SourceFile(path, functions)

    def initial_tree(self) -> list[SourceFile]:
        paths: set[str] = set()
        while len(paths) < self.p.files:
            roll = self.rng.random()
            if roll < 0.62:
                paths.add(f"{self.pick(PACKAGES)}/{self.pick(MODULES)}_{self.pick(NOUNS)}.py")
            elif roll < 0.9:
                paths.add(f"web/src/{self.pick(WEB)}/{self.pick(NOUNS)}{self.pick(VERBS)}.js")
            else:
                paths.add(f"docs/{self.pick(DOCS)}/{self.pick(NOUNS)}-{self.pick(VERBS)}.md")
        files = [self.new_file(path) for path in sorted(paths)]
        reqs = "".join(f"{name}=={v}\n" for name, v in self.versions.items())
        files.append(SourceFile("requirements.txt", [], reqs.encode()))
        files.append(SourceFile("web/package.json", [], self.package_json()))
        return files

    def package_json(self) -> bytes:
        deps = {name: f"^{v}" for name, v in self.npm.items()}
        return (json.dumps({"name": "atlas-web", "dependencies": deps}, indent=2) + "\n").encode()

    def code_files(self) -> list[str]:
        return [path for path, f in self.files.items() if not f.raw]

    # -- the stream ----------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        self.out.write(data)

    def data(self, payload: bytes) -> None:
        self.write(b"data %d\n%s\n" % (len(payload), payload))

    def sha(self, mark: int) -> str:
        self.write(b"get-mark :%d\n" % mark)
        self.out.flush()
        return self.answers.readline().decode().strip()

    def tick(self) -> int:
        self.when += int(self.rng.expovariate(self.p.commits / SPAN_S))
        return self.when

    def commit(
        self,
        ref: bytes,
        author: tuple[bytes, bytes, str],
        message: str,
        changes: list[SourceFile],
        *,
        parent: int = 0,
        merge: int = 0,
        renames: tuple[tuple[str, str], ...] = (),
        committer: tuple[bytes, bytes] | None = None,
    ) -> int:
        self.mark += 1
        self.total += 1
        when = self.tick()
        name, email, zone = author
        by = committer or (name, email)
        self.write(b"commit %s\nmark :%d\n" % (ref, self.mark))
        self.write(b"author %s <%s> %d %s\n" % (name, email, when, zone.encode()))
        self.write(b"committer %s <%s> %d %s\n" % (*by, when + self.rng.randint(0, 600), b"+0000"))
        self.data(message.encode())
        if parent:
            self.write(b"from :%d\n" % parent)
        if merge:
            self.write(b"merge :%d\n" % merge)
        for old, new in renames:
            self.write(b'R "%s" "%s"\n' % (old.encode(), new.encode()))
        for file in {id(f): f for f in changes}.values():
            self.write(b"M 100644 inline %s\n" % file.path.encode())
            self.data(file.render())
        self.write(b"\n")
        return self.mark

    def author(self) -> tuple[bytes, bytes, str]:
        name, email, zone, _ = self.rng.choices(AUTHORS, weights=[a[3] for a in AUTHORS])[0]
        return name, email, zone

    # -- kinds of commit -----------------------------------------------------------------

    def edit(self, file: SourceFile, index: int | None = None) -> int:
        """A small hunk inside one function; returns the function's index."""
        if index is None or index >= len(file.functions):
            index = self.rng.randrange(len(file.functions))
        lines = file.functions[index].lines
        at = self.rng.randrange(1, len(lines))
        op = self.rng.random()
        if op < 0.5:
            lines[at] = self.statement(file.kind)
        elif op < 0.8 or len(lines) < 5:
            lines.insert(at, self.statement(file.kind))
        else:
            del lines[at]
        if any(line.endswith(" ") or re.match(r"\w+=", line) for line in lines):
            self.dirty.add(file.path)
        return index

    def subject(self, func: str, module: str) -> tuple[str, str]:
        roll = self.rng.random()
        templates: tuple[str, ...]
        if roll < 0.4:
            kind, templates = "fix", FIX
        elif roll < 0.6:
            kind, templates = "feat", FEAT
        elif roll < 0.72:
            kind, templates = "refactor", REFACTOR
        else:
            kind, template = self.rng.choice(OTHER)
            templates = (template,)
        text = self.fill(self.rng.choice(templates), func, module)
        if self.rng.random() < 0.4:
            scope = f"({module})" if self.rng.random() < 0.5 else ""
            text = f"{kind}{scope}: {text[0].lower()}{text[1:]}"
        return kind, text

    def body(self, func: str, module: str) -> str:
        paragraphs = [
            self.fill(self.rng.choice(REASONS), func, module)
            for _ in range(self.rng.choice((1, 1, 2, 3)))
        ]
        return "\n\n".join(paragraphs)

    def change(self, ref: bytes, parent: int = 0) -> tuple[int, str, list[SourceFile]]:
        """An ordinary commit; on main (no parent given) it may be reverted later."""
        count = self.rng.choices((1, 2, 3, 4, 5), weights=(40, 25, 15, 10, 10))[0]
        chosen = [self.files[p] for p in self.rng.sample(self.code_files(), count)]
        touched = [(f, self.edit(f)) for f in chosen]
        first, index = touched[0]
        module = first.path.rsplit("/", 1)[-1].split(".")[0]
        func = first.functions[index].name
        if self.rng.random() < 0.06 and first.kind != "md":  # a new function
            name = self.func_name(first.kind == "js")
            first.functions.append(Function(name, [self.statement(first.kind) for _ in range(6)]))
            func = name
        _, subject = self.subject(func, module)
        message = subject + "\n"
        if self.rng.random() < 0.34:
            message += "\n" + self.body(func, module) + "\n"
            self.made.add("with body")
        mark = self.commit(ref, self.author(), message, chosen, parent=parent)
        self.made.add("change")
        if ref == b"refs/heads/main":
            self.revertible = [*self.revertible[-300:], (mark, subject, touched)]
        return mark, subject, chosen

    def revert(self) -> None:
        mark, subject, touched = self.revertible.pop(self.rng.randrange(len(self.revertible)))
        for file, index in touched:
            self.edit(file, index)
        message = f'Revert "{subject}"\n\nThis reverts commit {self.sha(mark)}.\n'
        if self.rng.random() < 0.5:
            message += "\n" + self.fill(self.rng.choice(REVERT_REASONS)) + "\n"
        self.main_tip = self.commit(
            b"refs/heads/main", self.author(), message, [f for f, _ in touched]
        )
        self.made.add("revert")

    def topic(self) -> None:
        """A branch of 1-4 commits off main, merged back with a merge commit (main does not
        move meanwhile, so the merge's tree is the topic's: its files are written again)."""
        self.pr += 1
        base, tip, subjects, changed = self.main_tip, 0, [], []
        for _ in range(self.rng.randint(1, 4)):
            if self.total >= self.boundary() - 1:
                break
            tip, subject, files = self.change(b"refs/heads/topic", parent=0 if tip else base)
            subjects.append(subject)
            changed += files
        if not tip:
            return
        user = self.author()[1].split(b"@")[0].decode()
        branch = f"{user}/{self.pick(NOUNS)}-{self.pick(VERBS)}"
        committer: tuple[bytes, bytes] | None = None
        if self.rng.random() < 0.7:
            message, committer = f"Merge pull request #{self.pr} from {branch}\n", GITHUB
            if self.rng.random() < 0.3:
                message += f"\n{subjects[0]}\n"
                if self.rng.random() < 0.5:
                    message += "\n" + self.body("", "") + "\n"
                self.made.add("merge with body")
        else:
            message = f"Merge branch '{branch}'\n"
        self.main_tip = self.commit(
            b"refs/heads/main", self.author(), message, changed, parent=base, merge=tip,
            committer=committer,
        )  # fmt: skip
        self.made.add("merge")

    def boundary(self) -> int:
        """The next commit count a ref must mark exactly (the base, then the end)."""
        return self.p.base if self.total < self.p.base else self.p.commits

    def rename(self) -> None:
        old = self.rng.choice([p for p in self.code_files() if not p.startswith("docs/")])
        folder, name = old.rsplit("/", 1)
        stem, ext = name.rsplit(".", 1)
        new = f"{folder}/{self.pick(MODULES)}_{stem.split('_')[-1]}.{ext}"
        if new in self.files:
            return
        file = self.files.pop(old)
        file.path = new
        self.files[new] = file
        self.dirty.discard(old)
        edited = [file] if self.rng.random() < 0.5 else []
        if edited:
            self.edit(file)
        message = self.rng.choice(
            (f"Rename {name} to {new.rsplit('/', 1)[-1]}\n", f"refactor: move {old} to {new}\n")
        )
        self.main_tip = self.commit(
            b"refs/heads/main", self.author(), message, edited, renames=((old, new),)
        )
        self.made.add("rename")

    def bump(self) -> None:
        npm = self.rng.random() < 0.35
        table = self.npm if npm else self.versions
        name = self.rng.choice(sorted(table))
        major, minor, patch = (int(x) for x in table[name].split("."))
        new = (
            f"{major}.{minor}.{patch + 1}" if self.rng.random() < 0.7 else f"{major}.{minor + 1}.0"
        )
        old, table[name] = table[name], new
        if npm:
            path = "web/package.json"
            self.files[path].raw = self.package_json()
        else:
            path = "requirements.txt"
            self.files[path].raw = "".join(f"{n}=={v}\n" for n, v in table.items()).encode()
        where = " in /web" if npm else ""
        message = (
            f"Bump {name} from {old} to {new}{where}\n\nBumps [{name}](https://github.com/{name}/"
            f"{name}) from {old} to {new}.\n- [Release notes](https://github.com/{name}/{name}/"
            f"releases)\n- [Commits](https://github.com/{name}/{name}/compare/v{old}...v{new})\n\n"
            f"---\nupdated-dependencies:\n- dependency-name: {name}\n  dependency-type: "
            f"direct:production\n...\n\nSigned-off-by: dependabot[bot] <support@github.com>\n"
        )
        self.main_tip = self.commit(
            b"refs/heads/main", (*BOT, "+0000"), message, [self.files[path]]
        )
        self.made.add("bot")

    def reformat(self) -> None:
        paths = sorted(p for p in self.dirty if p in self.files)[:3]
        if not paths:
            return
        for path in paths:
            for function in self.files[path].functions:
                function.lines = [
                    re.sub(r"^(\w+)=", r"\1 = ", line.rstrip()) for line in function.lines
                ]
            self.dirty.discard(path)
        message = self.fill(self.rng.choice(FORMAT_SUBJECTS)) + "\n"
        changed = [self.files[p] for p in paths]
        self.main_tip = self.commit(b"refs/heads/main", self.author(), message, changed)
        self.made.add("format")

    # -- the whole history ---------------------------------------------------------------

    def run(self) -> Made:
        for file in self.initial_tree():
            self.files[file.path] = file
        self.main_tip = self.commit(
            b"refs/heads/main", self.author(), "Initial import\n", list(self.files.values())
        )
        marked = False
        while self.total < self.p.commits:
            if self.total == self.p.base and not marked:
                self.write(b"reset refs/heads/base\nfrom :%d\n\n" % self.main_tip)
                marked = True
            roll = self.rng.random()
            if roll < 0.035:
                self.topic()
            elif roll < 0.075:
                self.bump()
            elif roll < 0.105:
                self.reformat()
            elif roll < 0.115 and self.revertible:
                self.revert()
            elif roll < 0.123:
                self.rename()
            else:
                self.main_tip = self.change(b"refs/heads/main")[0]
        if not marked:
            self.write(b"reset refs/heads/base\nfrom :%d\n\n" % self.main_tip)
        self.write(b"done\n")
        self.out.flush()
        return self.made


# --- the benchmark --------------------------------------------------------------------------


def generator_key(params: Params) -> str:
    """A hash of the generator (this file from its vocabulary to the benchmark) and its
    parameters."""
    source = Path(__file__).read_text("utf-8").split("# --- the benchmark ---", 1)[0]
    source = source.split("# --- the vocabulary ---", 1)[1]
    blob = source + json.dumps(asdict(params), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True)
    return done.stdout.decode("utf-8", "replace").strip()


def build(params: Params, cache: Path = CACHE) -> tuple[Path, dict[str, Any]]:
    """The generated repository (from the cache when the generator is unchanged) and what it
    holds: {counts, seconds (to build, 0 when cached)}."""
    folder = cache / f"git-history-{generator_key(params)}"
    repo, about = folder / REPO_NAME, folder / "made.json"
    if about.exists():
        return repo, {**json.loads(about.read_text()), "seconds": 0.0}
    for stale in cache.glob("git-history-*"):  # an older generator's, or a half-built one
        shutil.rmtree(stale, ignore_errors=True)
    repo.mkdir(parents=True)
    started = time.monotonic()
    git("init", "-q", "-b", "main", cwd=repo)
    with subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done"], cwd=repo, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, bufsize=1 << 20,
    ) as feed:  # fmt: skip
        assert feed.stdin is not None
        assert feed.stdout is not None
        made = History(params, feed.stdin, feed.stdout).run()
        feed.stdin.close()
    if feed.returncode != 0:
        raise SystemExit(f"git fast-import failed (exit {feed.returncode})")
    git("update-ref", "-d", "refs/heads/topic", cwd=repo)
    git("reset", "-q", "--hard", "main", cwd=repo)
    counts = {"commits": int(git("rev-list", "--count", "main", cwd=repo)), **made.counts}
    counts["files"] = int(git("ls-files", "-z", cwd=repo).count("\0"))
    info = {"counts": counts, "seconds": round(time.monotonic() - started, 1)}
    about.write_text(json.dumps(info))
    return repo, info


def clean_env(data: Path) -> dict[str, str]:
    """This environment without the user's claude-mem settings: a scratch data dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_MEM_")}
    env["CLAUDE_MEM_DATA_DIR"] = str(data)
    return env


def claude_mem() -> str:
    return str(Path(sys.executable).with_name("claude-mem"))


def imported(repo: Path, data: Path) -> dict[str, Any]:
    """One `claude-mem import --git REPO --json` process: its answer, its wall time and its
    peak RSS (with its git children, from wait4)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        child = subprocess.Popen(
            [claude_mem(), "import", "--git", str(repo), "--json"],
            stdout=out, stderr=err, env=clean_env(data),
        )  # fmt: skip
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.monotonic() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            tail = err.read().decode("utf-8", "replace")[-2000:]
            raise SystemExit(f"claude-mem import --git exited {child.returncode}:\n{tail}")
        answer: dict[str, Any] = json.loads(out.read())
    skipped = answer.get("skipped", {})
    listed = sum(int(v) for v in [*answer["imported"].values(), *skipped.values()])
    return {
        "answer": answer,
        "listed": listed,
        "read": listed - int(skipped.get("known", 0)),
        "wall_s": round(seconds, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
    }


def measure(params: Params) -> dict[str, Any]:
    repo, history = build(params)
    scratch = Path(tempfile.mkdtemp(prefix="claude-mem-bench-git-")).resolve()
    try:
        work = scratch / REPO_NAME
        git("clone", "-q", "--local", str(repo), str(work), cwd=scratch)
        git("reset", "-q", "--hard", "origin/base", cwd=work)
        data = scratch / "data"
        runs = {"first": imported(work, data), "again": imported(work, data)}
        git("reset", "-q", "--hard", "origin/main", cwd=work)
        runs["added"] = imported(work, data)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    first = runs["first"]
    rate = round(first["read"] / first["wall_s"], 1) if first["wall_s"] else 0.0
    met = {
        "rate": rate >= FLOOR_RATE,
        "again_adds_nothing": runs["again"]["answer"]["imported"]["commits"] == 0,
        "added_reads_only_new": runs["added"]["read"] <= params.commits - params.base,
    }
    return {
        "history": history,
        "base": params.base,
        "added": params.commits - params.base,
        "runs": runs,
        "rate": rate,
        "floor": FLOOR_RATE,
        "met": met,
    }


def markdown(result: dict[str, Any]) -> Iterator[str]:
    counts, built = result["history"]["counts"], result["history"]["seconds"]
    kinds = ", ".join(f"{n} {k}" for k, n in counts.items() if k not in ("commits", "files"))
    how = f"built in {built:.0f} s" if built else "from the cache"
    yield (
        f"The generated history: {counts['commits']} commits on main ({kinds}), "
        f"{counts['files']} files at the tip; {how}. The first two runs see the first "
        f"{result['base']} commits, the third {result['added']} more.\n"
    )
    yield "| run | commits listed | read | imported | skipped | wall s | reported s | peak RSS |"
    yield "|---|---:|---:|---:|---|---:|---:|---:|"
    labels = {"first": "first import", "again": "again (nothing new)", "added": "after +new"}
    for name, run in result["runs"].items():
        answer = run["answer"]
        skipped = ", ".join(f"{k} {v}" for k, v in answer.get("skipped", {}).items())
        yield (
            f"| {labels[name]} | {run['listed']} | {run['read']} | "
            f"{answer['imported']['commits']} | {skipped} | {run['wall_s']:.2f} | "
            f"{float(answer.get('seconds', 0)):.2f} | {run['peak_rss_mib']:.0f} MiB |"
        )
    met = result["met"]
    yield "\n| figure | measured | floor | met |"
    yield "|---|---:|---:|---|"
    verdict = "yes" if met["rate"] else "NO"
    rate, floor = f"{result['rate']:.0f}", f"≥ {result['floor']:.0f}"
    yield f"| first import, commits read/s (wall) | {rate} | {floor} | {verdict} |"
    checks = {
        "again_adds_nothing": "a second run adds nothing",
        "added_reads_only_new": "after new commits, only those are read",
    }
    for name, label in checks.items():
        yield f"| {label} | | | {'yes' if met[name] else 'NO'} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--commits", type=int, default=COMMITS, help="the history's size")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 when a floor is missed")
    parser.add_argument("--build-only", action="store_true", help="build (or find) the repo")
    args = parser.parse_args(argv)
    params = Params(commits=args.commits + ADDED, base=args.commits)
    if args.build_only:
        repo, history = build(params)
        print(json.dumps({"repo": str(repo), **history}))
        return 0
    result = measure(params)
    print(json.dumps(result, indent=1) if args.json else "\n".join(markdown(result)))
    return 1 if args.check and not all(result["met"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
