"""A repository's commits, read through `git` itself, streamed and bounded.

`git log` reads only the commits asked for (their hashes on stdin), in one process, with a
machine-readable header per commit and a zero-context patch (`-U0 -w`): the hunk headers name
the function each change is in (git's own per-language rules, switched on for common source
files), and a change of whitespace alone leaves no hunk. Output is parsed line by line as
bytes, so a commit's size never decides the memory held: at most `FILES` files and `SYMBOLS`
symbol names are kept per commit. Text that is not UTF-8 (an old Latin-1 author name) is read
as Latin-1 rather than lost.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

FILES = 40  # files kept per commit (counts cover them all)
SYMBOLS = 12  # symbol names kept per commit
_MARK = b"\x1e\x1fclaude-mem\x1e"
_END = b"\x1d"
_FORMAT = "%x1e%x1fclaude-mem%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%at%x1f%B%x1d"
# git's built-in function-name rules, by extension (repository attributes still win).
_DRIVERS = {
    "python": "py pyi",
    "golang": "go",
    "rust": "rs",
    "java": "java",
    "kotlin": "kt kts",
    "csharp": "cs",
    "cpp": "c h cc cpp cxx hpp hh",
    "ruby": "rb",
    "php": "php",
    "perl": "pl pm",
    "bash": "sh bash",
    "css": "css scss",
    "html": "html htm",
    "markdown": "md markdown",
    "elixir": "ex exs",
}
_SYMBOL = re.compile(
    rb"(?:\b(?:def|class|function|func|fn|sub|module|interface|struct|enum|trait|impl|type)"
    rb"\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$.]*))"
    rb"|(?:^|\s)([A-Za-z_$][\w$]*)\s*[:=]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>)"
    rb"|^#+\s+(.+)$"
)


class GitError(RuntimeError):
    """git is missing, the path is no repository, or git failed; the message says which."""


@dataclass(slots=True)
class FileChange:
    path: str
    old_path: str | None = None  # a rename's source
    status: str = "modified"  # added, deleted, renamed, modified
    added: int = 0
    removed: int = 0


@dataclass(slots=True)
class Commit:
    sha: str
    parents: list[str]
    author: str
    email: str
    authored_at: int  # epoch seconds
    message: str
    files: list[FileChange] = field(default_factory=list)
    more_files: int = 0  # changed files beyond FILES
    symbols: list[tuple[str, str]] = field(default_factory=list)  # (symbol, path)

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        parts = self.message.split("\n", 1)
        return parts[1].strip() if len(parts) > 1 else ""


def decode(raw: bytes) -> str:
    """UTF-8, else Latin-1 (which every byte string is): old commits mix encodings."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _git_binary() -> str:
    found = shutil.which("git")
    if found is None:
        raise GitError("git is not installed (it is needed to read a repository's history)")
    return found


def _env() -> dict[str, str]:
    """git as the user has it, minus anything that would page, prompt or translate."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


def git(root: str | Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Run one git command in `root`; its stdout. GitError with git's own words on failure."""
    try:
        done = subprocess.run(
            [_git_binary(), "-C", str(root), *args],
            input=stdin,
            capture_output=True,
            env=_env(),
            check=False,
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror}") from None
    if done.returncode != 0:
        message = decode(done.stderr).strip().splitlines()
        raise GitError(message[-1] if message else f"git {args[0]} failed")
    return done.stdout


def toplevel(path: str | Path) -> str:
    """The checkout holding `path` (GitError when it is in none)."""
    return decode(git(path, "rev-parse", "--show-toplevel")).strip()


