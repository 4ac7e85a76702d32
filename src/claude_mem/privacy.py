"""The one place that decides what text may leave a hook: tag stripping and secret redaction.

Anything inside a memory tag must never reach the database, logs, vector index or an LLM,
so every writer calls :func:`clean_text` (or :func:`clean_value`) first. The rules fail
closed: an unclosed tag hides the rest of the text. Every scan is linear-time because the
input is untrusted and the hook runs on the user's critical path.
"""

from __future__ import annotations

# `re` is imported where a rule first runs: text with no '<' and no trigger word (see
# _TRIGGER_WORDS), most of what a hook sees, needs no pattern, and `re` (with the `enum` and
# `functools` it imports) costs a hook process more than its work.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterator
    from typing import TypeVar

    T = TypeVar("T")

__all__ = [
    "MEMORY_TAGS",
    "PROTOCOL_TAGS",
    "clean_text",
    "clean_value",
    "is_fully_private",
    "is_protocol_payload",
    "redact_secrets",
    "strip_tags",
]

MEMORY_TAGS: tuple[str, ...] = (
    "private",
    "claude-mem-context",
    "system_instruction",
    "system-instruction",
    "persisted-output",
    "system-reminder",
)
PROTOCOL_TAGS: tuple[str, ...] = ("task-notification",)

_MAX_PASSES = 8  # fixed-point rounds; hostile input that never settles is dropped
_MAX_DEPTH = 200
_ELIDED = "[elided: nesting too deep]"
_PROTOCOL_MAX_CHARS = 256 * 1024


# --- tag stripping ---------------------------------------------------------------------------


# Every pattern is compiled on first use: a hook process cleans text once, and most text
# never reaches most rules (no '<', no trigger word), so compiling them all at import would
# cost each hook more than the cleaning.


def _once(compile_: Callable[..., T]) -> Callable[..., T]:
    """`compile_` run once per arguments, then remembered: functools.cache, which a hook
    process should not import for this (it brings collections)."""
    made: dict[tuple[object, ...], T] = {}

    def cached(*args: object) -> T:
        if args not in made:
            made[args] = compile_(*args)
        return made[args]

    return cached


@_once
def _tag_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    import re  # noqa: PLC0415 - see the note at the top

    # Group 1: name of a closing tag. Group 2: name of an opening tag; group 3 is set when that
    # opener is a bare `<name>`, otherwise attributes follow and the tag runs to the next '>'.
    # Only literals and a possessive `\s*+`, so the engine never backtracks across the text.
    alt = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(rf"<(?:/({alt})\s*+>|({alt})(?:(>)|(?=\s)))")


def _regions(text: str) -> Iterator[tuple[int, int]]:
    """Yield (start, end) of each tag region, in order; end is len(text) when never closed.

    One left-to-right walk over the tag tokens with a depth counter. Searching for an
    opener's '>' never rescans: tokens up to that '>' are skipped, so the next search starts
    after it, and when there is none the walk ends.
    """
    skip = 0  # tokens before this sit inside the attributes of a tag already consumed
    name: str | None = None  # tag name of the region we are in
    depth = start = 0
    for m in _tag_pattern(MEMORY_TAGS).finditer(text):
        if skip and m.start() < skip:
            continue
        group = m.lastindex  # 1: closer, 2: opener with attributes, 3: bare opener
        if group == 1:
            if m[1] == name:  # stray closers (name is None) stay in the text
                depth -= 1
                if depth == 0:
                    yield start, m.end()
                    name = None
            continue
        opening = m[2]
        if name is not None and opening != name:  # other tag names are plain content
            continue
        if group == 2:
            gt = text.find(">", m.end())
            if gt == -1:  # `<private attr...` and no '>' anywhere after: fail closed
                yield (m.start() if name is None else start), len(text)
                return
            skip = gt + 1
            if text[gt - 1] == "/":  # self-closing `<private x/>` holds nothing
                continue
        if name is None:
            name, depth, start = opening, 1, m.start()
        else:
            depth += 1
    if name is not None:
        yield start, len(text)


def _strip_once(text: str) -> str | None:
    """Remove all regions once; None when there was nothing to remove."""
    parts: list[str] = []
    kept = 0
    for start, end in _regions(text):
        parts.append(text[kept:start])
        kept = end
    if not parts:
        return None
    parts.append(text[kept:])
    return "".join(parts).strip()


