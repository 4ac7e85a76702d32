"""Which files a tool event read or modified, decided from the recorded input alone.

A compressor's (or a model's) own account of what it touched is never trusted: file evidence
comes only from the tool input the host sent (file path fields, patch text, plainly reading
shell commands). Every consumer asks this module, so the answer is the same everywhere.

Path rule, so that one file is one string everywhere: paths keep the form they were given
in, lexically normalised (`./src//a.py` → `src/a.py`); an absolute path inside the event's
cwd becomes relative to it (`/home/dev/proj/src/a.py` with cwd `/home/dev/proj` →
`src/a.py`); an absolute path outside it stays absolute; paths with `~` or backslashes stay
exactly as given. Relative paths in a shell command are taken relative to the command's
directory (`cd src && cat a.py` → `src/a.py`), and skipped when that directory is unknown.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from claude_mem.pipeline.providers.base import ToolEvent

MAX_PATH_CHARS = 4096
MAX_PATHS = 500  # per event
MAX_COMMAND_CHARS = 20_000  # longer commands are cut before parsing: parsing stays cheap
MAX_PATCH_LINES = 200_000
MAX_KEPT_PATCH_LINES = 2_000  # per file, kept for symbol lookups; counts stay exact

# Tool names, canonicalised (lower case, letters and digits only), to what they do.
_KINDS: dict[str, str] = {
    "edit": "edit",
    "multiedit": "edit",
    "replace": "edit",
    "editfile": "edit",
    "strreplace": "edit",
    "write": "write",
    "writefile": "write",
    "createfile": "write",
    "notebookedit": "notebook",
    "applypatch": "patch",
    "read": "read",
    "readfile": "read",
    "notebookread": "read",
    "readmanyfiles": "read_many",
    "readmultiplefiles": "read_many",
    "grep": "grep",
    "searchfilecontent": "grep",
    "grepsearch": "grep",
    "glob": "glob",
    "searchfiles": "glob",
    "ls": "ls",
    "listdirectory": "ls",
    "listdir": "ls",
    "directorytree": "ls",
    "webfetch": "fetch",
    "websearch": "websearch",
    "googlewebsearch": "websearch",
    "task": "task",
    "agent": "task",
    "todowrite": "noise",
    "todoread": "noise",
    "writetodos": "noise",
    "updateplan": "noise",
    "killshell": "noise",
    "killbash": "noise",
    "bash": "shell",
    "shell": "shell",
    "execcommand": "shell",
    "runshellcommand": "shell",
    "localshell": "shell",
}
# An MCP tool counts as a file tool only for these kinds (e.g. mcp__filesystem__read_file).
_MCP_FILE_KINDS = frozenset({"edit", "write", "read", "read_many", "ls", "glob", "grep"})
MODIFYING_KINDS = frozenset({"edit", "write", "notebook", "patch"})
READ_ONLY_KINDS = frozenset({"read", "read_many", "grep", "glob", "ls", "fetch", "websearch"})

_MODIFIED_KEYS = ("file_path", "filePath", "notebook_path", "notebookPath", "path")
_READ_KEYS = ("file_path", "filePath", "absolute_path", "notebook_path", "notebookPath", "path")
_WORKDIR_KEYS = ("workdir", "cwd", "dir_path", "directory")
_PATCH_KEYS = ("command", "input", "patch", "diff", "content")

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
_WRAPPERS = frozenset({"sudo", "env", "time", "nice", "nohup", "command", "builtin", "exec"})
_READERS = frozenset({"cat", "head", "tail", "less", "more", "bat", "batcat", "nl"})
_VALUE_FLAGS = {
    "head": frozenset({"-n", "-c", "--lines", "--bytes"}),
    "tail": frozenset({"-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid"}),
    "bat": frozenset({"-r", "--line-range", "-l", "--language", "-H", "--highlight-line"}),
    "batcat": frozenset({"-r", "--line-range", "-l", "--language", "-H", "--highlight-line"}),
    "nl": frozenset({"-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"}),
}
_READ_ONLY_PROGRAMS = frozenset(
    _READERS
    | {"ls", "tree", "pwd", "wc", "grep", "egrep", "rg", "ag", "fd", "which", "file", "stat"}
    | {"du", "df", "cd", "echo", "true", "diff", "sort", "uniq", "cut", "jq"}
)
_READ_ONLY_GIT = frozenset(
    {"status", "diff", "log", "show", "blame", "grep", "ls-files", "rev-parse", "shortlog"}
)
_UNSAFE_CHARS = frozenset("$`*?[]{}")
_PUNCTUATION = frozenset("();<>|&\n")
_HEREDOC = re.compile(r"(?<!<)<<(?!<)-?\s*(['\"]?)([A-Za-z_][\w.-]*)\1")
_PATCH_HINT = re.compile(
    r"^(?:\*\*\* (?:Begin Patch|(?:Update|Add|Delete) File: )|\+\+\+ )", re.MULTILINE
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")


@dataclass(frozen=True, slots=True)
class PatchFile:
    """One file in a patch: what happened to it, and the lines added and removed."""

    action: str  # "update" | "add" | "delete"
    path: str
    move_to: str | None = None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    added_count: int = 0
    removed_count: int = 0


# --- tool names -------------------------------------------------------------------------


def canonical_tool(name: object) -> str:
    """Lower case, letters and digits only: `read_file`, `ReadFile`, `read-file` are one."""
    return re.sub(r"[^a-z0-9]", "", name.lower()) if isinstance(name, str) else ""


def tool_kind(name: object) -> str:
    """What a tool does: edit, write, notebook, patch, read, read_many, grep, glob, ls, fetch,
    websearch, task, noise, shell, mcp, or other. Names are matched loosely across hosts."""
    if not isinstance(name, str):
        return "other"
    raw = name.strip()
    if raw.lower().startswith("mcp__"):
        kind = _KINDS.get(canonical_tool(raw.split("__")[-1]), "")
        return kind if kind in _MCP_FILE_KINDS else "mcp"
    return _KINDS.get(canonical_tool(raw), "other")


# --- paths ------------------------------------------------------------------------------


def normalize_path(path: str, cwd: str | None) -> str:
    """`path` as evidence: lexically normalised, and relative to `cwd` when inside it.

    `/home/dev/proj/src/a.py` with cwd `/home/dev/proj` → `src/a.py`; outside paths stay
    absolute, relative ones stay relative; `~` and backslash paths are kept as given.
    """
    text = path.strip()
    if "\\" in text or text.startswith("~"):
        return text
    text = posixpath.normpath(text)
    base = _absolute_dir(cwd)
    if base and text.startswith("/"):
        if text == base:
            return "."
        if text.startswith(base + "/"):
            return text[len(base) + 1 :]
    return text


def _absolute_dir(cwd: str | None) -> str | None:
    """`cwd` normalised, if it is a usable absolute POSIX directory other than `/`."""
    if not isinstance(cwd, str):
        return None
    text = cwd.strip()
    if not text.startswith("/") or "\\" in text:
        return None
    text = posixpath.normpath(text)
    return None if text in ("/", "//") else text


def _path_value(value: object) -> str | None:
    """A value that can be a file path: a short single-line string that is not a URL."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > MAX_PATH_CHARS or "\n" in text or "\0" in text or "://" in text:
        return None
    return text


