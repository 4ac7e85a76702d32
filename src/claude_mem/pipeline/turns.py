"""One prompt turn put together from the host's transcript, the stored prompt and the tool
events: what a provider compresses.

A transcript read from the stored offset may hold more than the turn being compressed: the
tails of earlier turns, turns memory never saw (a private prompt, a `#nomem` turn), the next
turn's start. It is cut into segments at each person's prompt, and the turn's own segment is
the one whose prompt is the turn's prompt, or failing that the one holding the turn's tool
calls. Nothing else is used, so the words of a turn memory must not keep never reach it.
Segments before the turn's are passed over for good; those after it wait for their own turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from claude_mem.pipeline.providers.base import AgentWords, ToolEvent, Turn
from claude_mem.transcripts import Entry

MATCH_CHARS = 500  # of a prompt's text, compared whitespace-normalised


@dataclass(frozen=True, slots=True)
class Slice:
    """The turn's entries, and the offset just past what this turn consumed (None when it
    consumed nothing)."""

    entries: tuple[Entry, ...]
    end: int | None


def _segments(entries: Sequence[Entry]) -> list[list[Entry]]:
    """Entries cut before each person's prompt (a leading segment may have no prompt)."""
    segments: list[list[Entry]] = []
    for entry in entries:
        if entry.role == "user" or not segments:
            segments.append([entry])
        else:
            segments[-1].append(entry)
    return segments


def normal_prompt(text: str) -> str:
    """A prompt as turns and recovery compare it: whitespace-normalised, its first MATCH_CHARS."""
    return " ".join(text.split())[:MATCH_CHARS]


def turn_slice(
    entries: Sequence[Entry], prompt: str, events: Sequence[ToolEvent], *, newest: bool = False
) -> Slice:
    """The segment of `entries` that belongs to the turn of `prompt` and `events`. `newest`:
    no later prompt is known, so every segment but the last is older than this turn."""
    segments = _segments(entries)
    wanted = normal_prompt(prompt)
    ids = {event.tool_use_id for event in events if event.tool_use_id}
    found = None
    if wanted:
        found = next(
            (i for i, seg in enumerate(segments)
             if seg[0].role == "user" and normal_prompt(seg[0].text) == wanted),
            None,
        )  # fmt: skip
    if found is None and ids:
        found = next(
            (i for i, seg in enumerate(segments) if any(e.tool_use_id in ids for e in seg)),
            None,
        )
    if found is None:
        # Not found. When this is the newest turn, the segments before the last are older
        # ones memory never saw (passed over, not read again and again); the last may be the
        # next turn's. Otherwise later turns' segments may be among them: nothing is consumed.
        newer_possible = not newest or len(segments) < 2
        return Slice((), None if newer_possible else segments[-2][-1].end)
    return Slice(tuple(segments[found]), segments[found][-1].end)


def assemble(
    entries: Sequence[Entry], *, prompt_number: int | None, prompt: str, reply: str, closed: bool
) -> Turn:
    """The Turn of a slice: the agent's words, each placed before the tool call that followed
    it; the reply is the Stop's message, else the agent's last words."""
    words: list[AgentWords] = []
    pending: list[str] = []
    for entry in entries:
        if entry.role == "assistant" and entry.text:
            pending.append(entry.text)
        elif entry.role == "tool_use":
            words.extend(AgentWords(text, entry.tool_use_id) for text in pending)
            pending = []
    words.extend(AgentWords(text) for text in pending)
    last = next((w.text for w in reversed(words) if w.before is None), "")
    return Turn(prompt_number, prompt, tuple(words), reply or last, closed)
