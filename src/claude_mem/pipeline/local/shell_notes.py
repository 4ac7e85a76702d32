"""A shell event described by what it plainly is: a test run, a commit, a git look, a
read, a search, a listing, a failure, or any other run."""

from __future__ import annotations

from claude_mem.pipeline.local.classify import changes_state
from claude_mem.pipeline.local.code_text import defined_names
from claude_mem.pipeline.local.edits import patch_note
from claude_mem.pipeline.local.git import commit_note, git_note
from claude_mem.pipeline.local.lookups import display_dir
from claude_mem.pipeline.local.note import Note, Scope, discovery, output_facts
from claude_mem.pipeline.local.shell import (
    Run,
    error_line,
    git_sub,
    is_test,
    read_span,
    run_failed,
    search_args,
    shell_run,
)
from claude_mem.pipeline.local.test_runs import test_note
from claude_mem.pipeline.local.text import (
    EXCERPT_CHARS,
    FACT_CHARS,
    SUBTITLE_CHARS,
    as_str,
    backticked,
    clip,
    dedup,
    excerpt,
    first_line,
    in_quotes,
    nonblank_lines,
    shortlist,
)
from claude_mem.pipeline.local.tools import tool_note
from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.evidence import files_read
from claude_mem.pipeline.tools.inputs import command_text, input_dict
from claude_mem.pipeline.tools.patches import patch_files
from claude_mem.pipeline.tools.paths import normalize_path
from claude_mem.pipeline.tools.programs import all_have, has_role
from claude_mem.pipeline.tools.shell import program, shell_commands
from claude_mem.text import counted


def shell_note(event: ToolEvent, scope: Scope) -> Note | None:
    """A shell command, by what it plainly is: test run, commit, git look, read, search,
    listing, a failure, or any other run."""
    command = command_text(event)
    if not command.strip():
        return tool_note(event, scope)
    if patch_files(event):
        return patch_note(event, scope)
    argvs = shell_commands(command)
    run = shell_run(event.tool_response)
    tests = [argv for argv in argvs if is_test(argv)]
    if tests:
        return test_note(event, command, tests[0], run)
    commits = [argv for argv in argvs if git_sub(argv)[0] == "commit"]
    failed = run_failed(run, argvs)
    if commits and not failed:
        return commit_note(event, scope, command, commits[0], run)
    if failed:
        return _failure(event, command, run)
    for describe in (git_note, _shell_read, _shell_search, _shell_list):
        note = describe(event, command, argvs, run)
        if note is not None:
            return note
    names = {program(argv) for argv in argvs}
    if all_have(names, "noise") or (all_have(names, "list") and not run.output.strip()):
        return None
    return _generic_run(event, command, argvs, run)


def _failure(event: ToolEvent, command: str, run: Run) -> Note:
    reason = error_line(run)
    facts = [f"Command: {clip(command, 180)}"]
    if run.exit_code is not None:
        facts.append(f"Exit code: {run.exit_code}")
    facts.extend(output_facts([reason], "Error: "))
    title = f"{backticked(command, 50)} failed: {reason}"
    narrative = f"Running {backticked(command, 100)} failed: {in_quotes(reason, 120)}."
    subtitle = clip(command, SUBTITLE_CHARS)
    return discovery(
        event, "failure", title, subtitle=subtitle, narrative=narrative, facts=facts, failed=True
    )


def _generic_run(event: ToolEvent, command: str, argvs: list[list[str]], run: Run) -> Note:
    changes = any(changes_state(argv) for argv in argvs)
    first = first_line(run.output)
    title = f"Ran {backticked(command, 70)}"
    if first and len(first) <= 60:
        title += f": {first}"
    narrative = f"Ran {backticked(command, 100)}."
    if run.output.strip():
        narrative += f" Output: {in_quotes(excerpt(run.output), EXCERPT_CHARS)}."
    description = as_str(input_dict(event).get("description"))
    return Note(
        type="change" if changes else "discovery",
        title=title,
        subtitle=clip(description or command, SUBTITLE_CHARS),
        narrative=narrative,
        facts=[f"Command: {clip(command, 180)}"],
        concepts=["what-changed" if changes else "how-it-works"],
        event=event,
        kind="shell",
    )


