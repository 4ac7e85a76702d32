"""Read, Grep, Glob and LS tool events: which files were read, searched or listed, and
what was found."""

from __future__ import annotations

import re

from claude_mem.pipeline.local.code_text import defined_names
from claude_mem.pipeline.local.note import Note, Scope, discovery, output_facts
from claude_mem.pipeline.local.responses import response_text, tool_error
from claude_mem.pipeline.local.symbols import symbol_facts
from claude_mem.pipeline.local.text import (
    FACT_CHARS,
    as_int,
    as_str,
    bounded,
    clip,
    dedup,
    first_line,
    in_quotes,
    nonblank_lines,
    shortlist,
    strip_wrappers,
)
from claude_mem.pipeline.local.tools import tool_note
from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.evidence import files_read
from claude_mem.pipeline.tools.inputs import input_dict
from claude_mem.pipeline.tools.paths import normalize_path
from claude_mem.text import counted

READ_SYMBOLS = 4  # symbols of a file read that a unit keeps, with signature and doc


def read_note(event: ToolEvent, scope: Scope) -> Note:
    """Read / read_file / read_many_files: which file, how much, and what it defines."""
    paths = files_read(event)
    if not paths:
        return tool_note(event, scope)
    error = tool_error(event.tool_response)
    if error:
        return discovery(
            event,
            "read",
            f"Reading {shortlist(paths, 2)} failed: {error}",
            narrative=f"Tried to read {shortlist(paths)}: {error}.",
            facts=[f"Error: {error}"],
            failed=True,
        )
    content, span = _read_content(event)
    symbols = defined_names(content)
    if len(paths) == 1:
        title = f"Read {paths[0]} ({span})" if span else f"Read {paths[0]}"
    else:
        title = f"Read {len(paths)} files: {shortlist(paths)}"
    facts = [f"Defines: {shortlist(symbols, 8)}"] if symbols else []
    first = first_line(strip_wrappers(content))
    facts.extend(output_facts([first], "First line: ") if first else [])
    narrative = f"Read {shortlist(paths, 5)}."
    if symbols:
        narrative += f" It defines {shortlist(symbols, 5)}."
    elif first:
        narrative += f" It begins: {in_quotes(first, 120)}."
    note = discovery(
        event, "read", title, subtitle=_read_subtitle(paths), narrative=narrative, facts=facts
    )
    note.code = symbol_facts(paths[0], content, READ_SYMBOLS) if len(paths) == 1 else []
    return note


def _read_subtitle(paths: list[str]) -> str:
    folders = dedup(path.rsplit("/", 1)[0] if "/" in path else "." for path in paths)
    return "in " + shortlist(["the working directory" if f == "." else f for f in folders])


def _read_content(event: ToolEvent) -> tuple[str, str]:
    """(file text, a span like '42 lines' or 'lines 10-20 of 300') of a read response."""
    response = event.tool_response
    if isinstance(response, dict) and isinstance(response.get("file"), dict):
        info = response["file"]
        content = bounded(as_str(info.get("content")))
        lines = as_int(info.get("numLines"))
        start = as_int(info.get("startLine")) or 1
        total = as_int(info.get("totalLines"))
        if lines is not None and total is not None and (start > 1 or lines < total):
            return content, f"lines {start}-{start + max(lines - 1, 0)} of {total}"
        count = total if total is not None else lines
        return content, counted(count, "line") if count is not None else ""
    content = response_text(response)
    shown = re.search(r"Showing lines (\d+)-(\d+) of (\d+)", content[:2000])
    if shown:
        return content, f"lines {shown.group(1)}-{shown.group(2)} of {shown.group(3)}"
    return content, counted(len(content.splitlines()), "line") if content else ""


def display_dir(path: str, event: ToolEvent) -> str:
    shown = normalize_path(path, event.cwd) if path.strip() else "."
    return "the working directory" if shown == "." else shown


def grep_note(event: ToolEvent, scope: Scope) -> Note:
    """Grep / search_file_content: the pattern, where, and how many hits."""
    data = input_dict(event)
    pattern = as_str(data.get("pattern")) or as_str(data.get("query")) or as_str(data.get("regex"))
    where = as_str(data.get("path")) or as_str(data.get("dir_path"))
    place = display_dir(where, event) if where else ""
    glob = as_str(data.get("glob")) or as_str(data.get("include"))
    matched, hits = _grep_hits(event.tool_response, event, where)
    title = f"Searched for {in_quotes(pattern or '?')}"
    title += f" in {place}" if place else ""
    title += f" ({glob})" if glob else ""
    title += f" ({hits})" if hits else ""
    facts = [f"Matched files: {shortlist(matched, 6)}"] if matched else []
    target = f"{in_quotes(pattern or '?')}" + (f" in {place}" if place else "")
    return discovery(
        event,
        "search",
        title,
        subtitle=f"pattern {in_quotes(pattern or '?', 80)}",
        narrative=f"Searched for {target}: {hits or 'no result count'}.",
        facts=facts,
        investigated=[target],
    )


