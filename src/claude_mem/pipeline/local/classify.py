"""Observation types by rule: when an edit is a bugfix, refactor or feature, and which
commands and tools plainly change something."""

from __future__ import annotations

import re

from claude_mem.pipeline.local.note import Scope
from claude_mem.pipeline.local.shell import git_sub
from claude_mem.pipeline.local.text import word_pattern
from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.programs import has_role
from claude_mem.pipeline.tools.shell import program
from claude_mem.vocabulary import ObservationType

FIX_WORDS = word_pattern(
    r"fix(?:e[sd]|ing)?|bugs?|bugfix|hotfix|errors?|crash(?:es|ed|ing)?|"
    r"fail(?:s|ed|ing|ures?)?|regressions?|broken"
)
_FIX_COMMENT = word_pattern(r"fix(?:e[sd])?|bugs?|crash|regression|workaround")
_REFACTOR_WORDS = word_pattern(
    r"renam(?:e[sd]?|ing)|refactor(?:s|ed|ing)?|extract(?:s|ed|ing)?|"
    r"mov(?:e[sd]?|ing)|clean[ -]?up|simplif(?:y|ied|ies)|restructur(?:e[sd]?|ing)|tidy"
)
_FEATURE_WORDS = word_pattern(
    r"add(?:s|ed|ing)?|implement(?:s|ed|ing)?|new|support(?:s|ed|ing)?|"
    r"introduc(?:e[sd]?|ing)|feature|enable"
)
# Tests and docs: a change to them alone documents or checks work, it fixes nothing itself.
_SUPPORTING = re.compile(
    r"(?:^|/)(?:tests?|spec|docs?)/|(?:^|/)test_[^/]*$|_(?:test|spec)\.\w+$|"
    r"\.(?:md|rst|txt|adoc)$|(?:^|/)(?:README|CHANGELOG|CONTRIBUTING)[^/]*$",
    re.IGNORECASE,
)
_COMMENT_LINE = re.compile(r"^\s*(?:#|//|/\*|\*|--|;)")
_INSTALL_VERBS = frozenset({"install", "add", "remove", "uninstall", "i", "get", "sync"})
_GIT_CHANGES = frozenset(
    {"add", "checkout", "switch", "merge", "rebase", "reset", "stash", "push", "pull", "tag"}
    | {"restore", "rm", "mv", "cherry-pick", "revert", "am", "apply", "init", "clone"}
)
_CHANGE_VERBS = frozenset(
    {"write", "create", "update", "delete", "edit", "set", "add", "remove", "send", "post"}
    | {"push", "insert", "commit", "merge", "move", "rename", "upload", "publish"}
)


def edit_type(event: ToolEvent, scope: Scope, added_code: str) -> ObservationType:
    """bugfix > refactor > feature from the prompt (and added comments), else a failure
    seen earlier in the batch makes it a bugfix, else a plain change."""
    prompt = scope.prompt(event)
    comments = "\n".join(
        line for line in added_code.splitlines()[:2000] if _COMMENT_LINE.match(line)
    )
    if _FIX_COMMENT.search(comments):
        return "bugfix"
    return text_type(prompt) or ("bugfix" if scope.seen_failure else "change")


def text_type(text: str) -> ObservationType | None:
    """bugfix > refactor > feature as words (a prompt, the agent's) say it, else None."""
    if FIX_WORDS.search(text):
        return "bugfix"
    if _REFACTOR_WORDS.search(text):
        return "refactor"
    if _FEATURE_WORDS.search(text):
        return "feature"
    return None


def supporting_file(path: str) -> bool:
    """Whether `path` is a test or a document rather than the code itself."""
    return bool(_SUPPORTING.search(path))


def change_concepts(kind: str) -> list[str]:
    """Concepts of a change of type `kind`: a bugfix solves a problem, a refactor is a pattern."""
    extra = {"bugfix": ["problem-solution"], "refactor": ["pattern"]}.get(kind, [])
    return ["what-changed", *extra]


def changes_state(argv: list[str]) -> bool:
    """Commands that plainly change files or the repository (rm, mv, installs, git add...)."""
    name = program(argv)
    args = [word for word in argv[1:] if not word.startswith("-")]
    if has_role(name, "changes"):
        return True
    if name == "git":
        return git_sub(argv)[0] in _GIT_CHANGES
    return has_role(name, "installer") and bool(args) and args[0] in _INSTALL_VERBS


def tool_changes(label: str) -> bool:
    """Does a tool's name say it changes something (`create_issue`, `writeFile`, `send`...)?"""
    words = set(re.split(r"[^a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", label).lower()))
    return bool(words & _CHANGE_VERBS)
