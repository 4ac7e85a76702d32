"""Shell command lines read as data: the simple commands in a line (wrappers, `bash -c`,
heredocs, redirections and comments taken apart), and the files a line plainly reads.

Relative paths in a command are taken relative to the command's directory
(`cd src && cat a.py` → `src/a.py`), and skipped when that directory is unknown.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator

from claude_mem.pipeline.tools.paths import is_literal, path_value
from claude_mem.pipeline.tools.programs import has_role, known

MAX_COMMAND_CHARS = 20_000  # longer commands are cut before parsing: parsing stays cheap
MAX_DEPTH = 3  # `bash -c "bash -c ..."` opened up this deep
_PUNCTUATION = frozenset("();<>|&\n")
_HEREDOC = re.compile(r"(?<!<)<<(?!<)-?\s*(['\"]?)([A-Za-z_][\w.-]*)\1")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")


def shell_commands(command: str) -> list[list[str]]:
    """The simple commands in a command line, as argument lists, in order.

    Heredoc bodies, redirections and their targets, leading `VAR=x` and wrappers (`sudo`,
    `env`, `time`...) are dropped; `bash -c SCRIPT` is opened up. Unparseable text gives [].
    """
    return _commands(command, depth=0)


def _commands(command: str, depth: int) -> list[list[str]]:
    if len(command) > MAX_COMMAND_CHARS:  # keep whole lines only: a cut word is no path
        command = command[: max(command.rfind("\n", 0, MAX_COMMAND_CHARS), 0)]
    result: list[list[str]] = []
    for words in _split(_tokens(_strip_heredocs(command))):
        argv = _unwrap(words)
        if not argv:
            continue
        script = _inner_script(argv)
        if script is not None and depth < MAX_DEPTH:
            result.extend(_commands(script, depth + 1))
        else:
            result.append(argv)
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


def _split(tokens: list[str]) -> Iterator[list[str]]:
    """Group tokens into simple commands, dropping redirections and `# comments`."""
    argv: list[str] = []
    redirect = False  # the next token is a redirection's target
    in_comment = False
    for token in tokens:
        operator = bool(token) and set(token) <= _PUNCTUATION
        if operator and "<" not in token and ">" not in token:
            yield argv
            argv, redirect, in_comment = [], False, False
        elif in_comment:
            continue
        elif redirect:
            redirect = False
        elif operator:
            if argv and argv[-1].isdigit():
                argv.pop()  # the fd number of `2>` belongs to the operator
            redirect = True
        elif token.startswith("#"):
            in_comment = True
        else:
            argv.append(token)
    yield argv


def _unwrap(argv: list[str]) -> list[str]:
    """Drop leading `VAR=value` assignments and wrapper programs (with their flags)."""
    index = 0
    wrapped = False
    while index < len(argv):
        word = argv[index]
        entry = known(word)
        wrapper = "wrapper" in entry.roles
        if wrapper and entry.operands and not wrapped:  # `timeout DURATION COMMAND`
            index += 1 + entry.operands
            wrapped = True
        elif (
            _ASSIGNMENT.match(word)
            or (wrapper and not entry.operands)
            or (wrapped and word.startswith("-"))
        ):
            index += 1
            wrapped = wrapped or wrapper
        else:
            break
    return argv[index:]


def _inner_script(argv: list[str]) -> str | None:
    """The script of `bash -c SCRIPT` (also `-lc`, `-ic`...), else None."""
    if not has_role(program(argv), "shell"):
        return None
    for index, word in enumerate(argv[1:-1], start=1):
        if word.startswith("-") and not word.startswith("--") and word.endswith("c"):
            return argv[index + 1]
    return None


def program(argv: list[str]) -> str:
    """The program's base name: `/usr/bin/cat` → `cat`."""
    return posixpath.basename(argv[0]) if argv else ""


def _reader_args(argv: list[str]) -> list[str]:
    """The files a plainly reading command (`cat`, `head -n 5`, `sed -n 1,9p`...) reads."""
    name = program(argv)
    if name == "sed":
        return _sed_args(argv[1:])
    entry = known(name)
    if "reader" not in entry.roles:
        return []
    files: list[str] = []
    skip = False
    for word in argv[1:]:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in entry.value_flags
        elif is_literal(word):
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
        elif is_literal(word):
            files.append(word)
    return files


def _cd_target(argv: list[str], base: str | None) -> str | None:
    """The directory after `cd ARG`; None when it can't be known."""
    args = [word for word in argv[1:] if not word.startswith("-")]
    if len(args) != 1 or not is_literal(args[0]) or args[0].startswith("~"):
        return None
    target = args[0]
    if target.startswith("/"):
        return target
    return None if base is None else posixpath.normpath(posixpath.join(base, target))


def _in_dir(path: str, base: str | None) -> str:
    """`path` from a shell command run in `base` (relative to cwd, or absolute)."""
    if path.startswith(("/", "~")) or not base or base == ".":
        return path
    return posixpath.join(base, path)


def shell_reads(command: str, base: str | None = ".") -> list[str]:
    """Files that `command`, run in `base`, plainly reads (as written, joined to `base`)."""
    found: list[str] = []
    for argv in shell_commands(command):
        if program(argv) in ("cd", "pushd"):
            base = _cd_target(argv, base)
            continue
        for word in _reader_args(argv):
            if path_value(word) and (word.startswith("/") or base is not None):
                found.append(_in_dir(word, base))
    return found
