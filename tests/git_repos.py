"""Real repositories for tests, made with `git` itself and none of the machine's git config.

Every commit gets an explicit author, committer and date (one minute after the last unless
given), so author times are the same on every run.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime
from pathlib import Path

START = 1_700_000_000  # the first commit's time (epoch seconds)
AUTHOR = "Ada Lovelace <ada@example.com>"


def epoch(iso: str) -> int:
    """An ISO 8601 time ("2023-04-02T10:00:00+00:00") as the seconds `Repo.commit` takes."""
    return int(datetime.fromisoformat(iso).timestamp())


def git_env(home: Path) -> dict[str, str]:
    """The environment for git in tests: no global or system config, a private HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, "HOME": str(home), "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}  # fmt: skip


class Repo:
    """A repository at `path` (created), committed to only through git."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.clock = START
        path.mkdir(parents=True, exist_ok=True)
        self.env = git_env(path.parent)
        self.git("init", "-q", "-b", "main")

    def git(
        self, *args: str, author: str | bytes = AUTHOR, env: dict[str, str] | None = None
    ) -> str:
        """Run git in the repository as `author` ("Name <email>") at the clock's time."""
        raw = author.encode() if isinstance(author, str) else author
        name, email = raw.rsplit(b" <", 1)
        when = f"@{self.clock} +0000".encode()
        who = {b"GIT_AUTHOR_NAME": name, b"GIT_AUTHOR_EMAIL": email.rstrip(b">"),
               b"GIT_AUTHOR_DATE": when, b"GIT_COMMITTER_NAME": name,
               b"GIT_COMMITTER_EMAIL": email.rstrip(b">"), b"GIT_COMMITTER_DATE": when}  # fmt: skip
        extra = {k.encode(): v.encode() for k, v in {**self.env, **(env or {})}.items()}
        done = subprocess.run(
            ["git", "-c", "commit.gpgsign=false", "-c", "core.editor=true", *args],
            cwd=self.path,
            env={**extra, **who},
            capture_output=True,
            check=False,
        )
        if done.returncode:
            raise AssertionError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace')}")
        return done.stdout.decode("utf-8", "replace").strip()

    def commit(
        self,
        files: dict[str, str | bytes | None],
        message: str | bytes,
        *,
        author: str | bytes = AUTHOR,
        date: int | None = None,
    ) -> str:
        """Write `files` (None deletes one) and commit everything with `message`, verbatim;
        the new hash. The clock moves to `date`, else a minute on."""
        for name, content in files.items():
            target = self.path / name
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
        self.git("add", "-A")
        self.clock = date if date is not None else self.clock + 60
        file = self.path.parent / f".{self.path.name}-message"
        file.write_bytes(message.encode() if isinstance(message, str) else message)
        self.git("commit", "-q", "--allow-empty", "--cleanup=whitespace", "-F", str(file),
                 author=author)  # fmt: skip
        return self.git("rev-parse", "HEAD")
