"""A session's one summary, kept up to date: each turn's draft (from any provider) is folded
into what the session's summary already says, so a four-turn chat is one record, not four.

- Request: the session's first request (a later turn's prompt is one of its steps).
- Learned, Completed, Investigated: every turn's sentences, each once, newest kept whole
  when a field outgrows `FIELD_CHARS` (the oldest sentences go first).
- Next steps: the newest turn's only; what an earlier turn left open and this one did not
  repeat is taken as done. Notes: the newest turn's, else the earlier ones'.

No sentence is said twice, in a field or across them: a sentence already in Learned leaves
Completed and Next steps, and one that is a cut copy of another ("…") or its shorter form
(a file list that grew) gives way to the longer.
"""

from __future__ import annotations

from collections.abc import Sequence

from claude_mem.pipeline.local.words import distinct_sentences
from claude_mem.records import SummaryDraft

FIELD_CHARS = 2_000  # of one accumulated field: about four turns' worth of a local summary
# The fields in the order they claim a sentence: a cause stated in both Learned and Next
# steps is learned, not a step.
_CLAIM_ORDER = ("learned", "completed", "investigated", "next_steps")


def _bounded(kept: list[str]) -> str:
    """The sentences joined, the oldest dropped while they exceed `FIELD_CHARS` (the newest
    one always stays, whole)."""
    while len(kept) > 1 and len(" ".join(kept)) > FIELD_CHARS:
        kept = kept[1:]
    return " ".join(kept)


def updated(earlier: Sequence[SummaryDraft], latest: SummaryDraft) -> SummaryDraft:
    """The session's summary once `latest` (the newest turn's draft) is folded into the
    `earlier` versions (oldest first; none for a session's first summary)."""
    versions = [*earlier, latest]
    fields: dict[str, list[str]] = {}
    said: list[str] = []
    for name in _CLAIM_ORDER:
        texts = (
            [latest.next_steps] if name == "next_steps" else [getattr(v, name) for v in versions]
        )
        fields[name] = distinct_sentences(texts, said)
        said.extend(fields[name])
    request = next((v.request for v in versions if v.request.strip()), "")
    notes = next((v.notes for v in reversed(versions) if v.notes.strip()), "")
    return SummaryDraft(
        request=request,
        investigated=_bounded(fields["investigated"]),
        learned=_bounded(fields["learned"]),
        completed=_bounded(fields["completed"]),
        next_steps=_bounded(fields["next_steps"]),
        notes=notes,
    )
