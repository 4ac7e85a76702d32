"""Which commits become memory, and of what type: rules on the message and the patch alone.

A commit is kept when it says something: a merge without a body, a bot's commit, a change of
whitespace alone, and a message that names no change ("wip", "fix typo") are skipped, and a
`fixup!`/`squash!` commit folds into the commit it amends. The type follows the words a
developer uses: a revert, and a body that states a rule or a choice (unless the commit is a
`fix:` or a typo fix, whose body explains the repair), is a `decision`; then
`bugfix`, `feature`, `refactor` by their verbs or conventional-commit prefix; `change`
otherwise. English only, like the local compressor's decisions.
"""

from __future__ import annotations

import re

from claude_mem.history.gitlog import Commit
from claude_mem.vocabulary import ObservationType

# Skip reasons, as `import --git` counts them.
MERGE, BOT, FORMAT, TRIVIAL, FOLDED = "merge", "bot", "format", "trivial", "folded"

_BOTS = re.compile(
    r"\[bot\]|^(dependabot|renovate|greenkeeper|github-actions|pre-commit-ci|snyk-bot|"
    r"mergify|allcontributors|semantic-release-bot|codecov)\b",
    re.IGNORECASE,
)
_FOLD = re.compile(r"^(fixup|squash|amend)! +(.+)$")
_TRIVIAL_TEXT = """wip . .. ... fix fixes fixed update updates updated typo typos minor tweak
    tweaks cleanup misc tmp temp test tests changes change stuff commit save oops more asdf init"""
_TRIVIAL = frozenset(_TRIVIAL_TEXT.split())
_TRIVIAL_PHRASES = frozenset({"fix typo", "fixed typo", "fix typos", "clean up",
                              "initial commit", "first commit"})  # fmt: skip
# A formatter's run, not a change that formats something ("Format totals with two decimals").
_FORMATTER = r"(black|isort|ruff format|prettier|gofmt|rustfmt|clang-format|autopep8|yapf)"
_FORMATTING = re.compile(
    rf"^(style(\(.+\))?:|re-?format(ted|ting)?\b|format(ted|ting)?( the)? "
    r"(code|codebase|files|sources|imports|everything|all|with|using)\b|format(ted|ting)?$|"
    rf"(run|ran|apply|applied) {_FORMATTER}|{_FORMATTER}\b|whitespace\b|lint(ing)?( fixes)?$)",
    re.IGNORECASE,
)
_REVERT = re.compile(
    r'^Revert "|^revert(\(.+\))?:|\bThis reverts commit ([0-9a-f]{7,40})', re.I | re.M
)
REVERTED = re.compile(r"This reverts commit ([0-9a-f]{7,40})")
_CONVENTIONAL = re.compile(r"^(\w+)(\([^)]*\))?!?:\s*")
_PREFIX_TYPES: dict[str, ObservationType] = {
    "fix": "bugfix", "bugfix": "bugfix", "hotfix": "bugfix",
    "feat": "feature", "feature": "feature",
    "refactor": "refactor", "perf": "refactor",
}  # fmt: skip
_TYPO = re.compile(r"\btypos?\b|\bspelling\b|\bmisspel", re.IGNORECASE)
_REPAIRS = re.compile(r"(?:hot)?fix(?:es|ed)?\b", re.IGNORECASE)
_DECIDES = re.compile(
    r"\b(we (chose|choose|decided|decide|keep|prefer|must|never|always|settled|agreed)|"
    r"(must|should) (not|never|always|stay|remain|be kept)|do not|don't|never|always|"
    r"instead of|rather than|on purpose|deliberately|intentional(ly)?|keep (it|the|this|them))\b",
    re.IGNORECASE,
)
_VERBS: tuple[tuple[ObservationType, re.Pattern[str]], ...] = (
    ("bugfix", re.compile(r"^(fix(es|ed)?|bug|hotfix|patch|repair|resolve[sd]?|correct(s|ed)?|"
                          r"prevent|handle|avoid)\b|\b(bug|crash|regression|broken|race)\b", re.I)),
    ("feature", re.compile(r"^(add(s|ed)?|implement(s|ed)?|introduce[sd]?|support(s|ed)?|"
                           r"new|allow(s|ed)?|enable[sd]?|create[sd]?)\b", re.I)),
    ("refactor", re.compile(r"^(refactor(s|ed)?|rename[sd]?|move[sd]?|extract(s|ed)?|"
                            r"simplif(y|ies|ied)|clean(s|ed)? up|restructure[sd]?|split|"
                            r"reorganis|reorganiz|inline[sd]?|dedup)", re.I)),
)  # fmt: skip
_TRAILER = re.compile(
    r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|cc|change-id|"
    r"reviewed-on|suggested-by|helped-by):.*$",
    re.IGNORECASE | re.MULTILINE,
)


def fold_target(commit: Commit) -> str | None:
    """The subject a `fixup!`/`squash!` commit amends, or None."""
    subject, folds = commit.subject, False
    while match := _FOLD.match(subject):  # "fixup! fixup! X" amends X too
        subject, folds = match.group(2).strip(), True
    return subject if folds else None


def skip_reason(commit: Commit) -> str | None:
    """Why `commit` is not memory (MERGE, BOT, FORMAT, TRIVIAL, FOLDED), or None to keep it."""
    body = body_text(commit)
    if len(commit.parents) > 1 and not body:
        return MERGE
    if _BOTS.search(commit.author) or _BOTS.search(commit.email.split("@")[0]):
        return BOT
    if fold_target(commit) is not None:
        return FOLDED
    subject = commit.subject
    if not body and _FORMATTING.search(subject):
        return FORMAT
    if len(commit.parents) <= 1 and not commit.files and not body:
        return FORMAT  # nothing but whitespace changed (git's -w leaves no hunk)
    if not body and _trivial(subject):
        return TRIVIAL
    return None


def _trivial(subject: str) -> bool:
    words = re.sub(r"[^\w\s.]", " ", _CONVENTIONAL.sub("", subject)).lower().split()
    if not words:
        return True
    phrase = " ".join(words)
    return phrase in _TRIVIAL_PHRASES or (len(words) <= 2 and all(w in _TRIVIAL for w in words))


def body_text(commit: Commit) -> str:
    """The body without trailers (sign-offs, co-authors, change ids): the rationale."""
    return re.sub(r"\n{3,}", "\n\n", _TRAILER.sub("", commit.body)).strip()


def reverted(commit: Commit) -> str | None:
    """The hash a revert names, if it names one."""
    match = REVERTED.search(commit.message)
    return match.group(1) if match else None


def commit_type(commit: Commit) -> ObservationType:
    """decision for reverts and for bodies that state a rule or a choice, unless the commit
    says it repairs something (`fix:`, "Fix …", a typo): its body explains the fix, it sets no
    rule; else by the subject."""
    if _REVERT.search(commit.message):
        return "decision"
    subject = commit.subject
    prefix = _CONVENTIONAL.match(subject)
    by_prefix = _PREFIX_TYPES.get(prefix.group(1).lower()) if prefix else None
    plain = _CONVENTIONAL.sub("", subject)
    repairs = by_prefix == "bugfix" or bool(_TYPO.search(subject) or _REPAIRS.match(plain))
    if not repairs and _DECIDES.search(body_text(commit)):
        return "decision"
    if by_prefix:
        return by_prefix
    for kind, pattern in _VERBS:
        if pattern.search(plain):
            return kind
    return "change"
