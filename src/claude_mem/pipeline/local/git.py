"""git commits, and what git status / diff / log / show showed of the repository."""

from __future__ import annotations

import re
from collections.abc import Callable

from claude_mem.pipeline.local.classify import FIX_WORDS
from claude_mem.pipeline.local.code_text import defined_names
from claude_mem.pipeline.local.note import Note, Scope, discovery, output_facts
from claude_mem.pipeline.local.shell import Run, git_sub
from claude_mem.pipeline.local.text import (
    FACT_CHARS,
    SUBTITLE_CHARS,
    backticked,
    clip,
    dedup,
    first_line,
    in_quotes,
    shortlist,
)
from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.paths import normalize_path
from claude_mem.text import counted


def _commit_message(command: str, argv: list[str], run: Run) -> tuple[str, str, str]:
    """(message, short sha, branch) of a commit, from git's output or the command."""
    made = re.search(
        r"^\[([^\]\s]+)(?: \([^)\n]*\))? ([0-9a-f]{7,40})\] (.+)$", run.output, re.MULTILINE
    )
    if made:
        return made.group(3).strip(), made.group(2), made.group(1)
    heredoc = re.search(r"<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)\n\s*\1\b", command, re.DOTALL)
    if heredoc:
        return first_line(heredoc.group(2)), "", ""
    messages: list[str] = []
    args = git_sub(argv)[1]
    for index, word in enumerate(args):
        if word == "--message" or re.fullmatch(r"-[a-zA-Z]*m", word):
            messages.extend(args[index + 1 : index + 2])
        elif word.startswith("--message="):
            messages.append(word.split("=", 1)[1])
        elif re.fullmatch(r"-m.+", word, re.DOTALL):
            messages.append(word[2:])
    return (first_line(messages[0]) if messages else ""), "", ""


def commit_note(event: ToolEvent, scope: Scope, command: str, argv: list[str], run: Run) -> Note:
    message, sha, branch = _commit_message(command, argv, run)
    stats = re.search(r"\d+ files? changed[^\n]*", run.output)
    created = re.findall(r"^\s*create mode \d+ (.+)$", run.output, re.MULTILINE)
    facts = [f"Commit {sha}" + (f" on {branch}" if branch else "")] if sha else []
    facts.extend([clip(stats.group(0), FACT_CHARS)] if stats else [])
    if created:
        facts.append(f"Added: {shortlist([normalize_path(p, event.cwd) for p in created], 5)}")
    concepts = ["what-changed"]
    if FIX_WORDS.search(message):
        concepts.append("problem-solution")
    title = f"Committed: {message}" if message else "Committed changes"
    return Note(
        type="change",
        title=title,
        subtitle=f"{sha} on {branch}" if sha and branch else clip(command, SUBTITLE_CHARS),
        narrative=f"Committed {in_quotes(message, 120) if message else 'the staged changes'}"
        + (f" as {sha}" if sha else "")
        + (f" ({stats.group(0).strip()})" if stats else "")
        + ".",
        facts=facts,
        concepts=concepts,
        event=event,
        kind="commit",
        completed=title,
    )


def git_note(event: ToolEvent, command: str, argvs: list[list[str]], run: Run) -> Note | None:
    """git status / diff / log / show: what the repository looked like."""
    for argv in argvs:
        sub, args = git_sub(argv)
        describe = _GIT_LOOKS.get(sub)
        if describe is not None:
            title, facts = describe(run.output, args, event)
            return discovery(
                event,
                "git",
                title,
                subtitle=clip(command, SUBTITLE_CHARS),
                narrative=f"{title} ({backticked(command, 100)}).",
                facts=facts,
                concepts=["what-changed"],
            )
    return None


def _git_status(text: str, args: list[str], event: ToolEvent) -> tuple[str, list[str]]:
    if "nothing to commit" in text:
        return "Checked git status: working tree clean", []
    long_form = re.findall(
        r"^\s+(?:modified|new file|deleted|renamed|typechange):\s+(.+)$", text, re.MULTILINE
    )
    short_form = re.findall(r"^[ MADRCU?!]{2} (.+)$", text, re.MULTILINE)
    untracked = _untracked(text)
    files = dedup([*long_form, *short_form, *untracked])
    files = [normalize_path(name.split(" -> ")[-1], event.cwd) for name in files]
    if not files:
        return "Checked git status", []
    title = f"Checked git status: {counted(len(files), 'changed file')}"
    return title, [clip(f"Changed: {shortlist(files, 10)}", FACT_CHARS)]


def _untracked(text: str) -> list[str]:
    section = text.split("Untracked files:", 1)
    if len(section) < 2:
        return []
    names: list[str] = []
    for line in section[1].splitlines()[1:]:
        if not line.strip():
            if names:
                break
            continue
        if line.startswith(("\t", "  ")) and not line.strip().startswith("("):
            names.append(line.strip())
    return names


def _git_diff(text: str, args: list[str], event: ToolEvent) -> tuple[str, list[str]]:
    files = [
        normalize_path(m.group(1), event.cwd)
        for m in re.finditer(r"^diff --git a/\S+ b/(\S+)", text, re.MULTILINE)
    ]
    stat = re.search(r"\d+ files? changed[^\n]*", text)
    lines = text.splitlines()
    plus = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    minus = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    if stat:
        title = f"Reviewed git diff: {stat.group(0).strip()}"
    elif files:
        title = f"Reviewed git diff: {counted(len(files), 'file')}, +{plus}/-{minus}"
    else:
        title = "Reviewed git diff: no changes" if not text.strip() else "Reviewed git diff"
    facts = [clip(f"Files: {shortlist(files, 10)}", FACT_CHARS)] if files else []
    added = "\n".join(line[1:] for line in lines if line.startswith("+"))
    symbols = defined_names(added)
    if symbols:
        facts.append(f"Symbols: {shortlist(symbols, 6)}")
    return title, facts


def _git_log(text: str, args: list[str], event: ToolEvent) -> tuple[str, list[str]]:
    full = re.findall(r"^commit ([0-9a-f]{7,40})", text, re.MULTILINE)
    subjects = re.findall(r"^    (\S.*)$", text, re.MULTILINE) if full else []
    oneline = re.findall(r"^\*?\s*([0-9a-f]{7,12}) (.+)$", text, re.MULTILINE)
    entries = [f"{sha[:7]} {subject}" for sha, subject in oneline] or [
        f"{sha[:7]} {subject}" for sha, subject in zip(full, subjects, strict=False)
    ]
    count = len(full) or len(oneline)
    title = f"Read git log: {counted(count, 'commit')}" if count else "Read git log"
    return title, output_facts(entries[:3], "Commit: ")


def _git_show(text: str, args: list[str], event: ToolEvent) -> tuple[str, list[str]]:
    ref = next((word for word in args if not word.startswith("-")), "HEAD")
    _, facts = _git_diff(text, args, event)
    return f"Inspected git show {clip(ref, 40)}", facts


_GitLook = Callable[[str, list[str], ToolEvent], tuple[str, list[str]]]
_GIT_LOOKS: dict[str, _GitLook] = {
    "status": _git_status,
    "diff": _git_diff,
    "log": _git_log,
    "show": _git_show,
}
