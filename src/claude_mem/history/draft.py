"""A commit as an observation: its subject, its reason, the files and symbols it touched.

The observation says where it came from in words a reader and full-text search both see: the
subtitle names the short hash, the author date and the author, the facts the full hash, the
changed files and the symbols its hunks are in; `concepts` carry `history`, and a decision's
`subject:` keys (the same rule as the local compressor's, so a later session's own decision
about the same thing supersedes it). Paths are relative to the repository's top level, as a
session's memory of a file inside the project is found by its relative form too.
"""

from __future__ import annotations

import hashlib
import time

from claude_mem.history import rules
from claude_mem.history.gitlog import Commit, FileChange
from claude_mem.pipeline.local.decisions import subject_keys
from claude_mem.records import Observation
from claude_mem.text import one_line
from claude_mem.vocabulary import HISTORY_SOURCE, commit_fact

LABEL = "history"


def day(seconds: int) -> str:
    """The author date as YYYY-MM-DD (UTC: the same history reads the same everywhere)."""
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


def _change(change: FileChange) -> str:
    counts = f"(+{change.added} -{change.removed})"
    if change.status == "renamed" and change.old_path:
        return f"renamed {change.old_path} → {change.path} {counts}"
    if change.status in ("added", "deleted"):
        return f"{change.status} {change.path} {counts}"
    return f"changed {change.path} {counts}"


def observation(commit: Commit, *, session_id: int, project: str) -> Observation:
    """The observation `commit` becomes (the caller has checked it is worth keeping)."""
    kind = rules.commit_type(commit)
    body = rules.body_text(commit)
    files = [c.path for c in commit.files]
    moved_from = [c.old_path for c in commit.files if c.old_path]
    symbols = [name for name, _ in commit.symbols]
    facts = [commit_fact(commit.sha)]
    target = rules.reverted(commit)
    if target:
        facts.append(f"reverts commit {target}")
    if len(commit.parents) > 1:
        facts.append(f"merges {len(commit.parents)} lines of history")
    facts += [_change(c) for c in commit.files]
    if commit.more_files:
        facts.append(f"and {commit.more_files} more files")
    facts += [f"touches {name} in {path}" for name, path in commit.symbols]
    concepts = [LABEL]
    if kind == "decision":
        concepts += subject_keys(f"{commit.subject}\n{body}", files, symbols)
    return Observation(
        session_id=session_id,
        project=project,
        type=kind,
        title=one_line(commit.subject),
        subtitle=f"commit {commit.sha[:7]} · {day(commit.authored_at)} · {commit.author}",
        narrative=body,
        facts=facts,
        concepts=concepts,
        files_modified=list(dict.fromkeys([*files, *moved_from])),
        source=HISTORY_SOURCE,
        generated_by=HISTORY_SOURCE,
        created_at=commit.authored_at * 1000,
    )


def change_key(commit: Commit) -> str:
    """What a rebase or an amend keeps of a commit: its author and author time (an amend may
    reword the subject). Other commits of the same author in the same second share it; the
    importer tells them apart by whether the earlier one is still in HEAD's history."""
    material = f"{commit.email}\x1f{commit.authored_at}"
    return hashlib.sha1(
        material.encode("utf-8", "surrogatepass"), usedforsecurity=False
    ).hexdigest()
