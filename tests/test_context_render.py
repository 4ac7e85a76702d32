from __future__ import annotations

from pathlib import Path

from claude_mem import settings
from claude_mem.context.render import render
from claude_mem.store import Database
from claude_mem.store.summaries import NewSummary, insert_summary
from tests.store_helpers import observation, session

NOW = 1_764_480_000.0  # 2025-11-30 05:20 UTC


def test_empty_project_gets_a_welcome_line(data_dir: Path) -> None:
    with Database() as db:
        text = render(db.read(), ("proj",), settings.load(), now=NOW)
    assert text.startswith("# [proj] claude-mem: no memory yet")


def test_index_grouped_by_day_oldest_first_with_last_summary(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db, project="proj")
        observation(db, sid, title="Found the bug", type="discovery", created_at=1_764_400_000_000)
        observation(db, sid, title="Fixed it", type="bugfix", created_at=1_764_470_000_000)
        observation(db, sid, title="Other project", project="other", created_at=1_764_470_000_001)
        with db.write() as conn:
            insert_summary(
                conn,
                NewSummary(session_id=sid, project="proj", request="fix bug", next_steps="tests"),
            )
        text = render(db.read(), ("proj",), settings.load(), now=NOW)
        again = render(db.read(), ("proj",), settings.load(), now=NOW)
    assert text == again  # deterministic for the same database
    lines = text.splitlines()
    assert lines[0] == "# [proj] recent memory, 2025-11-30 05:20 UTC"
    assert "### Nov 29, 2025" in lines
    assert "### Nov 30, 2025" in lines
    assert lines.index("### Nov 29, 2025") < lines.index("### Nov 30, 2025")
    assert any(line.endswith("○ Found the bug") for line in lines)
    assert any(line.endswith("● Fixed it") for line in lines)
    assert "Other project" not in text
    assert "**Request**: fix bug" in lines
    assert "**Next steps**: tests" in lines