def _shell_read(event: ToolEvent, command: str, argvs: list[list[str]], run: Run) -> Note | None:
    """cat / head / tail / sed -n ...: plainly reading files."""
    paths = files_read(event)
    readers = [argv for argv in argvs if not has_role(program(argv), "noise")]
    if not paths or not readers or not all_have(map(program, readers), "reader"):
        return None
    span = read_span(readers[0]) if len(readers) == 1 else ""
    lines = len(run.output.splitlines())
    span = span or (counted(lines, "line") if run.output.strip() else "empty")
    symbols = defined_names(run.output)
    first = first_line(run.output)
    if len(paths) == 1:
        title = f"Read {paths[0]} ({span})"
    else:
        title = f"Read {len(paths)} files: {shortlist(paths)}"
    facts = [f"Defines: {shortlist(symbols, 8)}"] if symbols else []
    facts.extend(output_facts([first], "First line: ") if first else [])
    narrative = f"Read {shortlist(paths, 5)} with {backticked(command, 80)}."
    if symbols:
        narrative += f" It defines {shortlist(symbols, 5)}."
    return discovery(
        event,
        "read",
        title,
        subtitle=clip(command, SUBTITLE_CHARS),
        narrative=narrative,
        facts=facts,
    )


def _shell_search(event: ToolEvent, command: str, argvs: list[list[str]], run: Run) -> Note | None:
    """grep / rg / ag / git grep: the pattern, where, and how many matches."""
    argv = next(
        (a for a in argvs if has_role(program(a), "search") or git_sub(a)[0] == "grep"),
        None,
    )
    if argv is None:
        return None
    pattern, paths = search_args(argv)
    places = [normalize_path(p, event.cwd) for p in paths] or files_read(event)
    lines = nonblank_lines(run.output)
    prefixes = dedup(line.split(":", 1)[0] for line in lines if ":" in line)
    files_only = any(flag in argv for flag in ("-l", "--files-with-matches"))
    if files_only:
        hits = counted(len(lines), "file")
    elif lines and len(prefixes) > 1:
        hits = f"{counted(len(lines), 'match', 'matches')} in {len(prefixes)} files"
    else:
        hits = counted(len(lines), "match", "matches") if lines else "no matches"
    where = f" in {shortlist(places, 2)}" if places else ""
    target = f"{in_quotes(pattern or '?')}{where}"
    matched = lines if files_only else prefixes if len(prefixes) > 1 else []
    facts = [clip(f"Matched files: {shortlist(matched, 6)}", FACT_CHARS)] if matched else []
    if not files_only:
        facts.extend(output_facts(lines[:3], "Match: "))
    title = f"Searched for {target} ({hits})"
    narrative = f"Searched for {target} with {backticked(command, 80)}: {hits}."
    subtitle = clip(command, SUBTITLE_CHARS)
    return discovery(
        event,
        "search",
        title,
        subtitle=subtitle,
        narrative=narrative,
        facts=facts,
        investigated=[target],
    )


def _shell_list(event: ToolEvent, command: str, argvs: list[list[str]], run: Run) -> Note | None:
    """ls / tree / find / fd: a folder's entries; empty output is noise."""
    argv = next((a for a in argvs if has_role(program(a), "list")), None)
    if argv is None or not run.output.strip():
        return None
    entries = [
        line.split()[-1]
        for line in nonblank_lines(run.output)
        if not line.startswith("total ") and line.split()
    ][:500]
    args = [word for word in argv[1:] if not word.startswith("-")]
    place = display_dir(args[0] if args and program(argv) != "fd" else "", event)
    title = f"Listed {place} ({counted(len(entries), 'entry', 'entries')})"
    narrative = f"Listed {place} with {backticked(command, 80)}: {shortlist(entries, 5)}."
    facts = [clip(f"Entries: {shortlist(entries, 12)}", FACT_CHARS)]
    subtitle = clip(command, SUBTITLE_CHARS)
    return discovery(
        event,
        "list",
        title,
        subtitle=subtitle,
        narrative=narrative,
        facts=facts,
        investigated=[place],
    )
