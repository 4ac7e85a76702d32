"""bench/git_history_bench.py and bench/history_quality.py build the histories they claim:
the generator's repository through `git fast-import` (a small one here), and the hand-written
corpus with real `git commit`s, every question naming a commit whose body holds a reason."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench import git_history_bench as gh
from bench import history_quality as hq

SMALL = gh.Params(commits=400, base=300, files=40)


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True).stdout


def test_the_generated_history_has_every_kind_of_commit(tmp_path: Path) -> None:
    repo, info = gh.build(SMALL, cache=tmp_path)
    counts = info["counts"]
    assert counts["commits"] == int(git(repo, "rev-list", "--count", "main")) == 400
    assert int(git(repo, "rev-list", "--count", "base")) == 300
    for kind in ("with body", "revert", "merge", "bot", "format", "rename"):
        assert counts.get(kind, 0) >= 1, kind
    assert int(git(repo, "rev-list", "--count", "--merges", "main")) == counts["merge"]
    authors = git(repo, "log", "--format=%an", "main").splitlines()
    assert "José Müller".encode("latin-1") in authors  # raw Latin-1 bytes, not UTF-8
    assert b"dependabot[bot]" in authors
    for line in git(repo, "log", "--format=%b", "--grep=^Revert", "main").splitlines():
        if line.startswith(b"This reverts commit "):
            sha = line.split()[-1].rstrip(b".").decode()
            assert git(repo, "cat-file", "-t", sha).strip() == b"commit"
    hunks = git(repo, "log", "-p", "-n", "50", "--no-merges", "--format=", "main")
    assert b"@@ def " in hunks or b"@@ export function " in hunks  # hunks name functions
    renamed = git(repo, "log", "--diff-filter=R", "-M", "--name-status", "--format=", "main")
    assert renamed.startswith(b"R")


def test_the_generator_is_deterministic_and_cached(tmp_path: Path) -> None:
    first, _ = gh.build(SMALL, cache=tmp_path / "a")
    second, _ = gh.build(SMALL, cache=tmp_path / "b")
    assert git(first, "rev-parse", "main") == git(second, "rev-parse", "main")
    again, info = gh.build(SMALL, cache=tmp_path / "a")
    assert again == first
    assert info["seconds"] == 0.0
    assert gh.generator_key(SMALL) != gh.generator_key(gh.Params(commits=401, base=300))


def test_the_corpus_builds_and_every_question_names_a_reason(tmp_path: Path) -> None:
    projects = hq.load_corpus()
    assert len(projects) >= 4
    assert sum(len(p.commits) for p in projects) >= 150
    assert sum(len(p.questions) for p in projects) >= 35
    for project in projects:
        by_label = {c.label: c for c in project.commits if c.label}
        assert len(by_label) == sum(1 for c in project.commits if c.label), project.name
        for question in project.questions:
            assert by_label[question.answer].body, (project.name, question.answer)
        assert [c.date for c in project.commits] == sorted(c.date for c in project.commits)
        repo = tmp_path / project.name
        shas = hq.build(project, repo)
        assert int(git(repo, "rev-list", "--count", "HEAD")) == len(project.commits)
        for commit in project.commits:
            if commit.revert:
                message = git(repo, "log", "-1", "--format=%B", shas[commit.label]).decode()
                assert message.startswith('Revert "')
                assert f"This reverts commit {shas[commit.revert]}." in message
