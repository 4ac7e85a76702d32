"""Each record kind is declared once: its fields are its table's columns after migrating, its
INDEXED fields are its full-text columns, and the API and export records are the same kinds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from claude_mem import records
from claude_mem.store import Database
from claude_mem.store.schema import FTS_COLUMNS
from claude_mem.store.write import cleaned
from claude_mem.transfer import records as export
from claude_mem.worker import schemas


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return sorted(row[1] for row in conn.execute(f"PRAGMA table_info({table})"))


@pytest.mark.parametrize("kind", records.KINDS, ids=lambda k: k.__name__)
def test_fields_are_the_tables_columns(data_dir: Path, kind: type[records.Record]) -> None:
    with Database() as db:
        assert sorted(kind.__struct_fields__) == columns(db.read(), kind.table)


@pytest.mark.parametrize("kind", records.KINDS, ids=lambda k: k.__name__)
def test_indexed_fields_are_the_fulltext_columns(
    data_dir: Path, kind: type[records.Record]
) -> None:
    with Database() as db:
        fulltext = columns(db.read(), f"{kind.table}_fts")
    assert sorted(records.indexed(kind)) == fulltext == sorted(FTS_COLUMNS.get(kind.table, ()))


@pytest.mark.parametrize(
    ("derived", "kind"),
    [
        (export.SessionRecord, records.Session),
        (export.PromptRecord, records.Prompt),
        (export.ObservationRecord, records.Observation),
        (export.SummaryRecord, records.Summary),
    ],
)
def test_export_records_are_the_kinds(
    derived: type[records.Record], kind: type[records.Record]
) -> None:
    """A redeclared field must name one of the kind's own: a typo would add a field."""
    assert sorted(derived.__struct_fields__) == sorted(kind.__struct_fields__)


def test_api_prompt_is_the_kind_with_its_session_joined_in() -> None:
    assert set(schemas.Prompt.__struct_fields__) == {
        *records.Prompt.__struct_fields__,
        "project",
        "platform",
    }


def test_drafts_are_the_parts_a_compressor_writes() -> None:
    assert set(records.ObservationDraft.__struct_fields__) == {
        "type", "title", "subtitle", "narrative", "facts", "concepts",
    }  # fmt: skip
    assert issubclass(records.Observation, records.ObservationDraft)
    assert issubclass(records.Summary, records.SummaryDraft)


def test_cleaning_follows_the_flags() -> None:
    secret = "<private>hunter2</private>"
    event = records.ToolUse(
        session_id=1,
        tool_use_id=f"t-{secret}",
        tool_name=f"Bash {secret}",
        tool_input={"command": f"echo {secret}", secret: [secret]},
        agent_id=secret,
    )
    kept = cleaned(event, redact=True)
    assert kept.tool_name == "Bash"
    assert "hunter2" not in repr(kept.tool_input)
    assert kept.agent_id is None  # an optional text cleaned to nothing is NULL
    assert kept.tool_use_id == event.tool_use_id  # an identifier, not flagged
    obs = cleaned(records.Observation(session_id=1, project="p", type="x",
                                      facts=[secret, "kept"]), redact=True)  # fmt: skip
    assert obs.facts == ["kept"]  # list items private as a whole are dropped
