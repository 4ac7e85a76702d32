"""Edits, writes, notebook edits and patches: which file, and what changed in it."""

from __future__ import annotations

from typing import Any

from claude_mem.pipeline.local.classify import change_concepts, edit_type
from claude_mem.pipeline.local.code_text import defined_names, describe_change
from claude_mem.pipeline.local.note import Note, Scope, discovery
from claude_mem.pipeline.local.responses import response_text, tool_error
from claude_mem.pipeline.local.symbols import code_facts
from claude_mem.pipeline.local.text import as_str, clip, shortlist
from claude_mem.pipeline.local.tools import tool_label, tool_note
from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.evidence import files_modified
from claude_mem.pipeline.tools.inputs import input_dict
from claude_mem.pipeline.tools.patches import PatchFile, patch_files
from claude_mem.text import counted


def _context_sentence(event: ToolEvent, scope: Scope) -> str:
    prompt = scope.prompt(event)
    return f" Context: {clip(prompt, 120)}" if prompt.strip() else ""


def _edit_pairs(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(old, new) text pairs of an Edit, MultiEdit, replace or MCP edit_file input."""
    pairs: list[tuple[str, str]] = []
    items = data.get("edits")
    for item in [data, *(items if isinstance(items, list) else [])][:100]:
        if not isinstance(item, dict):
            continue
        old = item.get("old_string", item.get("oldText", item.get("old_str")))
        new = item.get("new_string", item.get("newText", item.get("new_str")))
        if isinstance(old, str) or isinstance(new, str):
            pairs.append((as_str(old), as_str(new)))
    return pairs


def _failed_change(event: ToolEvent, kind: str, target: str, error: str) -> Note:
    return discovery(
        event,
        kind,
        f"Edit to {target} failed: {error}",
        narrative=f"The {tool_label(event.tool_name)} call on {target} failed: {error}.",
        facts=[f"Error: {error}"],
        failed=True,
    )


def _target_or_failure(event: ToolEvent, kind: str, default: str) -> tuple[str, Note | None]:
    """The file the event changed, and the note to give instead when the tool failed."""
    target = (files_modified(event) or [default])[0]
    error = tool_error(event.tool_response)
    return target, _failed_change(event, kind, target, error) if error else None


def _change_note(
    event: ToolEvent,
    scope: Scope,
    kind: str,
    added_code: str,
    title: str,
    *,
    subtitle: str,
    narrative: str,
    facts: list[str],
    merge_on: str | None = None,
    changes: list[str] | None = None,
) -> Note:
    """A change, typed by its prompt and the code it adds; the prompt ends the narrative.
    The added code's symbols (signature and doc) and an excerpt of it say what the code is."""
    change_type = edit_type(event, scope, added_code)
    return Note(
        type=change_type,
        title=title,
        subtitle=subtitle,
        narrative=narrative + _context_sentence(event, scope),
        facts=facts,
        concepts=change_concepts(change_type),
        event=event,
        kind=kind,
        merge_key=(change_type, merge_on) if merge_on else None,
        changes=changes or [],
        code=code_facts((files_modified(event) or [""])[0], added_code),
    )


def edit_note(event: ToolEvent, scope: Scope) -> Note:
    """Edit / MultiEdit / replace: what changed in the one file."""
    target, failure = _target_or_failure(event, "edit", "a file")
    if failure is not None:
        return failure
    data = input_dict(event)
    pairs = _edit_pairs(data)
    phrases: list[str] = []
    facts: list[str] = []
    for old, new in pairs[:20]:
        phrase, pair_facts = describe_change(old, new)
        phrases.append(phrase)
        facts.extend(pair_facts)
    if data.get("replace_all") is True:
        facts.append("Replaced every occurrence (replace_all)")
    summary = phrases[0] if len(phrases) == 1 else f"{len(phrases)} changes: " + "; ".join(phrases)
    return _change_note(
        event,
        scope,
        "edit",
        "\n".join(new for _, new in pairs),
        f"Edited {target}: {summary if phrases else 'changed the file'}",
        subtitle=f"in {target}",
        narrative=f"Edited {target}: {'; '.join(phrases) or 'changed it'}.",
        facts=facts,
        merge_on=target if target != "a file" else None,
        changes=phrases or ["changed the file"],
    )


def write_note(event: ToolEvent, scope: Scope) -> Note:
    """Write / write_file: a whole file written; named by its size and what it defines."""
    target, failure = _target_or_failure(event, "write", "a file")
    if failure is not None:
        return failure
    content = as_str(input_dict(event).get("content"))
    response = event.tool_response
    status = as_str(response.get("type")) if isinstance(response, dict) else ""
    reply = "" if status else response_text(response).lower()
    verb = "Created" if status == "create" or "created" in reply else "Wrote"
    verb = "Rewrote" if status == "update" or "overwrote" in reply else verb
    lines = len(content.splitlines())
    symbols = defined_names(content)
    title = f"{verb} {target} ({counted(lines, 'line')})"
    if symbols:
        title += f": defines {shortlist(symbols)}"
    facts = [f"Defines: {shortlist(symbols, 8)}"] if symbols else []
    return _change_note(
        event,
        scope,
        "write",
        content,
        title,
        subtitle=f"in {target}",
        narrative=f"{verb} {target} with {counted(lines, 'line')}.",
        facts=[*facts, f"Size: {counted(lines, 'line')}"],
    )


def notebook_note(event: ToolEvent, scope: Scope) -> Note:
    """NotebookEdit: which cell was replaced, inserted or deleted."""
    target, failure = _target_or_failure(event, "notebook", "a notebook")
    if failure is not None:
        return failure
    data = input_dict(event)
    mode = as_str(data.get("edit_mode")) or "replace"
    verb = {"insert": "inserted", "delete": "deleted"}.get(mode, "replaced")
    cell = clip(as_str(data.get("cell_id")), 30)
    source = as_str(data.get("new_source"))
    symbols = defined_names(source)
    return _change_note(
        event,
        scope,
        "notebook",
        source,
        f"Edited notebook {target}: {verb} {'cell ' + cell if cell else 'a cell'}",
        subtitle=f"in {target}",
        narrative=f"In {target}, {verb} a {as_str(data.get('cell_type')) or 'notebook'} cell.",
        facts=[f"Defines: {shortlist(symbols, 8)}"] if symbols else [],
    )


def patch_note(event: ToolEvent, scope: Scope) -> Note:
    """apply_patch (or a patch fed to a shell): per-file actions and what changed."""
    files = patch_files(event)
    if not files:
        return tool_note(event, scope)
    first = files[0]
    error = tool_error(event.tool_response)
    if error or "verification failed" in response_text(event.tool_response).lower():
        return _failed_change(event, "patch", first.path, error or "verification failed")
    added = "\n".join(line for item in files for line in item.added)
    facts = [_patch_fact(item) for item in files]
    symbols = defined_names(added)
    if symbols:
        facts.append(f"Symbols: {shortlist(symbols, 6)}")
    if len(files) > 1:
        return _change_note(
            event,
            scope,
            "patch",
            added,
            _multi_patch_title(files),
            subtitle="apply_patch",
            narrative=f"Applied a patch: {'; '.join(facts[: min(len(files), 4)])}.",
            facts=facts,
        )
    phrase, change_facts = describe_change("\n".join(first.removed), "\n".join(first.added))
    title, merge = _single_patch_title(first, phrase)
    return _change_note(
        event,
        scope,
        "patch" if merge is None else "edit",
        added,
        title,
        subtitle="apply_patch",
        narrative=f"{title}.",
        facts=[*facts, *change_facts],
        merge_on=merge,
        changes=[phrase],
    )


def _multi_patch_title(files: list[PatchFile]) -> str:
    """'Edited a.py; created b.py' for a few files, 'Edited 5 files: ...' for more."""
    if len(files) > 3:
        return f"Edited {len(files)} files: {shortlist([item.path for item in files])}"
    verbs = {"add": "created", "delete": "deleted"}
    parts = [f"{verbs.get(item.action, 'edited')} {item.path}" for item in files]
    text = "; ".join(parts)
    return text[0].upper() + text[1:]


def _single_patch_title(item: PatchFile, phrase: str) -> tuple[str, str | None]:
    """(title, file it may merge on) for a one-file patch."""
    if item.action == "add":
        return f"Created {item.path} ({counted(item.added_count, 'line')})", None
    if item.action == "delete":
        return f"Deleted {item.path}", None
    if item.move_to:
        return f"Moved {item.path} → {item.move_to}: {phrase}", None
    return f"Edited {item.path}: {phrase}", item.path


def _patch_fact(item: PatchFile) -> str:
    if item.action == "add":
        return f"Created {item.path} (+{item.added_count})"
    if item.action == "delete":
        return f"Deleted {item.path}"
    moved = f" → {item.move_to}" if item.move_to else ""
    return f"Updated {item.path}{moved} (+{item.added_count} -{item.removed_count})"
