"""Shell commands recognised from their argument lists and results: which programs ran,
what the run reported, and whether it failed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from claude_mem.pipeline.local.responses import response_text, text_value
from claude_mem.pipeline.local.text import (
    as_int,
    as_str,
    bounded,
    clip,
    nonblank_lines,
    strip_wrappers,
    word_pattern,
)
from claude_mem.pipeline.tools.programs import all_have, has_role
from claude_mem.pipeline.tools.shell import program
from claude_mem.text import counted

_EXIT = re.compile(
    r"^(?:exit code:?|process exited with code|exit status:?)[ \t]*(-?\d{1,6})",
    re.IGNORECASE | re.MULTILINE,
)
_FAILURE_TEXT = re.compile(
    r"^(?:Traceback \(most recent call last\)|(?:error|fatal|Error|ERROR)(?:\[\w+\])?:|"
    r"npm ERR!|.*: command not found|.*No such file or directory)",
    re.MULTILINE,
)
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b:?")
_ERROR_WORDS = word_pattern(
    r"error|fatal|cannot|can't|not found|no such file|failed|denied|refused|exception"
)
_SEARCH_VALUE_FLAGS = frozenset(
    {"-f", "-m", "-A", "-B", "-C", "-g", "-t", "-T", "-j", "-M", "--glob", "--type"}
    | {"--type-not", "--max-count", "--context", "--after-context", "--before-context"}
    | {"--include", "--exclude", "--exclude-dir", "--max-depth", "--threads", "--file"}
)


@dataclass(frozen=True, slots=True)
class Run:
    """A shell command's result, whatever shape the host reported it in."""

    output: str  # stdout, stderr and any error text, host wrappers removed
    stderr: str
    exit_code: int | None
    interrupted: bool
    error: str


def shell_run(response: object) -> Run:
    """The run a shell tool's response reports (a plain string, or a host's dict)."""
    if isinstance(response, str):
        return _make_run(response, "", None, False, "")
    if not isinstance(response, dict):
        return _make_run("", "", None, False, "")
    stdout = response_text(response) or text_value(response.get("returnDisplay"))
    error = response.get("error")
    if isinstance(error, dict):
        error = error.get("message")
    code = next(
        (
            as_int(response.get(key))
            for key in ("exit_code", "exitCode", "returncode", "return_code")
            if as_int(response.get(key)) is not None
        ),
        None,
    )
    interrupted = response.get("interrupted") is True or response.get("is_interrupt") is True
    failed_flag = response.get("is_error") is True or response.get("isError") is True
    message = as_str(error) or ("the command reported an error" if failed_flag else "")
    return _make_run(stdout, as_str(response.get("stderr")), code, interrupted, message)


def _make_run(stdout: str, stderr: str, code: int | None, interrupted: bool, error: str) -> Run:
    stdout, stderr, error = bounded(stdout), bounded(stderr), bounded(error)
    if code is None:
        found = _EXIT.search(stdout) or _EXIT.search(error)
        code = int(found.group(1)) if found else None
    parts = [strip_wrappers(part) for part in (stdout, stderr, error) if part.strip()]
    return Run("\n".join(p for p in parts if p), stderr, code, interrupted, error.strip())


def run_failed(run: Run, argvs: list[list[str]]) -> bool:
    """Did the command fail? Exit code first; else host error, else the output's own words."""
    names = {program(argv) for argv in argvs}
    if run.interrupted:
        return True
    if run.exit_code is not None:
        return run.exit_code != 0 and not (
            run.exit_code == 1 and any(has_role(name, "exit_one_ok") for name in names)
        )
    if run.error:
        return True
    if names and all_have(names, "content", "noise"):
        return False
    return bool(_FAILURE_TEXT.search(run.output))


def error_line(run: Run) -> str:
    """The line that best says why a command failed."""
    lines = nonblank_lines(run.output)
    if any(line.startswith("Traceback") for line in lines):
        for line in reversed(lines):
            if EXCEPTION_LINE.match(line):
                return clip(line, 90)
    for line in lines:
        if _ERROR_WORDS.search(line) and not line.lower().startswith(("exit code", "warning")):
            return clip(re.sub(r"^(?:npm ERR!\s*)+", "", line), 90)
    tail = nonblank_lines(run.stderr) or lines
    if tail:
        return clip(tail[-1], 90)
    if run.interrupted:
        return "interrupted"
    return f"exit code {run.exit_code}" if run.exit_code is not None else "it reported an error"


def git_sub(argv: list[str]) -> tuple[str, list[str]]:
    """(subcommand, its arguments) of a git command; ('', []) for anything else."""
    if program(argv) != "git":
        return "", []
    index = 1
    while index < len(argv) and argv[index].startswith("-"):
        index += 2 if argv[index] in ("-C", "-c") else 1
    return (argv[index], argv[index + 1 :]) if index < len(argv) else ("", [])


def is_test(argv: list[str], depth: int = 0) -> bool:
    """Is this simple command a test run (pytest, npm test, go test, cargo test...)?"""
    name = program(argv)
    args = [word for word in argv[1:] if not word.startswith("-")]
    if has_role(name, "test"):
        return True
    if name.startswith("python") and "-m" in argv:
        index = argv.index("-m")
        return index + 1 < len(argv) and argv[index + 1] in ("pytest", "unittest", "nose2")
    if has_role(name, "test_runner") and args:
        head = args[0]
        if head in ("test", "t", "tests", "nextest") or (name == "make" and head == "check"):
            return True
        return head == "run" and len(args) > 1 and args[1].startswith("test")
    if has_role(name, "launcher") and args and depth < 3:
        start = argv.index(args[0]) + (1 if args[0] in ("run", "exec", "x") else 0)
        return is_test(argv[start:], depth + 1) if start < len(argv) else False
    return False


def search_args(argv: list[str]) -> tuple[str, list[str]]:
    """(pattern, paths) of a grep / rg / ag / git grep command."""
    words = git_sub(argv)[1] if program(argv) == "git" else argv[1:]
    pattern = ""
    paths: list[str] = []
    skip = ""
    for word in words:
        if skip:
            pattern = word if skip in ("-e", "--regexp") else pattern
            skip = ""
        elif word in ("-e", "--regexp") or word in _SEARCH_VALUE_FLAGS:
            skip = word
        elif word.startswith("-"):
            continue
        elif not pattern:
            pattern = word
        else:
            paths.append(word)
    return pattern, paths


def read_span(argv: list[str]) -> str:
    """'lines 1-80' for `sed -n 1,80p`, 'first 20 lines' for `head -n 20`, else ''."""
    name = program(argv)
    if name == "sed":
        for word in argv[1:]:
            match = re.fullmatch(r"'?(\d{1,7})(?:,(\d{1,7}|\$))?p'?", word)
            if match:
                end = match.group(2) or match.group(1)
                return f"lines {match.group(1)}-{'end' if end == '$' else end}"
    if name in ("head", "tail"):
        for index, word in enumerate(argv[1:], start=1):
            number = argv[index + 1] if word == "-n" and index + 1 < len(argv) else word[1:]
            if word.startswith("-") and number.lstrip("+").isdigit():
                which = "first" if name == "head" else "last"
                return f"{which} {counted(int(number.lstrip('+')), 'line')}"
    return ""
