"""The agent's own words as the offline summarizer: its prose cut into sentences, and the
sentences that state a cause, a finding, a decision or a change told apart from narration
("Let me look at…"), so titles and summaries carry what was learned, not what was done."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from claude_mem.pipeline.local.text import word_pattern
from claude_mem.subjects import content_words

SCAN_CHARS = 20_000  # of one text: the agent's prose is read this far
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`'\"(\[])")
# Emphasis marks around words, headings, quotes; not a run of asterisks ("shown as ****").
_MARKUP = re.compile(r"(?<!\*)\*\*(?=[^*\s])|(?<=[^*\s])\*\*(?!\*)|__|^#+\s*|^>\s*")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#+)\s*")

CAUSE_WORDS = word_pattern(
    r"because|root cause|caused(?: by)?|causes|turns out|turned out|the issue|the problem|"
    r"the bug|the culprit|the cause|due to|found that|the reason|which is why|that's why"
)
# Rules and gotchas: what a later session must not forget.
RULE_WORDS = word_pattern(
    r"must(?:n't)?|never|always|the rule|gotcha|caveat|careful|important|"
    r"has to|have to|instead of|rather than|requires?|only works|don't|do not"
)
CHANGE_WORDS = word_pattern(
    r"(?:I|I've|we|we've) (?:changed|fixed|replaced|switched|added|removed|renamed|moved|"
    r"extracted|updated|rewrote|made|split|inlined|introduced)|switch(?:ed|ing)? to|"
    r"now (?:uses?|returns?|handles?|keeps?|reads?|checks?|raises?|calls?|takes?|sums?)|"
    r"replac(?:ed|ing)|fixed|renamed|extracted|moved|refactored|implemented|added"
)
# Narration: what the agent is about to do, not what it found or changed.
_NARRATION = re.compile(
    r"^(?:(?:ok(?:ay)?|great|perfect|good|alright|sure|now|first|next|then|so)[,!.]?\s+)*"
    r"(?:let me|let's|i'll|i will|i'm going to|i am going to|i need to|i want to|i should|"
    r"we need to|time to|checking|looking|reading|running)\b",
    re.IGNORECASE,
)
_STATUS = word_pattern(
    r"(?:all )?(?:\d+ )?tests? (?:pass(?:es|ed)?|fail(?:s|ed)?)|"
    r"(?:all )?(?:\d+ )?(?:tests )?(?:passing|green)|done|looks good"
)
FINDING = 2  # the weight of a plain statement: neither cause, change, rule nor status
_INTENT_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|now|first|next|then|so)[,!.]?\s+)*"
    r"(?:let me|let's|i'll|i will|i'm going to|i am going to|i need to|i want to|we need to)\s+",
    re.IGNORECASE,
)
MIN_WORDS = 4  # a shorter sentence ("Found it.") says too little to stand as a title
MIN_PREFIX = 16  # a shorter sentence is the same as a longer one it begins only when equal
_TRAILER = re.compile(r"[\s.…,;:!?]+$")
_SPACE = re.compile(r"\s+")


def sentences(text: str) -> list[str]:
    """The text's sentences: code blocks, list markers and emphasis removed."""
    prose = re.sub(r"```.*?(?:```|$)", " ", text[:SCAN_CHARS], flags=re.DOTALL)
    found: list[str] = []
    for raw in prose.splitlines():
        line = _MARKUP.sub("", _LIST_MARKER.sub("", raw)).strip()
        found.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return found


def all_sentences(texts: Iterable[str]) -> list[str]:
    """The sentences of several texts in order, each once (a reply often repeats words)."""
    return list(dict.fromkeys(s for text in texts for s in sentences(text)))


def is_narration(sentence: str) -> bool:
    """'Let me look at…', 'I'll run the tests', 'Looking at the loader:': intent, not result."""
    return bool(_NARRATION.match(sentence)) or sentence.rstrip().endswith(":")


