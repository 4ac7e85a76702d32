"""Rules agreed in conversation, kept as `decision` drafts (deterministic, no model).

A turn holds a decision when the user sets or corrects a rule and the agent accepts it, the
agent states as settled a rule the user's discussion led to, or the user leaves a choice to the
agent and it makes it and acts on it (`exchange` reads who said what).
A request for work, a question, a hesitation, an option floated or a bug report is not one.
Tool events play no part: a chat-only turn can hold a decision, and a turn with tools can hold
one beside its units. Across turns the discussion is one decision: `store.supersede` folds a
session's later decision on the same subject into its earlier one, so the row states the rule
as last agreed.

The draft carries the rule as last agreed, the agent's restatement where it gave one (title,
bounded), the user's and the agent's words (narrative), the files and symbols named anywhere
in the discussion (facts) and `subject:` concepts, the keys `store.supersede` matches a later
amendment on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from claude_mem.pipeline.local.exchange import (
    accepted,
    agreed,
    chosen,
    leaves_choice,
    prompt_reports,
    settlement,
    user_rules,
)
from claude_mem.pipeline.local.text import FACT_CHARS, MAX_FACTS, clip, dedup
from claude_mem.pipeline.providers.base import ObservationDraft, Turn
from claude_mem.subjects import SUBJECT_PREFIX, content_words
from claude_mem.text import shorten

RULE_CHARS = 400  # the rule as agreed: a few sentences, not the discussion
PROMPT_CHARS = 320  # the user's words kept in the narrative
REPLY_CHARS = 260  # the agent's words kept in the narrative
SCAN_CHARS = 4000  # of a prompt or reply: a rule is said in a few sentences, not pages
DISCUSSION_PROMPTS = 12  # the session's latest prompts a discussion is read in
MAX_SUBJECTS = 3
TOPIC_WORDS = 2  # a rule that names no file or symbol is keyed by its first content words

_PATH = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+\.[a-z][a-z0-9]{0,5}\b")
_IDENTIFIER = re.compile(
    r"`([^`\s]{2,60})`|\b([A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]+"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?=\()|[A-Za-z_]\w*(?=\(\)))"
)
_NOT_PATHS = frozenset({"e.g", "i.e", "etc.", "vs."})


def decision(
    turn: Turn, *, worked: bool = False, discussion: Sequence[str] = ()
) -> ObservationDraft | None:
    """The rule agreed in the turn as a `decision` draft, or None. `worked`: the turn changed
    something (edits, commits); `discussion`: the session's prompts so far, oldest first."""
    prompt = turn.prompt[:SCAN_CHARS].strip()
    reply = turn.reply[:SCAN_CHARS].strip()
    # A turn that changed things worked on a request; a rule in it is said as one.
    reports = worked or prompt_reports(prompt)
    rules = user_rules(prompt, reports=reports)
    recent = [text[:SCAN_CHARS] for text in discussion[-DISCUSSION_PROMPTS:]]
    earlier = "\n".join(recent)
    taken = accepted(reply, rules, acted=worked) if rules else []
    if taken:
        rule = " ".join(agreed(reply, taken, prompt, acted=worked))
    elif not (prompt.endswith("?") or reports):
        # The user chose or accepted, and the agent states what was settled.
        rule = settlement(reply, f"{earlier}\n{prompt}")
    elif worked and leaves_choice(prompt):
        # The user left the choice to the agent, and it made it and acted on it.
        rule = " ".join(chosen(reply, prompt))
    else:
        return None
    if not rule:
        return None
    files, symbols = named(f"{prompt}\n{reply}")
    earlier_files, earlier_symbols = named("\n".join(reversed(recent)))  # the latest first
    narrative = f"The user: {clip(prompt, PROMPT_CHARS)}"
    if reply:
        narrative += f"\nThe agent: {clip(reply, REPLY_CHARS)}"
    files, symbols = dedup([*files, *earlier_files]), dedup([*symbols, *earlier_symbols])
    facts = [*(f"File: {path}" for path in files), *(f"Symbol: {name}" for name in symbols)]
    return ObservationDraft(
        type="decision",
        title=shorten(rule, RULE_CHARS),
        narrative=narrative,
        facts=dedup(clip(fact, FACT_CHARS) for fact in facts)[:MAX_FACTS],
        concepts=["decision", *subject_keys(rule, files, symbols)],
    )


def named(text: str) -> tuple[list[str], list[str]]:
    """(paths, identifiers) named in `text`, first occurrence first."""
    paths = [p for p in _PATH.findall(text) if p.lower() not in _NOT_PATHS and not p[0].isdigit()]
    symbols: list[str] = []
    for match in _IDENTIFIER.finditer(text):
        name = (match.group(1) or match.group(2) or "").rstrip("()")
        if name and name not in paths and not _PATH.fullmatch(name):
            symbols.append(name)
    return dedup(paths), dedup(symbols)


def subject_keys(rule: str, files: list[str], symbols: list[str]) -> list[str]:
    """`subject:<name>` for the symbols and files the rule names, else one key of its first
    content words: what a later amendment of the same rule names too."""
    words = rule.lower()
    named_here = [s for s in [*symbols, *files] if s.lower() in words]
    if named_here:
        return [f"{SUBJECT_PREFIX}{name}" for name in dedup(named_here)[:MAX_SUBJECTS]]
    topic = sorted(list(dict.fromkeys(content_words(rule)))[:TOPIC_WORDS])
    return [f"{SUBJECT_PREFIX}{' '.join(topic)}"] if topic else []