def _grep_hits(response: object, event: ToolEvent, where: str) -> tuple[list[str], str]:
    """(matched files, a phrase like '3 files' or '12 matches') of a search response."""
    if isinstance(response, dict):
        names = response.get("filenames")
        files = (
            [normalize_path(n, event.cwd) for n in names[:200] if isinstance(n, str) and n.strip()]
            if isinstance(names, list)
            else []
        )
        count = as_int(response.get("numFiles"))
        matches = as_int(response.get("numMatches"))
        content = response.get("content")
        if not files and isinstance(content, str) and content.strip():
            # Content mode sends the matching lines ("path:line:text") and numFiles 0.
            return _content_hits(content, as_int(response.get("numLines")), event, where)
        if matches is not None:
            return files, counted(matches, "match", "matches")
        if count is not None:
            return files, counted(count, "file")
        if files:
            return files, counted(len(files), "file")
    text = response_text(response)
    if re.search(r"(?i)no matches found", text[:500]):
        return [], "no matches"
    found = re.search(r"Found (\d{1,7}) match", text[:1000])
    files = dedup(
        normalize_path(_under(m.group(1).strip(), where), event.cwd)
        for m in re.finditer(r"^File: (.+)$", text, re.MULTILINE)
    )
    if found:
        return files, counted(int(found.group(1)), "match", "matches")
    return files, ""


def _content_hits(
    content: str, lines: int | None, event: ToolEvent, where: str
) -> tuple[list[str], str]:
    """Files and a line count from content-mode output; a bare `12:text` has no path."""
    rows = [row for row in content.splitlines() if row.strip()]
    paths = (row.split(":", 1)[0] for row in rows if ":" in row)
    files = dedup(normalize_path(_under(p, where), event.cwd) for p in paths if not p.isdigit())
    return files[:200], counted(lines or len(rows), "matching line", "matching lines")


def _under(path: str, folder: str) -> str:
    """`path` as reported relative to the searched `folder`."""
    if path.startswith(("/", "~")) or not folder.strip() or folder.strip() == ".":
        return path
    return folder.rstrip("/") + "/" + path


def glob_note(event: ToolEvent, scope: Scope) -> Note:
    """Glob: the pattern, where, and how many files matched."""
    data = input_dict(event)
    pattern = as_str(data.get("pattern")) or "?"
    where = as_str(data.get("path")) or as_str(data.get("dir_path"))
    place = f" in {display_dir(where, event)}" if where else ""
    files, phrase = _glob_hits(event.tool_response, event)
    target = f"files matching {in_quotes(pattern)}{place}"
    return discovery(
        event,
        "search",
        f"Found {phrase or 'files'} matching {in_quotes(pattern)}{place}",
        subtitle=f"glob {in_quotes(pattern, 80)}",
        narrative=f"Looked for {target}: {phrase or 'no count'}.",
        facts=[f"Files: {shortlist(files, 6)}"] if files else [],
        investigated=[target],
    )


def _glob_hits(response: object, event: ToolEvent) -> tuple[list[str], str]:
    if isinstance(response, dict) and isinstance(response.get("filenames"), list):
        names = [n for n in response["filenames"][:200] if isinstance(n, str) and n.strip()]
        files = [normalize_path(n, event.cwd) for n in names]
        count = as_int(response.get("numFiles"))
        return files, counted(len(files) if count is None else count, "file")
    text = response_text(response)
    found = re.search(r"Found (\d{1,7}) file", text[:1000])
    if found:
        lines = [line for line in nonblank_lines(text)[1:] if line.startswith("/") or "." in line]
        files = [normalize_path(line, event.cwd) for line in lines[:200]]
        return files, counted(int(found.group(1)), "file")
    if re.search(r"(?i)no files found", text[:500]):
        return [], "no files"
    return [], ""


def ls_note(event: ToolEvent, scope: Scope) -> Note | None:
    """LS / list_directory: the folder and its entries; an empty listing is noise."""
    data = input_dict(event)
    where = (
        as_str(data.get("path")) or as_str(data.get("dir_path")) or as_str(data.get("directory"))
    )
    place = display_dir(where, event)
    entries = _listing_entries(event.tool_response)
    if not entries:
        return None
    return discovery(
        event,
        "list",
        f"Listed {place} ({counted(len(entries), 'entry', 'entries')})",
        subtitle=f"in {place}",
        narrative=f"Listed {place}: {shortlist(entries, 5)}.",
        facts=[clip(f"Entries: {shortlist(entries, 12)}", FACT_CHARS)],
        investigated=[place],
    )


def _listing_entries(response: object) -> list[str]:
    """Entry names of an LS tree (`- name`) or a list_directory text (`[DIR] name`)."""
    text = response_text(response) if not isinstance(response, str) else bounded(response)
    entries: list[str] = []
    for line in nonblank_lines(text):
        if line.startswith(("NOTE:", "Directory listing for", "Directory ")) or line.endswith(":"):
            continue
        name = line[2:] if line.startswith("- ") else line
        name = name.removeprefix("[DIR] ").strip()
        if name and not name.startswith("/"):
            entries.append(name)
    return entries[:500]
