"""Property: no byte of private or redacted input reaches the database file, whatever the path."""

from __future__ import annotations

import string
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from claude_mem.privacy import MEMORY_TAGS
from claude_mem.records import Observation, Summary, ToolUse
from claude_mem.store import Database
from claude_mem.store.observations import insert_observation
from claude_mem.store.queue import claim, enqueue, fail
from claude_mem.store.sessions import add_prompt, complete_session, ensure_session
from claude_mem.store.summaries import insert_summary
from claude_mem.store.tool_uses import record_tool_use

# Benign text never contains q/Q/z/Z, so the marker "QZ…" can only come from a secret.
BENIGN = st.text(
    alphabet=st.characters(exclude_characters="qQzZ<>", exclude_categories=["Cs"]),
    max_size=40,
)
MARKER = st.text(alphabet=string.ascii_letters + string.digits, min_size=8, max_size=16).map(
    lambda s: "QZ" + s
)


@st.composite
def hidden(draw: st.DrawFn) -> tuple[str, str]:
    """(text holding a secret, the secret's marker)."""
    marker = draw(MARKER)
    tag = draw(st.sampled_from(MEMORY_TAGS))
    attrs = draw(st.sampled_from(["", ' reason="x"', "\n  id='7'"]))
    shape = draw(
        st.sampled_from(
            [
                f"<{tag}{attrs}>{{m}}</{tag}>",
                f"<{tag}{attrs}>line\n{{m}}\nline</{tag}>",
                f"<{tag}>{{m}}",  # never closed: fails closed
                "sk-ant-api03-{m}xxxxxxxxxxxxxxxxxxxx",
                "ghp_{m}aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "password={m}",
                "-----BEGIN RSA PRIVATE KEY-----\n{m}\n-----END RSA PRIVATE KEY-----",
            ]
        )
    )
    before, after = draw(BENIGN), draw(BENIGN)
    return before + " " + shape.format(m=marker) + " " + after, marker


def store_everything(db: Database, items: list[tuple[str, str]]) -> None:
    texts = [text for text, _ in items]

    def pick(i: int) -> str:
        return texts[i % len(texts)]

    with db.write() as conn:
        sid = ensure_session(conn, platform="claude-code", host_session_id="h", project="p")
        add_prompt(conn, sid, pick(0))
        add_prompt(conn, sid, pick(1))
        insert_observation(
            conn,
            Observation(
                session_id=sid,
                project="p",
                type="discovery",
                title=pick(2),
                subtitle=pick(3),
                narrative=pick(4),
                facts=[pick(5), pick(6)],
                concepts=[pick(7)],
                files_read=[pick(8)],
                files_modified=[pick(9)],
                agent_type=pick(10),
            ),
        )
        insert_summary(
            conn,
            Summary(
                session_id=sid,
                project="p",
                request=pick(11),
                investigated=pick(12),
                learned=pick(13),
                completed=pick(14),
                next_steps=pick(15),
                notes=pick(16),
            ),
        )
        record_tool_use(
            conn,
            ToolUse(
                session_id=sid,
                tool_use_id="t1",
                tool_name="Bash",
                tool_input={"command": pick(17), pick(18): [pick(19), {"deep": pick(20)}]},
                tool_response=pick(21),
                cwd="/w",
            ),
        )
        item_id, _ = enqueue(conn, sid, "summary", {"last": pick(22), "list": [pick(23)]})
        claim(conn)
        fail(conn, item_id, pick(24))
        complete_session(conn, sid, reason=pick(25))
    db.checkpoint()


@settings(max_examples=40, deadline=None)
@given(st.lists(hidden(), min_size=1, max_size=6))
def test_no_secret_byte_reaches_the_database_file(items: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "mem.db")
        try:
            store_everything(db, items)
        finally:
            db.close()
        raw = b"".join(p.read_bytes() for p in Path(tmp).iterdir() if p.is_file())
    for _, marker in items:
        for form in (marker, marker.lower()):
            assert form.encode() not in raw, f"{form} leaked"
