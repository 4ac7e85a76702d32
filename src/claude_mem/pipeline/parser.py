"""Reads an LLM reply in our XML dialect (see `prompts.py`) into drafts, tolerantly.

Model output is untrusted and often imperfect: wrapped in a code fence, cut off mid-tag,
mixed with prose, or hostile. So this is not an XML parser. It walks the text with plain
`str.find` calls, each starting where the previous one stopped, so the work is linear in the
input whatever it holds (no backtracking regex: 100k unclosed tags cost one pass), and it
never raises. Its rules:

- A code fence (```xml … ``` or ``` … ```) is unwrapped only when it wraps the whole reply.
- The first of `<observation`, `<summary`, `<skip_summary` decides what the reply is; with
  none, `<skip/>` means "nothing worth keeping", blank means empty, anything else is prose.
- Every `<observation>…</observation>` is read (a last one left open is read to the end),
  up to MAX_OBSERVATIONS kept.
  Fields take their first match, trimmed, with XML entities and CDATA undone; list fields
  take their child elements, empties dropped. No type → "discovery"; an unknown type is kept
  as written (lowercased, at most 32 chars). Concepts are lowercased, cut at the first ':',
  trimmed, deduplicated, and never equal to the type. An observation with no title,
  narrative, facts or concepts is dropped.
- `<tool_calls>` names the prompt's call numbers an observation covers ("1, 3, 5-7"; see
  `prompts.observation_prompt`). Given the batch's row ids in prompt order, each draft's
  `source_event_ids` are the ids of the calls it names; with none named, or none that
  exist, all of them (the whole batch, as before numbering).
- A summary counts when request, investigated, learned, completed or next_steps has text.
- Prose is not an error, except short prose that reads like a gateway's quota, auth or rate
  limit message (a CLI or proxy in front of the model may answer that way): `error` then
  holds the classified ProviderError for the caller to raise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from claude_mem.pipeline.providers.base import ObservationDraft, ProviderError, SummaryDraft
from claude_mem.vocabulary import DEFAULT_TYPE

__all__ = ["Kind", "ParsedResponse", "parse_response", "prose_error", "unwrap_fence"]

Kind = Literal["observations", "summary", "skip_summary", "skip", "empty", "prose"]

TYPE_CHARS = 32
MAX_OBSERVATIONS = 200  # far beyond any real reply; bounds the work a hostile one can cause
PROSE_ERROR_CHARS = 1_000  # longer prose is a confused model, not a gateway error message
CALLS_CHARS = 2_000  # of a <tool_calls> list read for numbers
MAX_CALL_RANGE = 10_000  # a wider range ("1-999999") is a confused model, not a batch
_SUMMARY_FIELDS = SummaryDraft.__struct_fields__
_TAG_END = " \t\r\n/>"


@dataclass(slots=True)
class ParsedResponse:
    """What a reply held. `error` is set only for prose that reads like an auth/quota failure."""

    kind: Kind
    observations: list[ObservationDraft] = field(default_factory=list)
    summary: SummaryDraft | None = None
    skip_reason: str = ""
    error: ProviderError | None = None


# --- scanning helpers ------------------------------------------------------------------------


@dataclass(slots=True)
class _Open:
    start: int  # index of '<'
    content: int  # index just after '>'
    empty: bool  # `<name/>` or `<name .../>`


def _fold(text: str) -> str:
    """Lowercased copy with the same length (so indexes match the original)."""
    folded = text.lower()
    if len(folded) != len(text):  # a few non-ASCII letters lowercase to two characters
        folded = text.translate(_ASCII_LOWER)
    return folded


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _find_open(folded: str, name: str, start: int, end: int) -> _Open | None:
    """The first `<name>` / `<name attrs>` / `<name/>` in [start, end), by a forward scan."""
    needle = "<" + name
    i = folded.find(needle, start, end)
    while i != -1:
        j = i + len(needle)
        if j >= end:
            return None
        char = folded[j]
        if char == ">":
            return _Open(i, j + 1, False)
        if char in _TAG_END:
            gt = folded.find(">", j, end)
            if gt == -1:
                return None  # no '>' anywhere later, so no later tag can open either
            return _Open(i, gt + 1, folded[gt - 1] == "/")
        i = folded.find(needle, j, end)
    return None


def _find_close(folded: str, name: str, start: int, end: int) -> tuple[int, int] | None:
    """(start, end) of the first `</name>` in [start, end)."""
    needle = "</" + name
    i = folded.find(needle, start, end)
    while i != -1:
        j = i + len(needle)
        if j < end and folded[j] in " \t\r\n>":
            gt = folded.find(">", j, end)
            return (i, end) if gt == -1 else (i, gt + 1)
        if j >= end:
            return None
        i = folded.find(needle, j, end)
    return None


_ENTITY = re.compile(r"&(?:(lt|gt|amp|quot|apos)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


def _entity(m: re.Match[str]) -> str:
    if m[1]:
        return _NAMED[m[1]]
    code = int(m[2]) if m[2] else int(m[3], 16)
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return m[0]
    return chr(code)


def _value(raw: str) -> str:
    """Trimmed text of an element: CDATA taken literally, otherwise entities undone."""
    text = raw.strip()
    if text.startswith("<![CDATA[") and text.endswith("]]>"):
        return text[9:-3].strip()
    return _ENTITY.sub(_entity, text).strip() if "&" in text else text


def _field(text: str, folded: str, name: str, start: int, end: int) -> str:
    opened = _find_open(folded, name, start, end)
    if opened is None or opened.empty:
        return ""
    closed = _find_close(folded, name, opened.content, end)
    if closed is None:
        return ""
    return _value(text[opened.content : closed[0]])


def _items(text: str, folded: str, names: tuple[str, str], start: int, end: int) -> list[str]:
    """Non-empty `<item>` texts inside the first `<container>` (read to `end` if unclosed)."""
    container, item = names
    opened = _find_open(folded, container, start, end)
    if opened is None or opened.empty:
        return []
    closed = _find_close(folded, container, opened.content, end)
    stop = end if closed is None else closed[0]
    values: list[str] = []
    pos = opened.content
    while True:
        child = _find_open(folded, item, pos, stop)
        if child is None:
            break
        if child.empty:
            pos = child.content
            continue
        child_close = _find_close(folded, item, child.content, stop)
        if child_close is None:
            break
        value = _value(text[child.content : child_close[0]])
        if value:
            values.append(value)
        pos = child_close[1]
    return values


# --- public API ------------------------------------------------------------------------------

_FENCE_OPEN = re.compile(r"\A\s*```(?:xml)?[ \t]*\r?\n", re.IGNORECASE)
_FENCE_CLOSE = re.compile(r"\r?\n```[ \t]*\Z")  # applied to text with trailing space removed


def unwrap_fence(text: str) -> str:
    """The inside of a code fence that wraps the whole text; otherwise the text unchanged."""
    opened = _FENCE_OPEN.match(text)
    if opened is None:
        return text
    body = text.rstrip()
    closed = _FENCE_CLOSE.search(body, opened.end() - 1)
    if closed is None:
        return text
    return body[opened.end() : closed.start()]


_ROOT = re.compile(r"<(observation|summary|skip_summary)(?=[\s/>])")
_SKIP = re.compile(r"<skip(?=[\s/>])")
_REASON = re.compile(r"""reason\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def parse_response(text: object, calls: Sequence[int] = ()) -> ParsedResponse:
    """Classify and read one reply; never raises. `calls` are the row ids of the tool calls
    the prompt numbered 1, 2, …; observations are mapped to them (module docstring)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str) or not text.strip():
        return ParsedResponse("empty")
    text = unwrap_fence(text)
    folded = _fold(text)
    root = _ROOT.search(folded)
    if root is None:
        if _SKIP.search(folded):
            return ParsedResponse("skip")
        return ParsedResponse("prose", error=prose_error(text))
    if root[1] == "observation":
        return ParsedResponse("observations", observations=_observations(text, folded, calls))
    if root[1] == "summary":
        return ParsedResponse("summary", summary=_summary(text, folded, root.start()))
    tag = text[root.start() : root.start() + 2_000]  # attributes are short; bound the scan
    gt = tag.find(">")
    reason = _REASON.search(tag if gt == -1 else tag[:gt])
    value = "" if reason is None else (reason[1] if reason[1] is not None else reason[2])
    return ParsedResponse("skip_summary", skip_reason=_value(value))


def _observations(text: str, folded: str, calls: Sequence[int]) -> list[ObservationDraft]:
    drafts: list[ObservationDraft] = []
    pos, end = 0, len(text)
    while len(drafts) < MAX_OBSERVATIONS:
        opened = _find_open(folded, "observation", pos, end)
        if opened is None:
            break
        if opened.empty:
            pos = opened.content
            continue
        closed = _find_close(folded, "observation", opened.content, end)
        stop = end if closed is None else closed[0]
        draft = _observation(text, folded, opened.content, stop)
        if draft is not None:
            named = _call_numbers(_field(text, folded, "tool_calls", opened.content, stop))
            chosen = [calls[n - 1] for n in named if n <= len(calls)]
            draft.source_event_ids = chosen or list(calls)
            drafts.append(draft)
        if closed is None:
            break  # no closer after this point, so every later block would be open too
        pos = closed[1]
    return drafts


_NUMBERS = re.compile(r"(\d{1,6})(?:\s*(?:-|–|\.\.)\s*(\d{1,6}))?")


def _call_numbers(text: str) -> list[int]:
    """The distinct call numbers (1-based) a `<tool_calls>` list names, in order."""
    found: set[int] = set()
    for m in _NUMBERS.finditer(text[:CALLS_CHARS]):
        low = int(m[1])
        high = int(m[2]) if m[2] else low
        if 1 <= low <= high and high - low < MAX_CALL_RANGE:
            found.update(range(low, high + 1))
    return sorted(found)


def _observation(text: str, folded: str, start: int, end: int) -> ObservationDraft | None:
    kind = _field(text, folded, "type", start, end).lower()[:TYPE_CHARS].strip() or DEFAULT_TYPE
    concepts: list[str] = []
    for raw in _items(text, folded, ("concepts", "concept"), start, end):
        concept = raw.lower().split(":", 1)[0].strip()
        if concept and concept != kind and concept not in concepts:
            concepts.append(concept)
    draft = ObservationDraft(
        type=kind,
        title=_field(text, folded, "title", start, end),
        subtitle=_field(text, folded, "subtitle", start, end),
        narrative=_field(text, folded, "narrative", start, end),
        facts=_items(text, folded, ("facts", "fact"), start, end),
        concepts=concepts,
    )
    if not (draft.title or draft.narrative or draft.facts or draft.concepts):
        return None
    return draft


def _summary(text: str, folded: str, start: int) -> SummaryDraft | None:
    opened = _find_open(folded, "summary", start, len(text))
    if opened is None or opened.empty:
        return None
    closed = _find_close(folded, "summary", opened.content, len(text))
    stop = len(text) if closed is None else closed[0]
    values = {name: _field(text, folded, name, opened.content, stop) for name in _SUMMARY_FIELDS}
    draft = SummaryDraft(**values)
    if not any(values[name] for name in _SUMMARY_FIELDS[:5]):
        return None
    return draft


# Phrases a CLI, proxy or gateway prints in place of a model reply when it refuses the call.
_QUOTA_PROSE = re.compile(
    r"usage limit|quota|credit balance|out of credits|insufficient[ _](?:credit|quota|balance|fund)"
    r"|billing|spend(?:ing)? limit|(?:weekly|monthly|daily|session|subscription) limit"
)
_AUTH_PROSE = re.compile(
    r"\b401\b|unauthori[sz]ed|invalid[ _-](?:x-)?api[ _-]?key|api[ _-]key (?:is )?(?:not valid|"
    r"invalid|expired|missing)|incorrect api key|authentication[ _](?:error|failed)"
    r"|failed to authenticate|/login\b|token (?:has )?expired|\b403 forbidden|permission_error"
)
_RATE_PROSE = re.compile(r"\b429\b|rate[ _-]limit|too many requests")


def prose_error(text: str) -> ProviderError | None:
    """The ProviderError a short prose reply stands for (quota, auth, rate limit), or None."""
    body = text.strip()
    if len(body) > PROSE_ERROR_CHARS:
        return None
    folded = _fold(body)
    message = f"the model answered with an error message instead of XML: {body[:200]}"
    if _QUOTA_PROSE.search(folded):
        return ProviderError("quota", message)
    if _AUTH_PROSE.search(folded):
        return ProviderError("auth", message)
    if _RATE_PROSE.search(folded):
        return ProviderError("rate_limit", message)
    return None
