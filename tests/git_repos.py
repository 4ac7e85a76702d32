"""Real git repositories for tests: `git` itself, isolated from the developer's configuration,
with commits at the author dates a test sets."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

AUTHOR = ("Dev", "dev@example.com")


def git(repo: Path, *args: str, when: str | None = None) -> str:
    """Run git in `repo`; its stdout. `when` (ISO 8601) is the author and committer date."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    if when is not None:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    config = ["-c", f"user.name={AUTHOR[0]}", "-c", f"user.email={AUTHOR[1]}",
              "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]  # fmt: skip
    done = subprocess.run(
        ["git", *config, *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def make_repo(path: Path) -> Path:
    """An empty repository at `path`."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    return path


def commit(repo: Path, message: str, files: dict[str, str], *, when: str) -> str:
    """Write `files` (path relative to `repo` → text), commit them with `message`; the sha."""
    for name, text in files.items():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(repo, "add", "--", *files)
    git(repo, "commit", "-q", "-m", message, when=when)
    return git(repo, "rev-parse", "HEAD").strip()
