"""Words for people: text shortened at a word boundary, counts with the right noun form.

Shared by search, the MCP tools and the CLI so a title or a count reads the same everywhere.
Standard library only.
"""

from __future__ import annotations

ELLIPSIS = "…"
# A cut backs up to the last space only this far (as a share of the limit): a single long
# token (a path, a URL) is cut inside rather than leaving almost nothing.
MIN_KEPT = 0.5
# English function words: they say how something is put, never what it is about (full text
# does not rank by them; subject matching leaves them out).
_FUNCTION_TEXT = """a about above after again against all also am an and any are as at be because
    been
    before being below between both but by can could did do does doing done down during each
    etc few for from further get got had has have having he her here hers herself him
    himself his how i if in into is it its itself just me more most my myself no nor not
    now of off on once only or other our ours out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up us very was we were what when where which while who whom why will with
    would you your yours yourself"""
FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())
# Words of three letters or more that name no subject (a question matched to records).
STOPWORDS = frozenset(
    ("the", "and", "for", "with", "that", "this", "what", "when", "where", "which", "who",
     "why", "how", "did", "does", "was", "were", "are", "has", "have", "had", "can", "could",
     "should", "would", "our", "their", "there", "from", "into", "about", "any", "all", "not",
     "but", "you", "your", "they", "them", "then", "than", "its", "also", "been", "being")
)  # fmt: skip


def one_line(text: str) -> str:
    """`text` on one line, whitespace collapsed, nothing cut (stored whole, shortened where
    shown)."""
    return " ".join(text.split())


def shorten(text: str, limit: int) -> str:
    """`text` on one line (whitespace collapsed), at most `limit` characters; a longer text is
    cut at a word boundary and ends with '…'.

    Only the first `4 × limit` characters are read, so a caller may pass just that prefix of
    a huge text (SQL `substr(x, 1, 4 * limit + 1)`) and get the same result.
    """
    head = text[: 4 * limit + 1]
    line = " ".join(head[: 4 * limit].split())
    if len(line) <= limit and len(head) <= 4 * limit:
        return line
    if len(line) < limit:  # only whitespace after the part read
        return line + ELLIPSIS
    room = line[: limit - 1]
    if line[limit - 1] != " ":  # the cut falls inside a word: back up to its start
        space = room.rfind(" ")
        if space >= limit * MIN_KEPT:
            room = room[:space]
    return room.rstrip(" ,;:-") + ELLIPSIS


def counted(number: int, singular: str, plural: str | None = None) -> str:
    """'1 result', '3 results', '2 summaries' (or the given plural: '2 matches'): every count
    printed for people goes through here, so none reads '1 sessions'."""
    if number == 1:
        return f"{number} {singular}"
    return f"{number} {plural or _plural(singular)}"


def _plural(singular: str) -> str:
    """The regular English plural of the last word: 'summary' → 'summaries', 'key' → 'keys'."""
    if singular.endswith("y") and singular[-2:-1] not in ("", *"aeiou"):
        return singular[:-1] + "ies"
    return singular + "s"