def strip_tags(text: str) -> str:
    """Remove every memory-tag region; result is .strip()-ed.

    Removing a region can splice a new tag together (`<<private>x</private>private>...`), so
    this repeats until nothing changes, which also makes it idempotent. Input that is still
    producing new tags after several rounds is hostile and is dropped entirely.
    """
    if "<" not in text:  # no tag can start without one
        return text.strip()
    for _ in range(_MAX_PASSES):
        stripped = _strip_once(text)
        if stripped is None:
            return text.strip()
        text = stripped
    return ""


def is_fully_private(text: str) -> bool:
    """True when text had content but nothing survives strip_tags.

    Lets hooks skip a prompt that was private as a whole instead of storing an empty record.
    """
    return bool(text) and not text.isspace() and not strip_tags(text)


@_once
def _protocol_patterns() -> dict[str, tuple[re.Pattern[str], re.Pattern[str]]]:
    """Each protocol tag's (opener, any tag of that name)."""
    import re  # noqa: PLC0415 - see the note at the top

    return {
        name: (
            re.compile(rf"<{re.escape(name)}(?:(>)|(?=\s))"),
            re.compile(rf"</?{re.escape(name)}(?![^\s/>])"),
        )
        for name in PROTOCOL_TAGS
    }


def is_protocol_payload(text: str) -> bool:
    """True when the whole text is exactly ONE protocol block (e.g. `<task-notification>`).

    Such messages are agent-to-agent plumbing, not user intent, so hooks skip recording them.
    Anything around or nested inside the block means a person wrote it, so it is recorded.
    """
    if len(text) > _PROTOCOL_MAX_CHARS:
        return False
    body = text.strip()
    if not body.endswith(">"):
        return False
    head = body[:-1].rstrip()
    for name in PROTOCOL_TAGS:
        closer = "</" + name
        if not head.endswith(closer):
            continue
        opener, any_tag = _protocol_patterns()[name]
        close_start = len(head) - len(closer)
        m = opener.match(body)
        if m is None:
            continue
        if not m.group(1):
            gt = body.find(">", m.end(), close_start)
            if gt == -1 or body[gt - 1] == "/":
                continue
        if any_tag.search(body, m.end(), close_start) is None:
            return True
    return False


# --- secret redaction ------------------------------------------------------------------------

# Already-redacted values must never match again, or redaction would not be idempotent.
_MARK = r"\[REDACTED:[a-z0-9-]{1,32}\]"
_CLOSERS = ")]}>"

# Value-shaped tokens, replaced whole. Each pattern starts with a literal so the engine can
# skip ahead quickly; the left boundary is a lookbehind placed after that literal for the same
# reason. Unbounded runs are at the end of the pattern or possessive: no backtracking.
_TOKEN_SOURCES: tuple[tuple[str, str], ...] = (
    # No END line: everything after BEGIN may be key material, so fail closed.
    (
        r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY-----"
        r"(?:.*?-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY-----|.*)",
        "private-key",
    ),
    (r"eyJ(?<![\w-]eyJ)[\w-]++\.eyJ[\w-]++\.[\w-]*+", "jwt"),
    (r"sk-(?<![A-Za-z0-9]sk-)[\w-]{20,}", "api-key"),
    (r"gh(?<!\wgh)[pousr]_[A-Za-z0-9]{30,}", "github-token"),
    (r"github_pat_(?<!\wgithub_pat_)\w{40,}", "github-token"),
    (r"AKIA(?<!\wAKIA)[A-Z0-9]{16}(?!\w)", "aws-access-key"),
    (r"ASIA(?<!\wASIA)[A-Z0-9]{16}(?!\w)", "aws-access-key"),
    (r"xox(?<![\w-]xox)[baprs]-[A-Za-z0-9-]{10,}", "slack-token"),
    (r"AIza(?<![\w-]AIza)[\w-]{35,}", "google-api-key"),
)


