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
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

CHUNK = 2_000  # commits per `git log` run (bounds git's memory on a long history)
FILES = 40  # files kept per commit (counts cover them all)
SYMBOLS = 12  # symbol names kept per commit
LINE = 1 << 16  # bytes read of one patch line (a minified file's line is cut, not held)
# Fields are NUL-separated (no commit text holds a NUL), and each header starts and ends with
# a token made per run, so no message, path or file content can pass for one.
_FIELDS = ("%H", "%P", "%an", "%ae", "%at", "%B")
_HUNK = re.compile(rb"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
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
    at most `max_count`. GitError when `since` is neither."""
    if head(root) is None:
        return []
    args = ["rev-list"]
    if max_count is not None:
        args.append(f"--max-count={max_count}")
    if since and is_revision(root, since):
        args += [f"{since}..HEAD"]
    else:
        if since is not None:
            args.append(f"--max-age={date_seconds(since, root)}")
        args.append("HEAD")
    return decode(git(root, *args)).split()


def date_seconds(date: str, root: str | Path = "/") -> int:
    """`date` as git reads dates (`yesterday`, `6 months ago`, `2024-03-01`), in epoch
    seconds; `import --git --since` and `search --since` both read dates so. `git log --since`
    takes any text (an unknown word reads as "now"); git's expiry-date parser says when it
    understood nothing. `root` only runs git somewhere: no repository is needed."""
    try:
        out = git(root, "-c", f"claude-mem.since={date}", "config", "--type=expiry-date",
                  "claude-mem.since")  # fmt: skip
    except GitError:
        raise GitError(f"--since {date!r} is neither a revision nor a date git reads") from None
    return int(out.strip())


def _attributes() -> str:
    lines = [
        f"*.{extension} diff={driver}"
        for driver, extensions in _DRIVERS.items()
        for extension in extensions.split()
    ]
    return "\n".join(lines) + "\n"


def read(root: str | Path, shas: Iterable[str]) -> Generator[Commit]:
    """The commits `shas`, in the order given, with their changed files and symbols: one
    `git log` per `CHUNK` of them, since git holds every commit it was given until it ends."""
    listed = list(shas)
    for start in range(0, len(listed), CHUNK):
        yield from _read_part(root, listed[start : start + CHUNK])


def _read_part(root: str | Path, shas: list[str]) -> Generator[Commit]:
    wanted = "\n".join(shas)
    if not wanted:
        return
    token = b"\0claude-mem:" + secrets.token_hex(8).encode() + b"\0"
    mark = token.decode().replace("\0", "%x00")
    with tempfile.TemporaryDirectory(prefix="claude-mem-git-") as scratch:
        attributes = Path(scratch, "attributes")
        attributes.write_text(_attributes())
        listed = Path(scratch, "commits")
        listed.write_text(wanted + "\n")
        # Every option a user's config could change is given: prefixes, context, root diffs.
        args = [
            _git_binary(), "-C", str(root), "-c", f"core.attributesFile={attributes}",
            "-c", "core.quotePath=false", "-c", "log.showSignature=false",
            "log", "--stdin", "--no-walk=unsorted", "--encoding=UTF-8",
            f"--format={mark}{'%x00'.join(_FIELDS)}{mark}",
            "-p", "-U0", "--inter-hunk-context=0", "-w", "-M", "--root", "--no-color",
            "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/",
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
                yield from _parse(process.stdout, token)
            except GeneratorExit:  # the reader stopped early (a deadline): so does git
                process.kill()
                raise
            finally:
                process.stdout.close()
                code = process.wait()
        if code != 0:
            lines = decode(errors.read_bytes()).strip().splitlines()
            raise GitError(lines[-1] if lines else "git log failed")


def _lines(stream: IO[bytes]) -> Iterator[bytes]:
    """The stream's lines, each cut at LINE bytes (the rest of a longer one is dropped)."""
    whole = True
    while chunk := stream.readline(LINE):
        if whole:
            yield chunk
        whole = chunk.endswith(b"\n")


def _parse(stream: IO[bytes], token: bytes) -> Iterator[Commit]:
    commit: Commit | None = None
    header: list[bytes] | None = None  # a header still being read (the message spans lines)
    current: FileChange | None = None
    for line in _lines(stream):
        if header is not None:
            header.append(line)
            if line.rstrip(b"\n").endswith(token):
                commit, current, header = _header(b"".join(header), token), None, None
            continue
        if line.startswith(token):
            if commit is not None:
                yield commit
            commit, current = None, None
            if line.rstrip(b"\n").endswith(token) and len(line.rstrip(b"\n")) > len(token):
                commit = _header(line, token)
            else:
                header = [line]
            continue
        if commit is not None:
            current = _patch_line(commit, current, line)
    if commit is not None:
        yield commit


def _header(raw: bytes, token: bytes) -> Commit:
    body = raw.rstrip(b"\n")[len(token) : -len(token)]
    sha, parents, author, email, stamp, message = body.split(b"\0", 5)
    return Commit(
        sha=decode(sha),
        parents=decode(parents).split(),
        author=decode(author).strip(),
        email=decode(email).strip(),
        authored_at=int(stamp or 0),
        message=decode(message).replace("\r\n", "\n").strip(),
    )


def _patch_line(commit: Commit, current: FileChange | None, line: bytes) -> FileChange | None:
    """Fold one patch line into `commit`; the file the next lines belong to. A hunk's header
    gives its line counts (`-U0`: the hunk is nothing but changed lines), so the lines
    themselves, whatever they hold, are never looked at."""
    if line.startswith(b"diff --git "):
        change = FileChange(path=_diff_path(line[len(b"diff --git ") :].rstrip(b"\n")))
        if len(commit.files) < FILES:
            commit.files.append(change)
        else:
            commit.more_files += 1
        return change
    if current is None or line[:1] in (b"+", b"-", b" ", b"\\"):
        return current
    if line.startswith(b"@@"):
        counts = _HUNK.match(line)
        if counts is not None:
            current.removed += int(counts.group(1) or 1)
            current.added += int(counts.group(2) or 1)
        _hunk_symbol(commit, current, line)
    elif line.startswith(b"rename from "):
        current.old_path, current.status = _path(line[12:].rstrip(b"\n")), "renamed"
    elif line.startswith(b"rename to "):
        current.path = _path(line[10:].rstrip(b"\n"))
    elif line.startswith(b"new file mode"):
        current.status = "added"
    elif line.startswith(b"deleted file mode"):
        current.status = "deleted"
    return current


_ESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13}


