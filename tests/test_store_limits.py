from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_mem.store import Database
from claude_mem.store.limits import RECORD_TEXT_CHARS, truncate_text, truncate_value
from claude_mem.store.observations import get_observation
from tests.store_helpers import found, observation, session


def test_short_text_untouched() -> None:
    assert truncate_text("abc", 10) == "abc"


def test_long_text_keeps_head_and_tail_with_marker() -> None:
    text = "H" * 700 + "M" * 10_000 + "T" * 300
    cut = truncate_text(text, 1000)
    assert cut.startswith("H" * 700)
    assert cut.endswith("T" * 300)
    assert "…[truncated 10,000 of 11,000 chars]…" in cut


def test_value_strings_cut_at_every_depth() -> None:
    value: dict[str, Any] = {"a": ["x" * 50, {"b": "y" * 50}], "n": 5, "ok": "short"}
    cut = truncate_value(value, field_limit=20, total=10_000)
    assert isinstance(cut, dict)
    assert "truncated" in cut["a"][0]
    assert "truncated" in cut["a"][1]["b"]
    assert (cut["n"], cut["ok"]) == (5, "short")
    assert value["a"][0] == "x" * 50  # the input is not modified


def test_value_too_big_overall_becomes_cut_json_text() -> None:
    value = [f"item {i}" for i in range(10_000)]
    cut = truncate_value(value, field_limit=100, total=2_000)
    assert isinstance(cut, str)
    assert cut.startswith('["item 0"')
    assert "truncated" in cut
    assert len(cut) < 2_100


def test_deep_nesting_without_recursion_error() -> None:
    deep: list[object] = []
    node = deep
    for _ in range(50_000):
        child: list[object] = []
        node.append(child)
        node = child
    node.append("z" * 100)
    assert truncate_value(deep, field_limit=10, total=10**9) == "[elided: nesting too deep]"


def test_titles_and_narratives_are_stored_whole_within_a_generous_bound(tmp_path: Path) -> None:
    """Whole, however long a title or narrative is (shortened only where shown), up to
    RECORD_TEXT_CHARS; beyond that, cut with the marker that says so."""
    long_title = ("Decided that " + "the exporter keeps every header row " * 30).strip()
    long_story = ("Why: " + "empty exports still need their headers for the bank. " * 150).strip()
    huge = "x" * (RECORD_TEXT_CHARS + 5_000)
    db = Database(tmp_path / "limits.db")
    try:
        sid = session(db)
        kept = observation(db, sid, title=long_title, narrative=long_story)
        cut = observation(db, sid, title=huge, narrative=huge)
        rows = {i: found(get_observation(db.read(), i)) for i in (kept, cut)}
    finally:
        db.close()
    assert (rows[kept]["title"], rows[kept]["narrative"]) == (long_title, long_story)
    for field in ("title", "narrative"):
        assert rows[cut][field] == truncate_text(huge, RECORD_TEXT_CHARS)
        assert "…[truncated 5,000 of 25,000 chars]…" in rows[cut][field]
