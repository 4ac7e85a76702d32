"""What a piece of code defines, and what changed between two versions of it: the
phrases and facts that edit titles are built from."""

from __future__ import annotations

import difflib
import re

from claude_mem.pipeline.local.symbols import code_symbols
from claude_mem.pipeline.local.text import backticked, dedup, shortlist
from claude_mem.text import counted

MAX_DIFF_LINES = 400
_TOKEN = re.compile(r"\w+|[^\w\s]+")


def defined_names(text: str, limit: int = 8) -> list[str]:
    """Names defined in code of any language (def, class, function, const, fn, func...), in
    order, without their class: `symbols.code_symbols` reads them."""
    names = (symbol.name.rsplit(".", 1)[-1] for symbol in code_symbols("", text[:65_536]))
    return dedup(names)[:limit]


def _line_diff(old: str, new: str) -> tuple[list[str], list[str]]:
    """Lines removed and added between two snippets (stripped, non-empty)."""
    before = [line.strip() for line in old.splitlines()[:MAX_DIFF_LINES]]
    after = [line.strip() for line in new.splitlines()[:MAX_DIFF_LINES]]
    removed: list[str] = []
    added: list[str] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed.extend(line for line in before[i1:i2] if line)
            added.extend(line for line in after[j1:j2] if line)
    return removed, added


def describe_change(old: str, new: str) -> tuple[str, list[str]]:
    """(a short phrase for what changed, facts) for one old → new replacement."""
    old_defs, new_defs = defined_names(old), defined_names(new)
    removed, added = _line_diff(old, new)
    facts: list[str] = []
    if len(removed) == 1 and len(added) == 1:
        facts.append(f"Changed {backticked(removed[0], 90)} → {backticked(added[0], 90)}")
    elif added:
        facts.append("New code: " + " / ".join(backticked(line, 60) for line in added[:3]))
    if new_defs or old_defs:
        facts.append(f"Symbols: {shortlist(dedup([*new_defs, *old_defs]), 6)}")
    if removed or added:
        facts.append(f"Lines: +{len(added)} -{len(removed)}")
    return _change_phrase(old_defs, new_defs, removed, added), facts


def _change_phrase(
    old_defs: list[str], new_defs: list[str], removed: list[str], added: list[str]
) -> str:
    """Definitions added/removed/renamed/changed first, else the changed lines."""
    created = [name for name in new_defs if name not in old_defs]
    dropped = [name for name in old_defs if name not in new_defs]
    if len(created) == 1 and len(dropped) == 1:
        return f"renamed {dropped[0]} → {created[0]}"
    if created:
        return f"added {shortlist(created)}"
    if dropped:
        return f"removed {shortlist(dropped)}"
    if new_defs:
        return f"changed {shortlist(new_defs)}"
    if len(removed) == 1 and len(added) == 1:
        before, after = _token_change(removed[0], added[0])
        return f"{backticked(before, 40)} → {backticked(after, 40)}"
    if added and not removed:
        return f"added {counted(len(added), 'line')}"
    if removed and not added:
        return f"removed {counted(len(removed), 'line')}"
    if len(removed) == 1:
        return f"replaced {backticked(removed[0], 40)} with {counted(len(added), 'line')}"
    if removed:
        return f"replaced {counted(len(removed), 'line')} with {len(added)}"
    return "no textual change"


def _token_change(old: str, new: str) -> tuple[str, str]:
    """The differing stretch of two versions of a line (`<` → `<=`), else the whole lines."""
    a = [m.span() for m in _TOKEN.finditer(old[:500])]
    b = [m.span() for m in _TOKEN.finditer(new[:500])]
    words_a = [old[x:y] for x, y in a]
    words_b = [new[x:y] for x, y in b]
    matcher = difflib.SequenceMatcher(None, words_a, words_b, autojunk=False)
    ops = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if len(ops) != 1:
        return old, new
    _, i1, i2, j1, j2 = ops[0]
    if i1 == i2 or j1 == j2:  # a pure insertion or deletion: show a neighbour too
        if i1 > 0 and j1 > 0:
            i1, j1 = i1 - 1, j1 - 1
        elif i2 < len(a) and j2 < len(b):
            i2, j2 = i2 + 1, j2 + 1
        else:
            return old, new
    return old[a[i1][0] : a[i2 - 1][1]], new[b[j1][0] : b[j2 - 1][1]]
