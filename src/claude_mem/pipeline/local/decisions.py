"""Rules the user states in conversation, kept as `decision` drafts (deterministic, no model).

A turn is a decision when a sentence of the user's prompt states or corrects a rule ("no —
timeouts are retried twice, never more", "keep the header row even when empty", "from now
on…", "we'll use X instead of Y") and the agent's reply does not push back. A request for
work ("fix the bug in x.py") or a question is not one. Tool events play no part: a chat-only
turn can hold a decision, and a turn with tools can hold one beside its units.

The draft carries the rule in the user's words (title), those words and the agent's
acknowledgement (narrative), the files and symbols named (facts) and `subject:` concepts,
the keys `store.supersede` matches a later amendment on.
"""

from __future__ import annotations

import re

from claude_mem.pipeline.local.text import FACT_CHARS, MAX_FACTS, clip, dedup, word_pattern
from claude_mem.pipeline.local.words import sentences
from claude_mem.pipeline.providers.base import ObservationDraft, Turn
from claude_mem.subjects import SUBJECT_PREFIX, content_words
from claude_mem.text import one_line

PROMPT_CHARS = 320  # the user's words kept in the narrative
REPLY_CHARS = 260  # the agent's acknowledgement kept in the narrative
SCAN_CHARS = 4000  # of a prompt or reply: a rule is said in a few sentences, not pages
MAX_SUBJECTS = 3
TOPIC_WORDS = 2  # a rule that names no file or symbol is keyed by its first content words

_FLAGS = re.IGNORECASE
# Said anywhere in a sentence, these make it a rule, even inside a request for work.
_STRONG = word_pattern(
    r"from now on|going forward|from here on|henceforth|in (?:the )?future"
    r"|as a rule|the rule is|by convention|our convention"
)
# "always" and "never" state a rule ("timeouts are retried twice, never more") unless the
# prompt reports a problem to work on ("the job never runs — why?"): then only where the
# sentence asks for something.
_ALWAYS = word_pattern(r"always|never|only ever")
_WORK_REQUEST = word_pattern(
    r"why|fix|find out|look into|investigate|debug|figure out|can you|could you"
    r"|what'?s wrong|broken|fails?|bug"
)
# Comparisons make a rule only where the sentence asks for something ("use X instead of Y"):
# a report of what happened ("it charged 1.72 instead of 1.73") states none.
_COMPARES = word_pattern(r"instead of|rather than|no more than|at most|at least")
_ASKS = word_pattern(
    r"should|must|use|keep|prefer|want|needs? to|has to|have to|let'?s|we'?ll|we will"
    r"|make (?:it|them|sure)|go with|stick (?:with|to)|switch to"
)
# Said first, these make the sentence a rule: "keep …", "we'll use …", "don't …".
_OPENING_RULE = re.compile(
    r"^(?:please\s+)?(?:keep|leave|prefer|avoid|stick (?:with|to)|don'?t|do not|never"
    r"|(?:we|you)(?:'ll| will| should| must|'d better) (?:use|go with|switch to|stick (?:with|to)"
    r"|keep|not|avoid|prefer)|let'?s (?:use|go with|switch to|stick (?:with|to)|keep)"
    r"|use \S+(?: \S+)?,? not\b)",
    _FLAGS,
)
_NOT_A_RULE = re.compile(
    r"^(?:please\s+)?(?:keep (?:going|trying|it up|at it|looking|working)"
    r"|don'?t (?:worry|mind|bother))",
    _FLAGS,
)
# A correction: "no —", "actually,", "not quite:" followed by how things are.
_CORRECTION = re.compile(r"^(?:no+|nope|not quite|actually|wrong|wait)\b[\s,.:;!—–-]*", _FLAGS)
_STATES = re.compile(
    r"\b(?:is|are|should|must|needs? to|has to|have to|goes|belongs?)\b.*\b(?:once|twice|only"
    r"|every|each|all|exactly|\d+)\b",
    _FLAGS,
)
# The agent does not take the rule when it answers like this.
_PUSHBACK = re.compile(
    r"^\W*(?:i (?:don'?t|do not) think|are you sure|i (?:can'?t|cannot|won'?t)|i disagree"
    r"|that (?:would|will) break|i'?d (?:advise|recommend) against)",
    _FLAGS,
)
_PATH = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+\.[a-z][a-z0-9]{0,5}\b")
_IDENTIFIER = re.compile(
    r"`([^`\s]{2,60})`|\b([A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]+"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?=\()|[A-Za-z_]\w*(?=\(\)))"
)
_NOT_PATHS = frozenset({"e.g", "i.e", "etc.", "vs."})


def decision(turn: Turn, *, worked: bool = False) -> ObservationDraft | None:
    """The turn's rule as a `decision` draft, or None when the user stated no rule or the
    agent pushed back on it. `worked`: the turn changed something (edits, commits)."""
    prompt = turn.prompt[:SCAN_CHARS].strip()
    # A turn that changed things worked on a request; a rule in it is said as one.
    reports = worked or bool(_WORK_REQUEST.search(prompt))
    rules = [rule for sentence in sentences(prompt) if (rule := _rule(sentence, reports))]
    if not rules or _PUSHBACK.match(turn.reply[:SCAN_CHARS]):
        return None
    rule = " ".join(rules)
    reply = turn.reply[:SCAN_CHARS]
    files, symbols = named(f"{prompt}\n{reply}")
    narrative = f"The user: {clip(prompt, PROMPT_CHARS)}"
    if reply.strip():
        narrative += f"\nThe agent: {clip(reply, REPLY_CHARS)}"
    facts = [*(f"File: {path}" for path in files), *(f"Symbol: {name}" for name in symbols)]
    return ObservationDraft(
        type="decision",
        title=one_line(rule),
        narrative=narrative,
        facts=dedup(clip(fact, FACT_CHARS) for fact in facts)[:MAX_FACTS],
        concepts=["decision", *subject_keys(rule, files, symbols)],
    )


def _rule(sentence: str, reports: bool) -> str:
    """The sentence as a rule in the user's words (a correction's opener dropped), or ''.
    `reports`: the prompt reports a problem to work on (module constants)."""
    if sentence.endswith("?"):
        return ""
    body = sentence
    corrected = _CORRECTION.match(sentence)
    if corrected and corrected.end() < len(sentence):
        body = sentence[corrected.end() :]
    asks = bool(_ASKS.search(body))
    is_rule = (
        bool(_STRONG.search(body))
        or bool(_ALWAYS.search(body) and (asks or not reports))
        or bool(_COMPARES.search(body) and asks)
        or (bool(_OPENING_RULE.match(body)) and not _NOT_A_RULE.match(body))
    )
    if corrected and not is_rule:
        is_rule = bool(_STATES.search(body))
    if not is_rule or len(body.split()) < 3:
        return ""
    return body[:1].upper() + body[1:]


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
