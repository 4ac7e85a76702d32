"""Words for people: text shortened at a word boundary, counts with the right noun form.

Shared by search, the MCP tools and the CLI so a title or a count reads the same everywhere.
Standard library only.
"""

from __future__ import annotations

ELLIPSIS = "…"
# A cut backs up to the last space only this far (as a share of the limit): a single long
# token (a path, a URL) is cut inside rather than leaving almost nothing.
MIN_KEPT = 0.5
# Words of three letters or more that name no subject (a question matched to records).
STOPWORDS = frozenset(
    ("the", "and", "for", "with", "that", "this", "what", "when", "where", "which", "who",
     "why", "how", "did", "does", "was", "were", "are", "has", "have", "had", "can", "could",
     "should", "would", "our", "their", "there", "from", "into", "about", "any", "all", "not",
     "but", "you", "your", "they", "them", "then", "than", "its", "also", "been", "being")
)  # fmt: skip


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
    """'1 result', '3 results' (or the given plural: '2 matches')."""
    return f"{number} {singular if number == 1 else plural or singular + 's'}"