def _in_dir(path: str, base: str | None) -> str:
    """`path` from a shell command run in `base` (relative to cwd, or absolute)."""
    if path.startswith(("/", "~")) or not base or base == ".":
        return path
    return posixpath.join(base, path)


# --- event access -----------------------------------------------------------------------


def input_dict(event: ToolEvent) -> dict[str, Any]:
    """The tool input as a dict: JSON text is decoded, any other shape gives {}."""
    value = event.tool_input
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to matter
            return {}
    return value if isinstance(value, dict) else {}


def command_text(event: ToolEvent) -> str:
    """A shell event's command line; a `[shell, -c, script]` list gives the script."""
    value: object = event.tool_input
    if isinstance(value, str) and not value.lstrip().startswith("{"):
        return value
    data = input_dict(event)
    value = data.get("command", data.get("cmd"))
    if isinstance(value, list) and value and all(isinstance(part, str) for part in value):
        argv = [str(part) for part in value]
        shell_form = len(argv) == 3 and posixpath.basename(argv[0]) in _SHELLS
        if shell_form and argv[1].startswith("-") and argv[1].endswith("c"):
            return argv[2]
        return shlex.join(argv)
    return value if isinstance(value, str) else ""


def workdir(event: ToolEvent) -> str | None:
    """The directory a shell event ran in, if its input names one."""
    data = input_dict(event)
    for key in _WORKDIR_KEYS:
        path = _path_value(data.get(key))
        if path:
            return path
    return None