def _path(raw: bytes) -> str:
    """A path as git prints it: C-quoted ("a\\tb", octal bytes) when it holds odd bytes."""
    if not (raw.startswith(b'"') and raw.endswith(b'"') and len(raw) > 1):
        return decode(raw)
    out, text, i = bytearray(), raw[1:-1], 0
    while i < len(text):
        char = text[i : i + 1]
        if char == b"\\" and i + 1 < len(text):
            following = text[i + 1 : i + 2]
            if following.isdigit() and len(text) >= i + 4:
                out.append(int(text[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_ESCAPES.get(following, following[0]))
            i += 2
            continue
        out += char
        i += 1
    return decode(bytes(out))


def _diff_path(names: bytes) -> str:
    """The path of a `diff --git a/X b/X` header (a rename's own lines correct it): the two
    names are equal but for their prefix, which finds the split even in a path holding " b/"."""
    if names.startswith(b'"'):
        end = names.find(b'" ', 1)
        while end > 0 and names[end - 1 : end] == b"\\":
            end = names.find(b'" ', end + 1)
        first = _path(names[: end + 1]) if end > 0 else _path(names)
        return first[2:] if first.startswith("a/") else first
    half = (len(names) - 1) // 2  # "a/" + X + " b/" + X
    if names.startswith(b"a/") and names[half : half + 3] == b" b/":
        return decode(names[half + 3 :])
    split = names.find(b" b/")
    return decode(names[split + 3 :] if split > 0 else names)


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