@_once
def _token_rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Compiled on first use: most text never needs them (see _TRIGGER_WORDS)."""
    import re  # noqa: PLC0415 - see the note at the top

    return tuple(
        (re.compile(p, re.DOTALL | re.ASCII), f"[REDACTED:{k}]") for p, k in _TOKEN_SOURCES
    )


# Only the password of `scheme://user:password@host`; it runs to the last '@' of the authority.
_URL_PASSWORD = rf"(://[^\s/?#@:]*+:)(?!{_MARK}@)[^\s/?#]+(?=@)"
_URL_PASSWORD_REPL = r"\1[REDACTED:url-password]"

# Case-insensitive rules run on a lowercased copy of the same length, so offsets match. Each
# rule starts with a literal, which the engine finds by fast search; `(?i)` or a leading group
# would make it try every position (bench/privacy_bench.py). Keys, quotes, separators stay.
# Keys have no left boundary, so prefixes are kept as they are (DB_PASSWORD, client_secret).
_FOLDED_MARK = _MARK.replace("REDACTED", "redacted")
_SEP = r"(?>\\?[\"']?[ \t]*+(?:=>|[:=]=?)[ \t]*+)"
_PLAIN = r"[^\s\"'`,;&]"  # an unquoted value runs to whitespace, a quote or a list separator
_VALUE = (
    rf"(?:\"(?!{_FOLDED_MARK}(?![^\"\\\n]))(?P<dq>[^\"\\\n]*+(?:\\.[^\"\\\n]*+)*+)"
    rf"|'(?!{_FOLDED_MARK}(?![^'\\\n]))(?P<sq>[^'\\\n]*+(?:\\.[^'\\\n]*+)*+)"
    rf"|\\[\"'](?!{_FOLDED_MARK}(?![^\"'\\\n]))(?P<eq>[^\"'\\\n]*+)"  # JSON inside a string
    rf"|(?!\\[\"']|{_FOLDED_MARK}[)\]}}>]*+(?!{_PLAIN}))(?P<uq>{_PLAIN}++))"
)
_FOLDED_SOURCES: tuple[tuple[str, str], ...] = (
    (
        r"authorization(?>\\?[\"']?[ \t]*+[:=][ \t]*+\\?[\"']?"
        r"(?:(?:bearer|basic|token|digest)[ \t]++)?+)"
        rf"(?!{_FOLDED_MARK}[)\]}}>]*+(?![^\s\"'`,;&\\]))(?P<av>[^\s\"'`,;&\\]{{8,}})",
        "auth-token",
    ),
    (r"bearer(?<![a-z0-9_]bearer)[ \t]++(?P<bv>[a-z0-9._~+/-]{16,}=*)", "auth-token"),
    (r"passw(?:ord|d)" + _SEP + _VALUE, "password"),
    (r"pwd" + _SEP + _VALUE, "password"),
    (r"secret(?:[_-]?key)?+" + _SEP + _VALUE, "secret"),
    (r"token" + _SEP + _VALUE, "token"),
    (r"api[_-]?key" + _SEP + _VALUE, "api-key"),
    (r"private[_-]?key" + _SEP + _VALUE, "private-key"),
    (r"aws[_-]?secret[_-]?access[_-]?key" + _SEP + _VALUE, "aws-secret"),
)


@_once
def _folded_rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Compiled on first use: most text never needs them (see _TRIGGER_WORDS)."""
    import re  # noqa: PLC0415 - see the note at the top

    return tuple((re.compile(p), f"[REDACTED:{k}]") for p, k in _FOLDED_SOURCES)


# A dict key that names a secret hides its whole scalar value, the structured twin of the
# `key=value` rules above (`{"DB_PASSWORD": "hunter2"}` has no separator inside one string).
_SECRET_KEY = (
    r"(?:(?P<password>passw(?:ord|d)|pwd)|(?P<aws_secret>aws[_-]?secret[_-]?access[_-]?key)"
    r"|(?P<secret>secret(?:[_-]?key)?)|(?P<token>token)|(?P<api_key>api[_-]?key)"
    r"|(?P<private_key>private[_-]?key))\Z"
)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _folded_spans(text: str) -> list[tuple[int, int, str]]:
    folded = text.lower()
    if len(folded) != len(text):  # a few non-ASCII letters lowercase to two characters
        folded = text.translate(_ASCII_LOWER)
    spans: list[tuple[int, int, str]] = []
    for pattern, marker in _folded_rules():
        for m in pattern.finditer(folded):
            group = m.lastgroup or ""  # the value group is always the last one to close
            start, end = m.span(group)
            if group in ("av", "uq"):  # brackets at the end close the surrounding expression
                end = start + len(text[start:end].rstrip(_CLOSERS))
            if end > start:
                spans.append((start, end, marker))
    spans.sort()
    return spans


def _redact_once(text: str) -> str:
    import re  # noqa: PLC0415 - see the note at the top

    for pattern, marker in _token_rules():
        text = pattern.sub(marker, text)
    text = re.sub(_URL_PASSWORD, _URL_PASSWORD_REPL, text)
    parts: list[str] = []
    kept = 0
    for start, end, marker in _folded_spans(text):
        if start < kept:  # inside a value already replaced (`password=token=x`)
            continue
        parts.append(text[kept:start])
        parts.append(marker)
        kept = end
    if not parts:
        return text
    parts.append(text[kept:])
    return "".join(parts)