# --- shell parsing ----------------------------------------------------------------------


def shell_commands(command: str) -> list[list[str]]:
    """The simple commands in a command line, as argument lists, in order.

    Heredoc bodies, redirections and their targets, leading `VAR=x` and wrappers (`sudo`,
    `env`, `time`...) are dropped; `bash -c SCRIPT` is opened up. Unparseable text gives [].
    """
    return [cmd for cmd, _ in _commands(command, depth=0)]


def _commands(command: str, depth: int) -> list[tuple[list[str], bool]]:
    """(argv, writes to a file by redirection) for each simple command."""
    if len(command) > MAX_COMMAND_CHARS:  # keep whole lines only: a cut word is no path
        command = command[: max(command.rfind("\n", 0, MAX_COMMAND_CHARS), 0)]
    tokens = _tokens(_strip_heredocs(command))
    result: list[tuple[list[str], bool]] = []
    for words, writes in _split(tokens):
        argv = _unwrap(words)
        if not argv:
            continue
        script = _inner_script(argv)
        if script is not None and depth < 3:
            result.extend(_commands(script, depth + 1))
        else:
            result.append((argv, writes))
    return result


def _strip_heredocs(text: str) -> str:
    """`text` without heredoc bodies, which are data, not commands."""
    if "<<" not in text:
        return text
    lines = text.split("\n")
    kept: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        kept.append(line)
        index += 1
        for match in _HEREDOC.finditer(line):
            delimiter = match.group(2)
            while index < len(lines) and lines[index].strip() != delimiter:
                index += 1
            index += 1
    return "\n".join(kept)