def intent(sentence: str) -> str:
    """What a narration says the agent set out to do ("Let me check the loader" → "Check
    the loader"); '' for any other sentence."""
    rest = _INTENT_LEAD.sub("", sentence).rstrip(":").strip()
    if rest == sentence.strip() or not rest:
        return ""
    return rest[0].upper() + rest[1:]


def weight(sentence: str) -> int:
    """How much a sentence says: a cause > a change or a rule > a finding > status; 0 for
    narration and fragments (never a title while anything better is there)."""
    if is_narration(sentence) or len(sentence.split()) < MIN_WORDS:
        return 0
    if CAUSE_WORDS.search(sentence):
        return 4
    if CHANGE_WORDS.search(sentence) or RULE_WORDS.search(sentence):
        return 3
    # Status ("done", "tests pass") is status only when little else is said: "Done: the
    # notes describe the ledger" states a finding.
    said_besides = len(_STATUS.sub(" ", sentence).split())
    return 1 if _STATUS.search(sentence) and said_besides < MIN_WORDS + 2 else FINDING


# Words that report work without saying what it was about: "I listed the files.", "It passes."
_WORK_WORDS = frozenset(
    content_words(
        """listed list looked look checked check read ran run done finished passes pass passed
        works work working worked file files folder directory test tests code output result
        results change changes everything all now good fine ok went through"""
    )
)
# A name: code in backticks, a path or dotted name, a call, snake_case or camelCase.
_NAMED = re.compile(r"`[^`]+`|\w\.\w|\w/\w|\w\(\)|[a-z0-9]_[a-z0-9]|[a-z][A-Z]")
THIN_WORDS = 3  # a sentence naming nothing needs this many words of its own to say something


def says_little(sentence: str) -> bool:
    """Whether a sentence reports work without its subject ("I listed the files.", "It
    passes."): status, narration or a fragment, or no name and under `THIN_WORDS` words
    beyond the words any report of work uses. Such words never title a unit."""
    if weight(sentence) < FINDING:
        return True
    if _NAMED.search(sentence):
        return False
    return len([w for w in content_words(sentence) if w not in _WORK_WORDS]) < THIN_WORDS


def best_sentence(candidates: Iterable[str]) -> str:
    """The sentence that states the most (earliest of the best); '' when all are narration."""
    best, best_weight = "", 0
    for sentence in candidates:
        score = weight(sentence)
        if score > best_weight:
            best, best_weight = sentence, score
    return best


def knowledge(candidates: Iterable[str]) -> list[str]:
    """Causes, rules and gotchas: the sentences a later session should learn from."""
    return [
        s
        for s in candidates
        if not is_narration(s) and (CAUSE_WORDS.search(s) or RULE_WORDS.search(s))
    ]


def changes(candidates: Iterable[str]) -> list[str]:
    """Sentences stating a change the agent made ("I switched the sum to Decimal")."""
    return [
        s
        for s in candidates
        if not is_narration(s) and CHANGE_WORDS.search(s) and not CAUSE_WORDS.search(s)
    ]


def _key(sentence: str) -> str:
    """The sentence as compared: case, spacing and its trailing punctuation or "…" ignored."""
    return _TRAILER.sub("", _SPACE.sub(" ", sentence).strip().lower())


def _same(a: str, b: str) -> bool:
    """Whether two keys say one sentence: equal, or one a long enough start of the other."""
    short, long = sorted((a, b), key=len)
    return short == long or (len(short) >= MIN_PREFIX and long.startswith(short))


def distinct_sentences(texts: Iterable[str], said: Sequence[str] = ()) -> list[str]:
    """The sentences of `texts` in order, each once and none already in `said` (sentences);
    of two forms of one sentence the longer stays, where the first stood."""
    taken = [_key(s) for s in said]
    kept: list[str] = []
    keys: list[str] = []
    for text in texts:
        for sentence in sentences(text):
            key = _key(sentence)
            if not key or any(_same(key, old) for old in taken):
                continue
            at = next((n for n, old in enumerate(keys) if _same(key, old)), None)
            if at is None:
                kept.append(sentence)
                keys.append(key)
            elif len(key) > len(keys[at]):
                kept[at], keys[at] = sentence, key
    return kept
