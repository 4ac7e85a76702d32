"""The shell programs we recognise, once: each program with its roles and traits.

Shell parsing (wrappers, `bash -c`, plain reads) and the offline compressor (what a command
is, whether its exit code or output means failure) both ask this table, so a program is
added or corrected in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Role = Literal[
    "shell",  # runs the script given with `-c` (`bash -lc SCRIPT` is opened up)
    "wrapper",  # runs the command after it (`sudo`, `env`, `time`...); its flags are skipped
    "reader",  # prints the files it is given: a plain read (`sed` only with `-n`)
    "content",  # its output is content: error words in it are not a failure
    "exit_one_ok",  # exit code 1 is an answer (no match, differs), not a failure
    "search",  # searches file contents
    "list",  # lists folder entries
    "noise",  # moves around or waits; says nothing alone
    "test",  # a test runner by itself (`pytest`, `jest`...)
    "test_runner",  # runs tests with a subcommand (`npm test`, `go test`, `make check`...)
    "launcher",  # runs another program (`uv run pytest`, `npx jest`...)
    "changes",  # plainly changes files (`rm`, `mv`...)
    "installer",  # changes dependencies with an install verb (`pip install`...)
]


@dataclass(frozen=True, slots=True)
class Program:
    roles: frozenset[Role]
    value_flags: frozenset[str] = frozenset()  # a reader's flags whose value is no file
    operands: int = 0  # a wrapper's own words before the command (`timeout DURATION`)


def _p(*roles: Role, value_flags: Iterable[str] = (), operands: int = 0) -> Program:
    return Program(frozenset(roles), frozenset(value_flags), operands)


_HEAD_FLAGS = ("-n", "-c", "--lines", "--bytes")
_BAT_FLAGS = ("-r", "--line-range", "-l", "--language", "-H", "--highlight-line")

PROGRAMS: dict[str, Program] = {
    # shells and wrappers
    "sh": _p("shell"),
    "bash": _p("shell"),
    "zsh": _p("shell"),
    "dash": _p("shell"),
    "ksh": _p("shell"),
    "fish": _p("shell"),
    "sudo": _p("wrapper"),
    "env": _p("wrapper"),
    "time": _p("wrapper"),
    "nice": _p("wrapper"),
    "nohup": _p("wrapper"),
    "command": _p("wrapper"),
    "builtin": _p("wrapper"),
    "exec": _p("wrapper"),
    "timeout": _p("wrapper", operands=1),
    # reading, searching, listing
    "cat": _p("reader", "content"),
    "head": _p("reader", "content", value_flags=_HEAD_FLAGS),
    "tail": _p("reader", "content", value_flags=(*_HEAD_FLAGS, "-s", "--sleep-interval", "--pid")),
    "less": _p("reader", "content"),
    "more": _p("reader", "content"),
    "bat": _p("reader", "content", value_flags=_BAT_FLAGS),
    "batcat": _p("reader", "content", value_flags=_BAT_FLAGS),
    "nl": _p(
        "reader",
        "content",
        value_flags=("-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"),
    ),
    "sed": _p("reader", "content"),
    "grep": _p("search", "content", "exit_one_ok"),
    "egrep": _p("search", "content", "exit_one_ok"),
    "fgrep": _p("search", "content", "exit_one_ok"),
    "rg": _p("search", "content", "exit_one_ok"),
    "ag": _p("search", "content", "exit_one_ok"),
    "ack": _p("search"),
    "ls": _p("list", "content"),
    "tree": _p("list", "content"),
    "find": _p("list", "content"),
    "fd": _p("list", "content"),
    "dir": _p("list"),
    "echo": _p("content"),
    "git": _p("content"),
    "jq": _p("content"),
    "wc": _p("content"),
    "diff": _p("content", "exit_one_ok"),
    "cmp": _p("exit_one_ok"),
    "test": _p("exit_one_ok"),
    "[": _p("exit_one_ok"),
    # noise
    "cd": _p("noise"),
    "pushd": _p("noise"),
    "popd": _p("noise"),
    "pwd": _p("noise"),
    "clear": _p("noise"),
    "true": _p("noise"),
    ":": _p("noise"),
    "sleep": _p("noise"),
    # tests, build tools and package managers
    "pytest": _p("test"),
    "py.test": _p("test"),
    "jest": _p("test"),
    "vitest": _p("test"),
    "mocha": _p("test"),
    "rspec": _p("test"),
    "phpunit": _p("test"),
    "ctest": _p("test"),
    "tox": _p("test"),
    "nox": _p("test"),
    "ava": _p("test"),
    "karma": _p("test"),
    "nose2": _p("test"),
    "trial": _p("test"),
    "npm": _p("test_runner", "installer"),
    "yarn": _p("test_runner", "installer"),
    "pnpm": _p("test_runner", "installer"),
    "cargo": _p("test_runner", "installer"),
    "go": _p("test_runner", "installer"),
    "bun": _p("test_runner"),
    "deno": _p("test_runner"),
    "dotnet": _p("test_runner"),
    "mix": _p("test_runner"),
    "mvn": _p("test_runner"),
    "gradle": _p("test_runner"),
    "gradlew": _p("test_runner"),
    "make": _p("test_runner"),
    "swift": _p("test_runner"),
    "flutter": _p("test_runner"),
    "dart": _p("test_runner"),
    "zig": _p("test_runner"),
    "just": _p("test_runner"),
    "uv": _p("launcher", "installer"),
    "poetry": _p("launcher", "installer"),
    "pipenv": _p("launcher"),
    "hatch": _p("launcher"),
    "pdm": _p("launcher"),
    "npx": _p("launcher"),
    "pnpx": _p("launcher"),
    "bunx": _p("launcher"),
    "bundle": _p("launcher"),
    "rye": _p("launcher"),
    "pip": _p("installer"),
    "pip3": _p("installer"),
    # plain changes
    "mkdir": _p("changes"),
    "rm": _p("changes"),
    "rmdir": _p("changes"),
    "mv": _p("changes"),
    "cp": _p("changes"),
    "touch": _p("changes"),
    "chmod": _p("changes"),
    "ln": _p("changes"),
}
_UNKNOWN = Program(frozenset())


def known(name: str) -> Program:
    """The table's entry for a program's base name (no roles when we don't know it)."""
    return PROGRAMS.get(name, _UNKNOWN)


def has_role(name: str, *roles: Role) -> bool:
    """Does the program play any of `roles`?"""
    return not known(name).roles.isdisjoint(roles)


def all_have(names: Iterable[str], *roles: Role) -> bool:
    """Does every program in `names` play one of `roles` (True for none)?"""
    return all(has_role(name, *roles) for name in names)