# Every rule above (and _SECRET_KEY below) needs one of these lowercased literals; text
# without any is returned at once, without a pattern. Most text has none.
_TRIGGER_WORDS: tuple[str, ...] = (
    "-----begin", "eyj", "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "akia",
    "asia", "xox", "aiza", "://", "authorization", "bearer", "passw", "pwd", "secret", "token",
    "apikey", "api_key", "api-key", "privatekey", "private_key", "private-key",
)  # fmt: skip


def _triggered(folded: str) -> bool:
    """Whether lowercased text holds a trigger word: False means no secret rule can match."""
    return any(word in folded for word in _TRIGGER_WORDS)


def redact_secrets(text: str) -> str:
    """Replace value-shaped secrets with a marker like [REDACTED:api-key].

    Keys and separators stay (`DB_PASSWORD=[REDACTED:password]`) so the record still reads
    naturally. A replacement can splice text into a new match, so this repeats until stable.
    """
    if not _triggered(text.lower()):
        return text
    for _ in range(_MAX_PASSES):
        redacted = _redact_once(text)
        if redacted == text:
            break
        text = redacted
    return text


# --- entry points for writers ----------------------------------------------------------------


def clean_text(text: str, *, redact: bool = True) -> str:
    """strip_tags, then (if redact) redact_secrets: what every writer calls before storing.

    Alternates the two until neither changes anything, so cleaning is idempotent; if they keep
    feeding each other the text is hostile and is dropped.
    """
    cleaned = strip_tags(text)
    if not redact:
        return cleaned
    for _ in range(_MAX_PASSES):
        redacted = redact_secrets(cleaned)
        if redacted == cleaned:
            return cleaned
        cleaned = strip_tags(redacted)
        if cleaned == redacted:
            return cleaned
    return ""


def _secret_marker(key: object, value: object) -> str | None:
    """The marker replacing `value` when `key` names a secret, else None."""
    if not isinstance(key, str) or isinstance(value, bool):
        return None
    if not isinstance(value, (str, int, float)) or value == "":
        return None
    folded = key.lower()
    if not _triggered(folded):  # no secret name ends the key (the common case: no pattern)
        return None
    import re  # noqa: PLC0415 - see the note at the top

    if re.fullmatch(_MARK, str(value)):
        return None
    m = re.search(_SECRET_KEY, folded)
    return None if m is None else f"[REDACTED:{(m.lastgroup or '').replace('_', '-')}]"


def _clean_key(key: object, redact: bool) -> object:
    if isinstance(key, str):
        return clean_text(key, redact=redact)
    if key is None or isinstance(key, (bool, int, float)):
        return key
    return clean_text(str(key), redact=redact)


def clean_value(value: object, *, redact: bool = True) -> object:
    """Recursively clean a JSON-like value (tool inputs and outputs) before storing it.

    Keys are cleaned too, since they can carry secrets. Lists, tuples and sets become lists;
    unknown objects become their cleaned str(). Iterative, so hostile nesting cannot raise
    RecursionError; anything nested deeper than 200 levels is replaced by a marker. A container
    seen twice (shared or cyclic) is cleaned once and shared in the result, so hostile sharing
    cannot blow up exponentially.
    """
    root: list[object] = [None]
    # (source, depth, list to write the cleaned value into, index in that list)
    stack: list[tuple[object, int, list[object], int]] = [(value, 0, root, 0)]
    # Dicts are filled once all their values are cleaned: (dict, cleaned keys, cleaned values)
    dicts: list[tuple[dict[object, object], list[object], list[object]]] = []
    seen: dict[int, object] = {}  # id(source container) -> its cleaned copy
    while stack:
        src, depth, target, slot = stack.pop()
        result: object
        if depth > _MAX_DEPTH:
            result = _ELIDED
        elif isinstance(src, str):
            result = clean_text(src, redact=redact)
        elif src is None or isinstance(src, (bool, int, float)):
            result = src
        elif id(src) in seen:
            result = seen[id(src)]
        elif isinstance(src, (dict, list, tuple, set, frozenset)):
            items = list(src.values() if isinstance(src, dict) else src)
            cleaned: list[object] = [None] * len(items)
            if isinstance(src, dict):
                keys = [_clean_key(key, redact) for key in src]
                if redact:
                    for i, key in enumerate(keys):
                        items[i] = _secret_marker(key, items[i]) or items[i]
                result = {}
                dicts.append((result, keys, cleaned))
            else:
                result = cleaned
            seen[id(src)] = result
            stack.extend((item, depth + 1, cleaned, i) for i, item in enumerate(items))
        else:
            result = clean_text(str(src), redact=redact)
        target[slot] = result
    for mapping, keys, values in dicts:
        mapping.update(zip(keys, values, strict=True))
    return root[0]