def _tokens(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes or a trailing escape: not a command we can read
        return []


def _split(tokens: list[str]) -> Iterator[tuple[list[str], bool]]:
    """Group tokens into simple commands, dropping redirections and `# comments`."""
    argv: list[str] = []
    writes = False
    redirect: str | None = None  # the operator whose target comes next
    in_comment = False
    for token in tokens:
        operator = bool(token) and set(token) <= _PUNCTUATION
        if operator and "<" not in token and ">" not in token:
            yield argv, writes
            argv, writes, redirect, in_comment = [], False, None, False
        elif in_comment:
            continue
        elif redirect is not None:
            to_file = token not in ("/dev/null", "-") and not token.isdigit()
            writes = writes or (">" in redirect and to_file)
            redirect = None
        elif operator:
            if argv and argv[-1].isdigit():
                argv.pop()  # the fd number of `2>` belongs to the operator
            redirect = token
        elif token.startswith("#"):
            in_comment = True
        else:
            argv.append(token)
    yield argv, writes


def _unwrap(argv: list[str]) -> list[str]:
    """Drop leading `VAR=value` assignments and wrapper programs (with their flags)."""
    index = 0
    wrapped = False
    while index < len(argv):
        word = argv[index]
        if word == "timeout" and not wrapped:
            index += 2  # `timeout DURATION COMMAND`
            wrapped = True
        elif _ASSIGNMENT.match(word) or word in _WRAPPERS or (wrapped and word.startswith("-")):
            index += 1
            wrapped = wrapped or word in _WRAPPERS
        else:
            break
    return argv[index:]


def _inner_script(argv: list[str]) -> str | None:
    """The script of `bash -c SCRIPT` (also `-lc`, `-ic`...), else None."""
    if posixpath.basename(argv[0]) not in _SHELLS:
        return None
    for index, word in enumerate(argv[1:-1], start=1):
        if word.startswith("-") and not word.startswith("--") and word.endswith("c"):
            return argv[index + 1]
    return None


def program(argv: list[str]) -> str:
    """The program's base name: `/usr/bin/cat` → `cat`."""
    return posixpath.basename(argv[0]) if argv else ""


def _safe_arg(word: str) -> bool:
    """An argument that is a literal path, not a glob, variable or substitution."""
    return bool(word) and word != "-" and not (_UNSAFE_CHARS & set(word))


def _reader_args(argv: list[str]) -> list[str]:
    """The files a plainly reading command (`cat`, `head -n 5`, `sed -n 1,9p`...) reads."""
    name = program(argv)
    if name == "sed":
        return _sed_args(argv[1:])
    if name not in _READERS:
        return []
    value_flags = _VALUE_FLAGS.get(name, frozenset())
    files: list[str] = []
    skip = False
    for word in argv[1:]:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in value_flags
        elif _safe_arg(word):
            files.append(word)
    return files


def _sed_args(args: list[str]) -> list[str]:
    """Files of `sed -n SCRIPT FILE...`: printing without editing in place is a read."""
    if "-n" not in args or any(a.startswith(("-i", "--in-place")) for a in args):
        return []
    files: list[str] = []
    script_given = False
    skip = False
    for word in args:
        if skip:
            skip = False
        elif word in ("-e", "--expression", "-f", "--file"):
            skip = script_given = True
        elif word.startswith("-"):
            continue
        elif not script_given:
            script_given = True
        elif _safe_arg(word):
            files.append(word)
    return files


def _cd_target(argv: list[str], base: str | None) -> str | None:
    """The directory after `cd ARG`; None when it can't be known."""
    args = [word for word in argv[1:] if not word.startswith("-")]
    if len(args) != 1 or not _safe_arg(args[0]) or args[0].startswith("~"):
        return None
    target = args[0]
    if target.startswith("/"):
        return target
    return None if base is None else posixpath.normpath(posixpath.join(base, target))


def shell_reads(command: str, base: str | None = ".") -> list[str]:
    """Files that `command`, run in `base`, plainly reads (as written, joined to `base`)."""
    found: list[str] = []
    for argv in shell_commands(command):
        if program(argv) in ("cd", "pushd"):
            base = _cd_target(argv, base)
            continue
        for word in _reader_args(argv):
            if _path_value(word) and (word.startswith("/") or base is not None):
                found.append(_in_dir(word, base))
    return found


# --- patches ----------------------------------------------------------------------------


def parse_patch(text: str) -> list[PatchFile]:
    """Files in an `*** Begin Patch` envelope or a unified diff, in order."""
    if not isinstance(text, str):
        return []
    lines = text.split("\n", MAX_PATCH_LINES)[:MAX_PATCH_LINES]
    if any(line.startswith("*** ") and " File: " in line for line in lines):
        return _parse_envelope(lines)
    return _parse_unified(lines)


class _FileBuilder:
    """Accumulates one file's patch lines."""

    def __init__(self, action: str, path: str) -> None:
        self.action, self.path = action, path
        self.move_to: str | None = None
        self.added: list[str] = []
        self.removed: list[str] = []
        self.added_count = self.removed_count = 0

    def line(self, line: str) -> None:
        if line.startswith("+"):
            self.added_count += 1
            if len(self.added) < MAX_KEPT_PATCH_LINES:
                self.added.append(line[1:])
        elif line.startswith("-"):
            self.removed_count += 1
            if len(self.removed) < MAX_KEPT_PATCH_LINES:
                self.removed.append(line[1:])

    def build(self) -> PatchFile:
        return PatchFile(
            self.action,
            self.path,
            self.move_to,
            tuple(self.added),
            tuple(self.removed),
            self.added_count,
            self.removed_count,
        )


_ENVELOPE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+)$")


def _parse_envelope(lines: list[str]) -> list[PatchFile]:
    files: list[_FileBuilder] = []
    for raw in lines:
        line = raw.rstrip("\r")
        match = _ENVELOPE.match(line)
        if match:
            path = _path_value(match.group(2))
            if path:
                files.append(_FileBuilder(match.group(1).lower(), path))
            continue
        if not files:
            continue
        if line.startswith("*** Move to: "):
            files[-1].move_to = _path_value(line[len("*** Move to: ") :])
        elif not line.startswith("*** "):
            files[-1].line(line)
    return [builder.build() for builder in files]


