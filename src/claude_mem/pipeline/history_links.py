"""A unit that edits code a commit explains names that commit, so its reader sees why the code
was so before the edit: `explained by commit a1b2c3d: Keep the retry count at 3`.

The commit is the newest one of the project's git history (the project's own, or its main
checkout's for a worktree) that changed a file the unit modified and whose message has a body
(the reason), preferring one whose `touches <symbol> in <path>` fact names a symbol the unit
names. Commit paths are relative to the repository's top level; the unit's are relative to
the session's cwd or absolute, so each is looked up in every form (`file_gate.path_forms`).
One indexed lookup per observation (`store.git_history.commits_touching`).
"""

from __future__ import annotations

import os
import re
import sqlite3
from typing import Any

import msgspec

from claude_mem.context.file_gate import path_forms
from claude_mem.project import resolve_project
from claude_mem.records import Observation
from claude_mem.store.git_history import commits_touching
from claude_mem.text import shorten
from claude_mem.vocabulary import HISTORY_SOURCE

CANDIDATES = 20  # newest explained commits of the unit's files looked at for a symbol
FILES = 50  # of the unit's modified files, looked up
SUBJECT_CHARS = 120
_TOUCHES = re.compile(r"^touches (.+) in .+$")


def linked(conn: sqlite3.Connection, obs: Observation, *, cwd: str | None) -> Observation:
    """`obs` with the fact naming the commit that explains the code it edits, if one does."""
    if not obs.files_modified or obs.source == HISTORY_SOURCE:
        return obs
    identity = resolve_project(cwd) if cwd else None
    projects: tuple[str, ...] = (obs.project,)
    folders: tuple[str | None, ...] = ()
    if identity is not None and identity.name == obs.project:
        projects, folders = identity.all_projects, (cwd, identity.root, identity.parent_root)
    forms: list[str] = []
    for path in obs.files_modified[:FILES]:
        absolute = os.path.join(cwd, path) if cwd else path
        forms += [path, *path_forms(absolute, folders)] if os.path.isabs(absolute) else [path]
    commits = commits_touching(
        conn, list(dict.fromkeys(forms)), projects=projects, limit=CANDIDATES, explained=True
    )
    if not commits:
        return obs
    best = _naming(commits, _text(obs)) or commits[0]
    fact = f"explained by commit {str(best['sha'])[:7]}: {shorten(best['title'], SUBJECT_CHARS)}"
    return msgspec.structs.replace(obs, facts=[*obs.facts, fact])


def _text(obs: Observation) -> str:
    return "\n".join([obs.title, obs.subtitle, obs.narrative, *obs.facts])


def _naming(commits: list[dict[str, Any]], text: str) -> dict[str, Any] | None:
    """The newest commit with a `touches` symbol that `text` names as a whole word."""
    for commit in commits:
        for fact in commit.get("facts") or ():
            match = _TOUCHES.match(str(fact))
            if match and re.search(rf"(?<![\w$]){re.escape(match.group(1))}(?![\w$])", text):
                return commit
    return None