def head(root: str | Path) -> str | None:
    """The commit HEAD points at; None in a repository with no commit yet."""
    try:
        return decode(git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")).strip()
    except GitError:
        return None


def is_revision(root: str | Path, name: str) -> bool:
    try:
        git(root, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}")
    except GitError:
        return False
    return True


def revisions(
    root: str | Path, *, since: str | None = None, max_count: int | None = None
) -> list[str]:
    """HEAD's commits, newest first: after `since` (a revision, else a date git understands),
    at most `max_count`."""
    if head(root) is None:
        return []
    args = ["rev-list"]
    if max_count is not None:
        args.append(f"--max-count={max_count}")
    if since and is_revision(root, since):
        args += [f"{since}..HEAD"]
    else:
        if since:
            args.append(f"--since={since}")
        args.append("HEAD")
    return decode(git(root, *args)).split()


def _attributes() -> str:
    lines = [
        f"*.{extension} diff={driver}"
        for driver, extensions in _DRIVERS.items()
        for extension in extensions.split()
    ]
    return "\n".join(lines) + "\n"


def read(root: str | Path, shas: Iterable[str]) -> Generator[Commit]:
    """The commits `shas`, in the order given, with their changed files and symbols."""
    wanted = "\n".join(shas)
    if not wanted:
        return
    with tempfile.TemporaryDirectory(prefix="claude-mem-git-") as scratch:
        attributes = Path(scratch, "attributes")
        attributes.write_text(_attributes())
        listed = Path(scratch, "commits")
        listed.write_text(wanted + "\n")
        args = [
            _git_binary(), "-C", str(root), "-c", f"core.attributesFile={attributes}",
            "-c", "core.quotePath=false", "-c", "log.showSignature=false",
            "log", "--stdin", "--no-walk=unsorted", f"--format={_FORMAT}", "--encoding=UTF-8",
            "-p", "-U0", "-w", "-M", "--no-color", "--no-ext-diff", "--no-textconv",
        ]  # fmt: skip
        errors = Path(scratch, "errors")
        with listed.open("rb") as stdin, errors.open("wb") as stderr:
            try:
                process = subprocess.Popen(
                    args, stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, env=_env()
                )
            except OSError as exc:
                raise GitError(f"cannot run git: {exc.strerror}") from None
            assert process.stdout is not None
            try:
                yield from _parse(process.stdout)
            except GeneratorExit:  # the reader stopped early (a deadline): so does git
                process.kill()
                raise
            finally:
                process.stdout.close()
                code = process.wait()
        if code != 0:
            lines = decode(errors.read_bytes()).strip().splitlines()
            raise GitError(lines[-1] if lines else "git log failed")


def _parse(stream: Iterable[bytes]) -> Iterator[Commit]:
    commit: Commit | None = None
    header: list[bytes] | None = None  # a header still being read (the message spans lines)
    current: FileChange | None = None
    for line in stream:
        if header is not None:
            header.append(line)
            if line.rstrip(b"\n").endswith(_END):
                commit, current, header = _header(b"".join(header)), None, None
            continue
        if line.startswith(_MARK):
            if commit is not None:
                yield commit
            commit, current = None, None
            if line.rstrip(b"\n").endswith(_END):
                commit = _header(line)
            else:
                header = [line]
            continue
        if commit is None:
            continue
        current = _patch_line(commit, current, line)
    if commit is not None:
        yield commit


def _header(raw: bytes) -> Commit:
    body = raw[len(_MARK) :].rstrip(b"\n")
    body = body[: -len(_END)] if body.endswith(_END) else body
    sha, parents, author, email, stamp, message = body.split(b"\x1f", 5)
    return Commit(
        sha=decode(sha),
        parents=decode(parents).split(),
        author=decode(author).strip(),
        email=decode(email).strip(),
        authored_at=int(stamp or 0),
        message=decode(message).replace("\r\n", "\n").strip(),
    )


def _patch_line(commit: Commit, current: FileChange | None, line: bytes) -> FileChange | None:
    """Fold one patch line into `commit`; the file the next lines belong to."""
    if line.startswith(b"diff --git "):
        change = FileChange(path=_diff_path(line))
        if len(commit.files) < FILES:
            commit.files.append(change)
        else:
            commit.more_files += 1
        return change
    if current is None:
        return None
    if line.startswith(b"@@"):
        _hunk_symbol(commit, current, line)
    elif line.startswith(b"+") and not line.startswith(b"+++ "):
        current.added += 1
    elif line.startswith(b"-") and not line.startswith(b"--- "):
        current.removed += 1
    elif line.startswith(b"rename from "):
        current.old_path, current.status = decode(line[12:].rstrip(b"\n")), "renamed"
    elif line.startswith(b"rename to "):
        current.path = decode(line[10:].rstrip(b"\n"))
    elif line.startswith(b"new file mode"):
        current.status = "added"
    elif line.startswith(b"deleted file mode"):
        current.status = "deleted"
    return current


def _diff_path(line: bytes) -> str:
    """The new path of a `diff --git a/X b/Y` line (rename lines correct it when present)."""
    text = decode(line[len(b"diff --git ") :].rstrip(b"\n"))
    middle = text.find(" b/")
    return text[middle + 3 :] if text.startswith("a/") and middle > 0 else text


def _hunk_symbol(commit: Commit, change: FileChange, line: bytes) -> None:
    end = line.find(b"@@", 2)
    context = line[end + 2 :].strip() if end > 0 else b""
    if not context or len(commit.symbols) >= SYMBOLS:
        return
    match = _SYMBOL.search(context)
    if match is None:
        return
    name = decode(next(group for group in match.groups() if group)).strip()[:80]
    if name and (name, change.path) not in commit.symbols:
        commit.symbols.append((name, change.path))
