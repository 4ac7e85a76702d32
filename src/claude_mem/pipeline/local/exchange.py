"""Who said what about a rule in one turn: the user's sentences that set or correct one, whether
the agent accepts it, and the words it was last agreed in (deterministic, no model).

The user's sentences are read by their mood. An instruction ("keep …", "don't …", "from now
on …") or a norm ("X must …", "we'll use X instead of Y", a correction: "no — timeouts are
retried twice") is a rule the agent takes when it acknowledges it, takes it up in other words,
or acts on it. A statement of how things are ("timed-out jobs get three attempts"), a
preference ("I want …") or a bare imperative that may ask for a piece of work ("Round the
total once") is one only when the agent acknowledges it and says it back as how things are
("Understood: the total is rounded once …"), not as its own doing ("Moved the helpers …").
Questions, hesitations ("this feels like …"), options floated ("or we could …"), the user's
story and reports of a problem state none; a pushback or a question back takes nothing.

An instruction may also bound a request in its closing clause ("Switch the config to TOML, but
don't break existing repos").

The agreed words are the agent's restatement where it gives one (with its sentences that
restate what the user said goes with the rule), else, for a rule it acted on without saying it
back, what it says now holds about the prompt, then the user's words. The agent may also settle a
discussion itself ("Settled: <function> keys on <A> …") after the user chose or accepted: that
statement is the rule when it speaks of what was discussed. When the user leaves the choice to
the agent ("Which backend?", "What format do you suggest?") and the agent makes it and acts on
it, what it says now holds ("Settings live in shipkit.json …") is the rule: the user's question
delegated it. Word lists only name the cues
(acknowledgements, hedges, openers); the decision rests on who said what and what was said back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from claude_mem.pipeline.local.text import word_pattern
from claude_mem.pipeline.local.words import sentences
from claude_mem.subjects import content_words, overlap

# A rule's mood. Said as an instruction or a norm, it is a rule when the agent takes it up at
# all; said as how things are, or as a bare imperative that may be a task, only when the agent
# acknowledges it and says it back as how things are.
INSTRUCTS, STATES, DESCRIBES, REQUESTS = "instructs", "states", "describes", "requests"
PLAIN = "plain"  # a plain statement: a rule only when the agent acknowledges and restates it
SIMILAR_SHARED, SIMILAR_OVERLAP = 2, 0.5  # content words a restatement shares with the rule
MIN_WORDS = 3  # a shorter sentence ("keep it.") names no rule

_FLAGS = re.IGNORECASE
# Said anywhere in a sentence, these make it a rule, even inside a request for work.
_STRONG = word_pattern(
    r"from now on|going forward|from here on|henceforth|in (?:the )?future"
    r"|as a rule|the rule is|by convention|our convention|new rule|rule for"
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
# The normative mood: how something must be. In a report of a problem it says what was
# expected ("it should return 1.73"), a rule only when it also quantifies.
_NORMATIVE = word_pattern(r"must|should|shall|has to|have to|needs? to|ought to")
_EXPECTED = re.compile(r"\b(?:should|must)\b.*\bbut\b", _FLAGS)  # "should be X but is Y"
_QUANTIFIES = word_pattern(r"always|never|only|every|each|any|all|not|no")
_GENERAL = word_pattern(r"always|never|only|every|each|any|not|no|when|whenever|unless|per")
# Said first, these make the sentence a rule: "keep …", "we'll use …", "don't …".
_OPENING_RULE = re.compile(
    r"^(?:please\s+)?(?:keep|leave|prefer|avoid|stick (?:with|to)|don'?t|do not|never|always"
    r"|(?:we|you)(?:'ll| will| should| must|'d better) (?:use|go with|switch to|stick (?:with|to)"
    r"|keep|not|avoid|prefer)|let'?s (?:use|go with|switch to|stick (?:with|to)|keep)"
    r"|use \S+(?: \S+)?,? not\b)",
    _FLAGS,
)
_NOT_A_RULE = re.compile(
    r"^(?:please\s+)?(?:keep (?:going|trying|it up|at it|looking|working)"
    r"|don'?t (?:worry|mind|bother)|never mind)",
    _FLAGS,
)
# A correction: "no —", "actually,", "not quite:" followed by how things are.
_CORRECTION = re.compile(
    r"^(?:no+|nope|not quite|actually|wrong|wait|scratch that|change of plan|on second thought"
    r"|correction)\b[\s,.:;!—–-]*",
    _FLAGS,
)
# A sentence that opens with a verb is in the imperative: the words that cannot open one, and
# the second words that make the first its subject ("Retries are …").
_NOT_VERB_TEXT = """the a an this that these those my our your his her its their some any all
    each every no i we you he she it they me us them in on at for with from to by of after before
    when whenever if unless once since as while because so but and or then also just now here
    there please thanks thank hi hello hey ok okay yes yeah yep sure great nice cool good fine
    what why how which who where whether is are was were be been do does did can could should
    would will shall may might must has have had not never always let lets"""
_NOT_VERBS = frozenset(_NOT_VERB_TEXT.split())
_SUBJECT_OF_TEXT = (
    "is are was were has have had will would can could should must may might does did do"
)
_SUBJECT_OF = frozenset(_SUBJECT_OF_TEXT.split())
# Imperatives that ask for a piece of work, not for how things are to be.
_TASK = word_pattern(
    r"add|make|write|create|implement|fix|refactor|rename|move|run|check|list|show|explain|look"
    r"|find|investigate|debug|commit|push|update|remove|test|review|open|read|tell|give|try"
    r"|install|build|deploy|print|describe|summari[sz]e|go|continue|do|help|start|stop|see"
    r"|bump|upgrade|downgrade|release|publish|clean|format|lint|revert|undo|generate|download"
    r"|upload|copy|delete"
)
# A statement that reports a problem, or the user's own story, states no rule however it
# is acknowledged.
_PROBLEM = word_pattern(
    r"crash\w*|errors?|fail\w*|broke\w*|wrong|bugs?|regress\w*|exceptions?|traceback|issue"
    r"|problem|slow|stuck|missing|doesn'?t work|isn'?t working|stopped"
)
_NARRATES = re.compile(r"^(?:i|i'm|i've|my|me|thanks|thank you)\b", _FLAGS)
_HAPPENED = word_pattern(r"was|were|did|had|yesterday|last (?:night|week|time)|ago|this morning")
_PLEASE = re.compile(r"^please\W+", _FLAGS)
_CLAUSE = re.compile(r"\s*[:—–]\s*|\s+-\s+")
_BUT = re.compile(r"[,;]\s+but\s+", _FLAGS)
_WANTS = re.compile(r"^(?:i|we)(?:'d)? (?:want|need|prefer|like|rather)\b", _FLAGS)
_STATES = re.compile(
    r"\b(?:is|are|should|must|needs? to|has to|have to|goes|belongs?)\b.*\b(?:once|twice|only"
    r"|every|each|all|exactly|\d+)\b",
    _FLAGS,
)
# Not a rule however it is put: a question, a hesitation, an option floated.
_ASKED = re.compile(
    r"^(?:so|and|but|then)?[\s,]*(?:should|shall|can|could|would|will|does|did|is|are|was|were"
    r"|what|why|how|which|who|whether|do(?! not\b|n'?t\b))\b",
    _FLAGS,
)
_TENTATIVE = word_pattern(
    r"maybe|perhaps|possibly|probably|might|could|would|i think|i guess|i suppose|i wonder"
    r"|wondering|not sure|unsure|feels?|seems?|looks like|what if|how about|alternatively"
    r"|(?:one|another|an|the other) (?:option|approach|alternative|idea)|we can|you can"
    r"|suggest\w*|propos\w*|compared to|impl(?:y|ies)|hmm+|for now"
)
_OPTION = re.compile(r"^(?:or|alternatively|otherwise)\b", _FLAGS)
# A question that leaves a choice to the agent: what ought to be, not what is or why.
_DELIBERATES = word_pattern(r"should|shall|suggest|recommend|propose|prefer|best|which")
# The agent naming what it offers as its choice ("Proposal: …"): what follows is the choice.
_CHOICE_LEAD = re.compile(
    r"^\W*(?:proposal|recommendation|suggestion|my (?:pick|choice|proposal)|choice|decision)"
    r"\s*[:—–-]\s*",
    _FLAGS,
)
# The agent's reply: an acknowledgement first (taking a rule, or reporting work done), or a
# pushback, or a settlement it states.
_TAKING = (
    r"got it|understood|agreed|noted|will do|rule taken|taken|settled|decided|makes sense"
    r"|good (?:call|point)|fair(?: enough)?|confirmed|right"
)
_ASSENT = r"sure|ok(?:ay)?|yes|yep|of course|absolutely|sounds good|perfect"  # to a task too
_TAKES = re.compile(rf"^\W*(?:{_TAKING})\b", _FLAGS)
_AGREES = re.compile(rf"^\W*(?:{_TAKING}|{_ASSENT})\b", _FLAGS)
_ACK = re.compile(
    rf"^\W*(?:{_TAKING}|{_ASSENT}|done|changed|switched|reverted|fixed|updated)\b[\s,.:;!—–-]*",
    _FLAGS,
)
_SETTLES = re.compile(
    r"^\W*(?:settled|agreed|decided|rule taken|(?:so )?(?:the |new |final )?rule(?: is)?)"
    r"\s*[:—–-]\s*",
    _FLAGS,
)
_PUSHBACK = re.compile(
    r"^\W*(?:i (?:don'?t|do not) think|are you sure|i (?:can'?t|cannot|won'?t)|i disagree"
    r"|that (?:would|will|could) (?:break|cause|lose)|i'?d (?:advise|recommend) against"
    r"|but\b|however\b|hmm|not sure|careful|i'?d rather)",
    _FLAGS,
)
# The agent's own doing ("I'll set …", "Added …", "Here are …"): it acts on a rule or reports
# work, it does not state how things are.
_OWN_DOING = re.compile(
    r"^(?:i|i'll|i've|i'm|i'd|let me|now i|here|done|wrote|made|ran|built|took|split)\b", _FLAGS
)
_PAST = re.compile(r"^\w+ed\b", _FLAGS)  # "Added …", unless a participle: "Published … are"


def prompt_reports(prompt: str) -> bool:
    """The prompt asks for work on a problem ("why…", "fix…"): its always/never report it."""
    return bool(_WORK_REQUEST.search(prompt))


@dataclass(frozen=True)
class Rule:
    """A sentence of the user's that sets a rule, in the user's words, and its mood."""

    text: str
    mood: str  # INSTRUCTS, STATES, DESCRIBES, REQUESTS or PLAIN


def user_rules(prompt: str, *, reports: bool) -> list[Rule]:
    """The prompt's sentences that set or correct a rule, each in the user's words (a
    correction's opener dropped). `reports`: see `prompt_reports`."""
    return [rule for sentence in sentences(prompt) if (rule := _sentence_rule(sentence, reports))]


def _sentence_rule(sentence: str, reports: bool) -> Rule | None:
    """The sentence's rule, or an instruction in its closing clause where the sentence is at
    most a request: the limit the request is bounded by ("Switch the config to TOML, but don't
    break existing repos")."""
    rule = _rule(sentence, reports)
    if rule is not None and rule.mood in (INSTRUCTS, STATES):
        return rule
    parts = _BUT.split(sentence, maxsplit=1)
    limit = _rule(parts[1], reports) if len(parts) == 2 else None
    return limit if limit is not None and limit.mood == INSTRUCTS else rule


def _rule(sentence: str, reports: bool) -> Rule | None:
    if sentence.endswith("?") or _hedged(sentence):
        return None
    body = sentence
    corrected = _CORRECTION.match(sentence)
    if corrected and corrected.end() < len(sentence):
        body = sentence[corrected.end() :]
    if len(body.split()) < MIN_WORDS:
        return None
    asks = bool(_ASKS.search(body))
    if _STRONG.search(body) or (_OPENING_RULE.match(body) and not _NOT_A_RULE.match(body)):
        mood = INSTRUCTS
    elif (
        bool(_ALWAYS.search(body) and asks)
        or bool(_COMPARES.search(body) and asks)
        or bool(corrected and _STATES.search(body))
        or bool(
            _NORMATIVE.search(body)
            and not _EXPECTED.search(body)
            and (not reports or _QUANTIFIES.search(body))
        )
    ):
        mood = STATES
    elif _ALWAYS.search(body) and not reports and not _PROBLEM.search(body):
        mood = DESCRIBES
    elif any(_WANTS.match(part) or _imperative(part) for part in _clauses(body)) and not (
        prompt_reports(body)
    ):
        # Said for every case ("once, not per line", "whenever …"), it is how things are to be.
        mood = STATES if _GENERAL.search(body) else REQUESTS
    elif not (
        reports
        or _PROBLEM.search(body)
        or _NARRATES.match(body)
        or _HAPPENED.search(body)
        or _TASK.match(_PLEASE.sub("", body))
    ):
        mood = PLAIN
    else:
        return None
    return Rule(body[:1].upper() + body[1:], mood)


def _clauses(sentence: str) -> list[str]:
    """The sentence, and what follows its first colon or dash ("Page size: cap it at 250")."""
    parts = _CLAUSE.split(sentence, maxsplit=1)
    return [sentence, parts[1]] if len(parts) == 2 and parts[1] else [sentence]


def _imperative(sentence: str) -> bool:
    """The sentence opens with a verb that does not ask for a piece of work ("Round the total
    once", not "Add a test")."""
    words = re.findall(r"[\w']+", _PLEASE.sub("", sentence).lower())
    if len(words) < 2 or not words[0].isalpha() or words[0] in _NOT_VERBS:
        return False
    if words[1] in _SUBJECT_OF or re.search(r"(?:[^s]s|ed|ing)$", words[0]):
        return False
    return not _TASK.fullmatch(words[0])


@dataclass(frozen=True)
class Statement:
    """A sentence of the agent's reply that is not a question, an acknowledgement dropped."""

    text: str
    own: bool  # the agent's own doing ("I'll set …") or a hypothesis, not how things are
    answers: bool  # it follows the acknowledgement that opens the reply ("Understood: …")


def _hedged(sentence: str) -> bool:
    """A question put without its mark, an option floated, a hesitation."""
    return bool(_ASKED.match(sentence) or _OPTION.match(sentence) or _TENTATIVE.search(sentence))


def _statements(reply: str) -> list[Statement]:
    found = []
    for number, sentence in enumerate(sentences(reply)):
        if sentence.endswith("?"):
            continue
        lead = _ACK.match(sentence) or _CHOICE_LEAD.match(sentence)
        text = sentence[lead.end() :] if lead else sentence
        if len(text.split()) >= MIN_WORDS:
            # Its own doing, or a hypothesis ("that would …"): not how things are.
            own = bool(_OWN_DOING.match(text) or _TENTATIVE.search(text)) or _reports_work(text)
            found.append(Statement(_capital(text), own, bool(lead) and number == 0))
    return found


def _reports_work(text: str) -> bool:
    """`text` opens with a verb in the past ("Added retries to …"), not with a participle
    that describes its subject ("Published articles are …")."""
    head = re.findall(r"[\w']+", text.lower())[:4]
    return bool(_PAST.match(text)) and not any(word in _SUBJECT_OF for word in head)


def _capital(text: str) -> str:
    first = text.split(" ", 1)[0]
    return text[:1].upper() + text[1:] if first.isalpha() and first.islower() else text


def _similar(a: str, b: str, shared_words: int = SIMILAR_SHARED) -> bool:
    """`b` says most of what `a` does: with `SIMILAR_SHARED` words, a restatement; with one,
    an answer that takes the rule up in other words ("Two retries, then it fails")."""
    words_a, words_b = set(content_words(a)), set(content_words(b))
    shared = len(words_a & words_b)
    return shared >= shared_words and overlap(words_a, words_b) >= SIMILAR_OVERLAP


def accepted(reply: str, rules: list[Rule], *, acted: bool) -> list[Rule]:
    """The user's `rules` the agent takes: all when its reply acknowledges them first; else
    those it restates or takes up in other words, and those said as an instruction when it
    `acted` (changed something). A rule said as how things are ("exports never write a
    header") may be a report, and a bare imperative a task, so only an acknowledgement that says
    it back takes them. A reply not known yet (the turn compressed before it ended) takes the
    rules said as an instruction or a norm; a pushback or a question back none."""
    said = sentences(reply)
    if not said:
        return [rule for rule in rules if rule.mood in (INSTRUCTS, STATES)]
    if _PUSHBACK.match(said[0]) or (said[0].endswith("?") and not _ACK.match(said[0])):
        return []
    statements = _statements(reply)
    answer = statements[0] if statements and statements[0].answers else None

    def takes(rule: Rule) -> bool:
        if rule.mood in (INSTRUCTS, STATES):
            return (
                bool(_ACK.match(said[0]))
                or (acted and rule.mood == INSTRUCTS)
                or any(_similar(rule.text, statement.text, 1) for statement in statements)
            )
        # Said as how things are, or as a bare imperative: acknowledged, and said back as how
        # things are (an assent that could answer a task, in most of its words).
        if answer is None or answer.own:
            return rule.mood != PLAIN and answer is None and bool(_TAKES.match(said[0]))
        if _TAKES.match(said[0]) and rule.mood != PLAIN:
            return _shares(rule.text, answer.text, 1)
        return bool(_AGREES.match(said[0])) and _similar(rule.text, answer.text)

    return [rule for rule in rules if takes(rule)]


def agreed(reply: str, rules: list[Rule], prompt: str = "", *, acted: bool = False) -> list[str]:
    """The rules as last agreed: the agent's sentences that restate them (its own doing left
    out), in the reply's order, then the user's words for a rule it did not restate. What
    follows the reply's opening acknowledgement restates a rule it shares a word with; a
    later sentence one it says most of, or most of another plain sentence of the `prompt`
    that goes with the rule ("Never delete an invoice. Void it instead: …"). When the agent
    `acted` on the rules without saying them back, its sentences about the prompt say how they
    were carried out."""
    statements = [statement for statement in _statements(reply) if not statement.own]
    told = [s for s in sentences(prompt) if not s.endswith("?") and not _hedged(s)]

    def restates(statement: Statement, text: str) -> bool:
        return (statement.answers and _shares(text, statement.text, 1)) or _similar(
            text, statement.text
        )

    restating = [s for s in statements if any(restates(s, rule.text) for rule in rules)]
    if restating:
        restating = [
            s for s in statements if s in restating or any(_similar(t, s.text) for t in told)
        ]
    elif acted:
        # Carried out without being said back: what the agent says now holds about the
        # prompt is the rule as it was carried out.
        restating = [s for s in statements if _shares(prompt, s.text, 1)]
    unsaid = [r.text for r in rules if not any(restates(s, r.text) for s in restating)]
    return list(dict.fromkeys([*(s.text for s in restating), *unsaid]))


def settlement(reply: str, discussion: str) -> str:
    """The rule the agent states as settled ("Settled: …", "Agreed: …") about what the
    `discussion` (the session's prompts) spoke of, or ''."""
    for sentence in sentences(reply):
        lead = _SETTLES.match(sentence)
        if not lead or sentence.endswith("?"):
            continue
        text = sentence[lead.end() :]
        if len(text.split()) >= MIN_WORDS and _shares(discussion, text):
            return _capital(text)
    return ""


def leaves_choice(prompt: str) -> bool:
    """The prompt asks the agent to choose ("Which backend?", "Where should the settings
    live?"): a question of what ought to be, in a prompt that reports no problem."""
    return not prompt_reports(prompt) and any(
        sentence.endswith("?") and _DELIBERATES.search(sentence) for sentence in sentences(prompt)
    )


def chosen(reply: str, prompt: str) -> list[str]:
    """The agent's choice, as it says it now holds: the reply's sentences that state how things
    are (its own doing, hypotheses and questions left out) about what the `prompt` asked."""
    return [
        statement.text
        for statement in _statements(reply)
        if not statement.own and _shares(prompt, statement.text, 1)
    ]


def _shares(a: str, b: str, words: int = SIMILAR_SHARED) -> bool:
    return len(set(content_words(a)) & set(content_words(b))) >= words