def _diff_path(header: str) -> str | None:
    """The path in a `--- a/x` or `+++ b/x` header line (None for /dev/null)."""
    path = header[4:].split("\t", maxsplit=1)[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return _path_value(path)


def _parse_unified(lines: list[str]) -> list[PatchFile]:
    files: list[_FileBuilder] = []
    index = 0
    while index < len(lines):
        line = lines[index].rstrip("\r")
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line.startswith("--- ") and following.startswith("+++ "):
            old, new = _diff_path(line), _diff_path(following.rstrip("\r"))
            if new or old:
                action = "add" if old is None else "delete" if new is None else "update"
                files.append(_FileBuilder(action, new or old or ""))
            index += 2
            continue
        if files and not line.startswith("\\"):
            files[-1].line(line)
        index += 1
    return [builder.build() for builder in files]


def _looks_like_patch(text: str) -> bool:
    return bool(_PATCH_HINT.search(text))


def patch_texts(event: ToolEvent) -> list[str]:
    """The patch text(s) an event applies: apply_patch input, or a patch fed to a shell."""
    kind = tool_kind(event.tool_name)
    if kind == "shell":
        command = command_text(event)
        if "*** Begin Patch" in command:
            return [command]
        programs = {program(argv) for argv in shell_commands(command)}
        applies = "patch" in programs or "apply" in command.split()
        return [command] if applies and "\n+++ " in command else []
    if kind != "patch":
        return []
    value = event.tool_input
    if isinstance(value, str) and not value.lstrip().startswith("{"):
        return [value] if _looks_like_patch(value) else []
    data = input_dict(event)
    texts: list[str] = []
    for key in _PATCH_KEYS:
        item = data.get(key)
        parts = item if isinstance(item, list) else [item]
        texts.extend(p for p in parts if isinstance(p, str) and _looks_like_patch(p))
    return texts


def patch_files(event: ToolEvent) -> list[PatchFile]:
    """Every file in the patches an event applies, paths under the path rule."""
    found: list[PatchFile] = []
    for text in patch_texts(event):
        for item in parse_patch(text):
            move = normalize_path(item.move_to, event.cwd) if item.move_to else None
            found.append(
                PatchFile(
                    item.action,
                    normalize_path(item.path, event.cwd),
                    move,
                    item.added,
                    item.removed,
                    item.added_count,
                    item.removed_count,
                )
            )
    return found


# --- the evidence -----------------------------------------------------------------------


def _first_path(data: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        path = _path_value(data.get(key))
        if path:
            return path
    return None


def _dedup(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def files_modified(event: ToolEvent) -> list[str]:
    """Files the event's input says it wrote: edit/write tool paths and patch targets."""
    kind = tool_kind(event.tool_name)
    found: list[str] = []
    if kind in ("edit", "write", "notebook"):
        path = _first_path(input_dict(event), _MODIFIED_KEYS)
        if path:
            found.append(normalize_path(path, event.cwd))
    elif kind in ("patch", "shell"):
        for item in patch_files(event):
            found.append(item.path)
            if item.move_to:
                found.append(item.move_to)
    return _dedup(found)


def files_read(event: ToolEvent) -> list[str]:
    """Files the event's input says it read: read tools, and plainly reading shell commands."""
    kind = tool_kind(event.tool_name)
    data = input_dict(event)
    found: list[str] = []
    if kind in ("read", "read_many"):
        path = _first_path(data, _READ_KEYS)
        if path:
            found.append(path)
        paths = data.get("paths")
        if isinstance(paths, list):
            found.extend(p for p in map(_path_value, paths[:MAX_PATHS]) if p and _safe_arg(p))
    elif kind == "shell":
        command = command_text(event)
        if "*** Begin Patch" not in command:
            found.extend(shell_reads(command, workdir(event) or "."))
    return _dedup(normalize_path(path, event.cwd) for path in found)


def evidence(events: Iterable[ToolEvent]) -> tuple[list[str], list[str]]:
    """(files read, files modified) across `events`, each deduplicated in first-seen order."""
    read: list[str] = []
    modified: list[str] = []
    for event in events:
        read.extend(files_read(event))
        modified.extend(files_modified(event))
    return _dedup(read), _dedup(modified)


def is_read_only(event: ToolEvent) -> bool:
    """True when the event can't have changed any file: a read/search/list/web tool, or a
    shell line made only of known read-only programs, with no redirection into a file."""
    kind = tool_kind(event.tool_name)
    if kind in READ_ONLY_KINDS:
        return True
    if kind != "shell" or patch_texts(event):
        return False
    commands = _commands(command_text(event), depth=0)
    return bool(commands) and all(not writes and _read_only_argv(argv) for argv, writes in commands)


def _read_only_argv(argv: list[str]) -> bool:
    name = program(argv)
    if name == "git":
        sub = [word for word in argv[1:] if not word.startswith("-")]
        return bool(sub) and sub[0] in _READ_ONLY_GIT
    if name == "sed":
        return not any(word.startswith(("-i", "--in-place")) for word in argv[1:])
    if name == "find":
        return not {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint"} & set(argv)
    return name in _READ_ONLY_PROGRAMS
