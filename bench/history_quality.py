"""History recall: are the reasons in a project's commit messages found when asked?

    .venv/bin/python bench/history_quality.py [--json] [--check] [--keep]

The hand-written histories of bench/history_quality_corpus/*.toml (an invoicing service, a
harbour sensor feed, a home-heating daemon, a static site generator) are built with git: one
real `git commit` per entry, with its author and author date; a revert is `git revert` of the
commit it names, its message `Revert "..."`, `This reverts commit <sha>.` and the reason. Some
bodies hold a reason a later session needs (a limit and why, a revert and why, a workaround
and its ticket, a choice of X over Y); the rest are routine changes, bumps and typo fixes.
Each repository is imported with `claude-mem import --git`, everything is embedded with
`claude-mem reindex` (no worker), and every question, written in other words than the
commit's, is searched within its project through `/api/search` of a real worker (the search
the MCP tools and `claude-mem search` use): with vectors, then with full text alone (a worker
with `CLAUDE_MEM_EMBEDDING_MODEL=none`). Its answer is the observation of the commit the
question names.

Measured: recall@5 of the answering commit, hybrid and full text alone. Floor (issue #16):
recall@5 >= 0.8 (hybrid). Exit 0 unless `--check` and the floor is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repo root

from bench import memory_quality as mq
from bench.git_history_bench import claude_mem, git

from claude_mem.demo import run as demo

CORPUS = Path(__file__).resolve().parent / "history_quality_corpus"
TOP = mq.TOP
DEEP = 50
FLOOR = 0.8
HYBRID_WAIT_S = 120.0


# --- the corpus -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """Replace the first `old` in `path` by `new`, or append `append` to it."""

    path: str
    old: str = ""
    new: str = ""
    append: str = ""


@dataclass(frozen=True)
class Commit:
    subject: str
    author: str  # "Name <email>"
    date: datetime
    label: str = ""
    body: str = ""
    write: tuple[tuple[str, str], ...] = ()  # (path, whole content)
    edits: tuple[Edit, ...] = ()
    revert: str = ""  # the label of the commit this one reverts


@dataclass(frozen=True)
class Question:
    ask: str
    answer: str  # a commit label


@dataclass(frozen=True)
class Project:
    name: str
    commits: tuple[Commit, ...]
    questions: tuple[Question, ...]


def load_project(path: Path) -> Project:
    """One TOML history: `project`, `authors`, `start`, `every_hours`, `[[commit]]`s and
    `[[question]]`s. A commit without `author` or `date` takes the next author in turn and
    `every_hours` (plus a little) after the one before."""
    data = tomllib.loads(path.read_text("utf-8"))
    authors, when = data["authors"], data["start"]
    commits = []
    for n, raw in enumerate(data["commit"]):
        when = raw.get("date", when + timedelta(hours=data["every_hours"] + (n * 7) % 11))
        commits.append(
            Commit(
                subject=raw["subject"],
                author=raw.get("author", authors[(n + n // 4) % len(authors)]),
                date=when,
                label=raw.get("label", ""),
                body=raw.get("body", "").strip(),
                write=tuple(raw.get("write", {}).items()),
                edits=tuple(Edit(**edit) for edit in raw.get("edit", [])),
                revert=raw.get("revert", ""),
            )
        )
    questions = tuple(Question(q["ask"], q["answer"]) for q in data.get("question", []))
    return Project(data["project"], tuple(commits), questions)


def load_corpus(folder: Path = CORPUS) -> list[Project]:
    return [load_project(path) for path in sorted(folder.glob("*.toml"))]


# --- the repositories -----------------------------------------------------------------------


def apply(repo: Path, commit: Commit) -> None:
    """The commit's files as written, or raise when an edit's text is not there."""
    for path, content in commit.write:
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, "utf-8")
    for edit in commit.edits:
        target = repo / edit.path
        text = target.read_text("utf-8") if target.exists() else ""
        if edit.append:
            text += edit.append
        elif edit.old in text and edit.old:
            text = text.replace(edit.old, edit.new, 1)
        else:
            raise ValueError(f"{commit.subject!r}: {edit.path} has no {edit.old!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")


def revert(repo: Path, sha: str) -> None:
    """`git revert --no-commit sha`; on a conflict with later edits, its files as they were
    before it (the resolution a developer takes when undoing a change wholesale)."""
    tried = subprocess.run(
        ["git", "revert", "--no-commit", sha], cwd=repo, capture_output=True, check=False
    )
    if tried.returncode == 0:
        return
    git("revert", "--abort", cwd=repo)
    for line in git(
        "diff-tree", "--no-commit-id", "--name-status", "-r", sha, cwd=repo
    ).splitlines():
        status, path = line.split("\t", 1)
        if status == "A":
            git("rm", "-q", path, cwd=repo)
        else:
            git("checkout", f"{sha}^", "--", path, cwd=repo)


def build(project: Project, repo: Path) -> dict[str, str]:
    """The project's repository, commit by commit; the hash of each labelled commit."""
    repo.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=repo)
    shas: dict[str, str] = {}
    subjects: dict[str, str] = {}
    for commit in project.commits:
        name, email = commit.author.rsplit(" <", 1)
        stamp = commit.date.isoformat()
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email.rstrip(">"),
            "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email.rstrip(">"), "GIT_COMMITTER_DATE": stamp,
        }  # fmt: skip
        if commit.revert:
            reverted = shas[commit.revert]
            revert(repo, reverted)
            message = f'Revert "{subjects[commit.revert]}"\n\nThis reverts commit {reverted}.'
            message += f"\n\n{commit.body}" if commit.body else ""
        else:
            apply(repo, commit)
            message = commit.subject + (f"\n\n{commit.body}" if commit.body else "")
        git("add", "-A", cwd=repo)
        done = subprocess.run(
            ["git", "commit", "-q", "-F", "-"], cwd=repo, env=env, input=message.encode(),
            capture_output=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise ValueError(f"{project.name}: {commit.subject!r}: {done.stdout!r}")
        sha = git("rev-parse", "HEAD", cwd=repo)
        if commit.label:
            shas[commit.label] = sha
            subjects[commit.label] = commit.subject
    return shas


# --- the run --------------------------------------------------------------------------------


def cli(*args: str) -> str:
    """`claude-mem ARGS` in this (pinned) environment: its output."""
    done = subprocess.run([claude_mem(), *args], capture_output=True, check=False, text=True)
    if done.returncode != 0:
        raise SystemExit(f"claude-mem {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done.stdout


def answering(db: Path, project: str, shas: dict[str, str]) -> dict[str, str]:
    """Per commit label, the label (`#12`) of the observation its commit became."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        found = {}
        for label, sha in shas.items():
            row = conn.execute(
                "SELECT observation_id FROM git_commits WHERE project = ? AND sha = ?",
                (project, sha),
            ).fetchone()
            if row is not None and row[0] is not None:
                found[label] = f"#{row[0]}"
        return found
    finally:
        conn.close()


def hybrid_ready(worker: demo.Worker, project: Project) -> None:
    """Wait until the worker's search answers with vectors (its model loads on demand)."""
    deadline = time.monotonic() + HYBRID_WAIT_S
    while mq.ranking(worker, project.questions[0].ask, TOP, project.name)[1] != "hybrid":
        if time.monotonic() > deadline:
            raise SystemExit(f"search did not turn hybrid within {HYBRID_WAIT_S:.0f} s")
        time.sleep(1.0)


def ranks(
    worker: demo.Worker, projects: list[Project], targets: dict[str, dict[str, str]]
) -> tuple[dict[str, int | None], str]:
    """Per question (`project/label`), the 0-based rank of its answer, and the search mode."""
    out, mode = {}, ""
    for project in projects:
        for question in project.questions:
            ranked, mode = mq.ranking(worker, question.ask, DEEP, project.name)
            label = targets[project.name].get(question.answer)
            rank = ranked.index(label) if label in ranked else None
            out[f"{project.name}/{question.answer}"] = rank
    return out, mode


def measure(keep: bool) -> dict[str, Any]:
    projects = load_corpus()
    scratch = Path(tempfile.mkdtemp(prefix="claude-mem-bench-history-")).resolve()
    data = scratch / "data"
    worker: demo.Worker | None = None
    try:
        demo._pin_environment(data, demo._free_port())
        demo._prepare(data, temporary=True)
        shas, imports = {}, {}
        for project in projects:
            repo = scratch / "repos" / project.name
            shas[project.name] = build(project, repo)
            imports[project.name] = json.loads(cli("import", "--git", str(repo), "--json"))
        cli("reindex")
        worker = demo._start_worker()
        stats = mq.wait_settled(worker)
        db = Path(stats["database_path"])
        targets = {p.name: answering(db, p.name, shas[p.name]) for p in projects}
        hybrid_ready(worker, projects[0])
        hybrid = ranks(worker, projects, targets)
        demo._stop(worker)
        os.environ["CLAUDE_MEM_EMBEDDING_MODEL"] = "none"
        worker = demo._start_worker()
        fulltext = ranks(worker, projects, targets)
    finally:
        if worker is not None:
            demo._stop(worker)
        if keep:
            print(f"kept: {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return figures(projects, imports, targets, hybrid, fulltext)


def _recall(found: dict[str, int | None]) -> float:
    hits = [rank is not None and rank < TOP for rank in found.values()]
    return round(sum(hits) / len(hits), 3) if hits else 0.0


def figures(
    projects: list[Project],
    imports: dict[str, dict[str, Any]],
    targets: dict[str, dict[str, str]],
    hybrid: tuple[dict[str, int | None], str],
    fulltext: tuple[dict[str, int | None], str],
) -> dict[str, Any]:
    recall = {"hybrid": _recall(hybrid[0]), "fulltext": _recall(fulltext[0])}
    return {
        "projects": {
            p.name: {
                "commits": len(p.commits),
                "questions": len(p.questions),
                "imported": imports[p.name]["imported"]["commits"],
                "skipped": imports[p.name]["skipped"],
            }
            for p in projects
        },
        "modes": {"hybrid": hybrid[1], "fulltext": fulltext[1]},
        "recall": recall,
        "floor": FLOOR,
        "met": recall["hybrid"] >= FLOOR,
        "questions": [
            {
                "id": f"{p.name}/{q.answer}",
                "ask": q.ask,
                "unit": targets[p.name].get(q.answer),
                "rank_hybrid": hybrid[0][f"{p.name}/{q.answer}"],
                "rank_fulltext": fulltext[0][f"{p.name}/{q.answer}"],
            }
            for p in projects
            for q in p.questions
        ],
    }


def markdown(result: dict[str, Any]) -> Iterator[str]:
    projects = result["projects"]
    commits = sum(p["commits"] for p in projects.values())
    kept = sum(p["imported"] for p in projects.values())
    questions = len(result["questions"])
    yield (
        f"{len(projects)} hand-written histories, {commits} commits ({kept} imported as "
        f"observations), {questions} questions. Search modes: {result['modes']['hybrid']} / "
        f"{result['modes']['fulltext']}.\n"
    )
    yield "| project | commits | imported | skipped | questions |"
    yield "|---|---:|---:|---|---:|"
    for name, p in projects.items():
        skipped = ", ".join(f"{k} {v}" for k, v in p["skipped"].items() if v)
        yield f"| {name} | {p['commits']} | {p['imported']} | {skipped} | {p['questions']} |"
    recall = result["recall"]
    yield "\n| figure | measured | floor | met |"
    yield "|---|---:|---:|---|"
    verdict, floor = ("yes" if result["met"] else "NO"), f"≥ {result['floor']}"
    yield f"| recall@5, hybrid (vectors) | {recall['hybrid']:.3f} | {floor} | {verdict} |"
    yield f"| recall@5, full text alone | {recall['fulltext']:.3f} | | |"
    yield "\n| question | answer's unit | rank hybrid | rank full text |"
    yield "|---|---|---:|---:|"
    for q in result["questions"]:
        shown = [("-" if r is None else str(r + 1)) for r in (q["rank_hybrid"], q["rank_fulltext"])]
        yield f"| {q['id']} | {q['unit'] or 'not imported'} | {shown[0]} | {shown[1]} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 when the floor is missed")
    parser.add_argument("--keep", action="store_true", help="keep the scratch data (to look)")
    args = parser.parse_args(argv)
    result = measure(args.keep)
    print(json.dumps(result, indent=1) if args.json else "\n".join(markdown(result)))
    return 1 if args.check and not result["met"] else 0


if __name__ == "__main__":
    sys.exit(main())
