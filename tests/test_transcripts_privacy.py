"""Property: no byte of a private region or a secret in a transcript reaches a returned Entry."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from claude_mem.transcripts import read_since
from tests.test_privacy_store import hidden


def lines(texts: list[str]) -> list[dict[str, object]]:
    """Each text once as a prompt, assistant words, a tool result and a tool's name."""
    out: list[dict[str, object]] = []
    for n, text in enumerate(texts):
        call = f"toolu_{n}"
        out += [
            {"type": "user", "message": {"role": "user", "content": text}},
            {"type": "assistant", "message": {"content": [{"type": "text", "text": text},
             {"type": "tool_use", "id": call, "name": text, "input": {}}]}},
            {"type": "user", "message": {"content": [{"type": "tool_result",
             "tool_use_id": call, "content": [{"type": "text", "text": text}]}]}},
        ]  # fmt: skip
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(hidden(), min_size=1, max_size=5), st.sampled_from(["claude-code", "other"]))
def test_no_private_or_secret_byte_reaches_an_entry(
    items: list[tuple[str, str]], platform: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines([t for t, _ in items])))
        chunk = read_since(str(path), 0, platform=platform)
        assert chunk.offset == path.stat().st_size
    returned = "\n".join(f"{e.text}\n{e.tool_use_id}" for e in chunk.entries)
    for _, marker in items:
        assert marker not in returned
        assert marker.lower() not in returned.lower()
