"""The offline compressor on prompt turns: one observation per unit of work, titled and
explained in the agent's own words, with the tool events' evidence as facts; and the turn's
summary leading with what was learned."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from claude_mem.pipeline.providers.base import (
    AgentWords,
    ObservationDraft,
    SessionContext,
    SummaryInput,
    ToolEvent,
    Turn,
)
from claude_mem.pipeline.providers.local import LocalProvider, compress_events, summarize_session
from claude_mem.store.limits import RECORD_TEXT_CHARS

CWD = "/home/dev/invoicer"


@dataclass
class Script:
    """A turn being written: its events in order, and the agent's words before each."""

    prompt: str
    events: list[ToolEvent]
    words: list[AgentWords]

    def call(self, name: str, tool_input: Any, response: Any, said: str = "") -> None:
        number = len(self.events) + 1
        host_id = f"toolu_{number:02d}"
        if said:
            self.words.append(AgentWords(said, before=host_id))
        self.events.append(
            ToolEvent(
                number, name, tool_input, response, cwd=CWD, prompt_number=1, tool_use_id=host_id
            )
        )

    def read(self, path: str, content: str, said: str = "") -> None:
        lines = len(content.splitlines())
        file = {"filePath": f"{CWD}/{path}", "content": content, "numLines": lines}
        self.call(
            "Read",
            {"file_path": f"{CWD}/{path}"},
            {"type": "text", "file": {**file, "startLine": 1, "totalLines": lines}},
            said,
        )

    def bash(self, command: str, stdout: str, said: str = "") -> None:
        self.call(
            "Bash",
            {"command": command},
            {"stdout": stdout, "stderr": "", "interrupted": False},
            said,
        )

    def edit(self, path: str, old: str, new: str, said: str = "") -> None:
        self.call(
            "Edit",
            {"file_path": f"{CWD}/{path}", "old_string": old, "new_string": new},
            {"filePath": f"{CWD}/{path}", "oldString": old, "newString": new},
            said,
        )

    def turn(self, closing: str = "", reply: str | None = None) -> Turn:
        words = [*self.words, AgentWords(closing)] if closing else self.words
        return Turn(1, self.prompt, tuple(words), closing if reply is None else reply)

    def ctx(self, turn: Turn | None) -> SessionContext:
        return SessionContext(7, "invoicer", "claude-code", CWD, (self.prompt,), turn)


FAILING = """\
============================= test session starts ==============================
collected 4 items

tests/test_invoice.py ..F.                                               [100%]

=================================== FAILURES ===================================
__________________________ test_total_rounds_half_up ___________________________

    def test_total_rounds_half_up():
>       assert Invoice([0.575, 1.155]).total() == 1.73
E       assert 1.72 == 1.73

tests/test_invoice.py:18: AssertionError
=========================== short test summary info ============================
FAILED tests/test_invoice.py::test_total_rounds_half_up - assert 1.72 == 1.73
========================= 1 failed, 3 passed in 0.04s ==========================
"""
PASSING = "collected 4 items\n\ntests/test_invoice.py ....  [100%]\n\n4 passed in 0.03s\n"
INVOICE = '''"""Invoices and their totals."""


class Invoice:
    def __init__(self, amounts):
        self.amounts = amounts

    def total(self):
        return round(sum(self.amounts), 2)
'''
CAUSE = "The bug: the float sum makes round() give 1.72 instead of 1.73; switching to Decimal."


def bug_hunt() -> Script:
    script = Script(
        "The invoice total is off by a cent for the sample order. Find out why and fix it.", [], []
    )
    script.read("src/invoicer/invoice.py", INVOICE, "I'll start by reading the invoice code.")
    script.read("src/invoicer/lines.py", "def line_amount(qty, price):\n    return qty * price\n")
    script.read("src/invoicer/tax.py", "RATE = 0.2\n\ndef tax(amount):\n    return amount * RATE\n")
    script.read(
        "tests/test_invoice.py", "from invoicer.invoice import Invoice\n\ndef test_total(): ...\n"
    )
    script.call(
        "Grep",
        {"pattern": "round(", "path": f"{CWD}/src", "output_mode": "files_with_matches"},
        {
            "mode": "files_with_matches",
            "filenames": [f"{CWD}/src/invoicer/invoice.py"],
            "numFiles": 1,
        },
        "Let me check where rounding happens.",
    )
    script.bash(
        "python -m pytest tests/test_invoice.py -q",
        FAILING,
        "Now let me run the tests to see the failure.",
    )
    script.edit(
        "src/invoicer/invoice.py",
        "        return round(sum(self.amounts), 2)",
        "        total = sum(Decimal(str(a)) for a in self.amounts)\n"
        "        return total.quantize(Decimal('0.01'), ROUND_HALF_UP)",
        CAUSE,
    )
    script.bash("python -m pytest tests/test_invoice.py -q", PASSING, "Let me run the tests again.")
    return script


BUG_REPLY = (
    "Fixed: `Invoice.total` now sums Decimal amounts and rounds half up, so the sample order "
    "totals 1.73. All 4 tests pass."
)


def compress(script: Script, turn: Turn | None) -> list[ObservationDraft]:
    result = asyncio.run(LocalProvider().compress(script.events, script.ctx(turn)))
    return result.observations


def check_units(script: Script, units: list[ObservationDraft]) -> None:
    """The contract of units: every event in exactly one, titles and narratives whole on one
    line (shortened where they are shown, not here)."""
    folded = [number for unit in units for number in unit.source_event_ids]
    assert sorted(folded) == [event.tool_use_row_id for event in script.events]
    for unit in units:
        assert unit.title
        assert "\n" not in unit.title
        assert not unit.title.endswith("…")
        assert not unit.title.startswith(("Read ", "Listed ", "Searched for ", "Ran tests"))
        assert unit.narrative
        assert "\n" not in unit.narrative
        assert unit.facts
        assert all(len(fact) <= 200 for fact in unit.facts)
        assert unit.concepts


def test_a_bug_hunt_is_one_bugfix_unit_titled_by_its_cause() -> None:
    script = bug_hunt()
    (unit,) = units = compress(script, script.turn(BUG_REPLY))
    check_units(script, units)
    assert unit.type == "bugfix"
    assert unit.source_event_ids == list(range(1, 9))
    # The cause sentence, whole (it was cut at 80 characters, ending "…").
    assert unit.title == CAUSE
    assert unit.title.startswith("The bug: the float sum makes round() give 1.72")
    assert "float sum" in unit.narrative
    assert "1.73. All 4 tests pass." in unit.narrative
    assert "Let me" not in unit.narrative  # narration is not explanation
    assert unit.facts[:2] == [
        "Modified: src/invoicer/invoice.py",
        "Read: src/invoicer/invoice.py, src/invoicer/lines.py, src/invoicer/tax.py, "
        "tests/test_invoice.py",
    ]
    assert "Tests: 3 passed, 1 failed → 4 passed" in unit.facts
    assert (
        "Failed: tests/test_invoice.py::test_total_rounds_half_up — assert 1.72 == 1.73"
        in unit.facts
    )
    assert "Error: assert 1.72 == 1.73" in unit.facts
    assert "Command: python -m pytest tests/test_invoice.py -q" in unit.facts
    assert "problem-solution" in unit.concepts


def test_without_a_turn_each_event_stands_alone_as_before() -> None:
    script = bug_hunt()
    titles = [o.title for o in compress(script, None)]
    assert len(titles) == 8
    assert titles[0] == "Read src/invoicer/invoice.py (9 lines)"


def test_a_long_turn_splits_where_the_agent_moves_on() -> None:
    script = bug_hunt()
    script.read(
        "src/invoicer/csv_export.py",
        "def export(rows, out):\n    if not rows:\n        return\n",
        "Next, the CSV export: it drops the header row when there are no invoices.",
    )
    script.edit(
        "src/invoicer/csv_export.py",
        "    if not rows:\n        return\n",
        "    writer.writerow(HEADER)\n",
        "The header must be written even when empty, because importers expect it.",
    )
    script.bash("python -m pytest -q", "6 passed in 0.05s\n")
    units = compress(script, script.turn("Both fixed; the export now always writes the header."))
    check_units(script, units)
    first, second = units
    assert first.source_event_ids == list(range(1, 9))
    assert second.source_event_ids == [9, 10, 11]
    assert first.title.startswith("The bug: the float sum")
    assert (
        second.title == "The header must be written even when empty, because importers expect it."
    )
    assert "Modified: src/invoicer/csv_export.py" in second.facts
    assert "the export now always writes the header" in second.narrative
    assert "the export now always writes" not in first.narrative  # the reply closes the last unit


def test_new_files_after_a_verified_change_start_a_unit_without_words() -> None:
    script = bug_hunt()
    script.read("src/invoicer/csv_export.py", "def export(rows, out): ...\n")
    script.edit(
        "src/invoicer/csv_export.py",
        "def export(rows, out): ...",
        "def export(rows, out, header=True): ...",
    )
    units = compress(script, script.turn(BUG_REPLY))
    assert [u.source_event_ids for u in units] == [list(range(1, 9)), [9, 10]]
    # A failing run is no verification: investigating the next file stays in the same unit.
    failing = bug_hunt()
    failing.events[-1] = replace(failing.events[-1], tool_response={"stdout": FAILING})
    failing.read("src/invoicer/money.py", "def cents(x): ...\n")
    assert len(compress(failing, failing.turn(BUG_REPLY))) == 1


def refactor() -> Script:
    script = Script(
        "Extract the tax computation out of Invoice.total so the export can reuse it.", [], []
    )
    script.read(
        "src/invoicer/invoice.py",
        INVOICE + "\n    def with_tax(self):\n        return self.total() * 1.2\n",
    )
    script.call(
        "Grep",
        {"pattern": "1.2", "path": f"{CWD}/src"},
        {
            "mode": "files_with_matches",
            "filenames": [f"{CWD}/src/invoicer/invoice.py"],
            "numFiles": 1,
        },
    )
    script.edit(
        "src/invoicer/invoice.py",
        "    def with_tax(self):\n        return self.total() * 1.2\n",
        "    def with_tax(self):\n        return compute_tax(self.total(), RATE)\n\n\n"
        "def compute_tax(subtotal, rate):\n    return subtotal * (1 + rate)\n",
        "I moved the tax math out of `Invoice.with_tax` into `compute_tax(subtotal, rate)` so the "
        "CSV export can reuse it.",
    )
    script.bash("python -m pytest -q", PASSING)
    script.bash(
        "git commit -am 'Extract compute_tax'",
        "[main 1a2b3c4] Extract compute_tax\n 1 file changed, 6 insertions(+), 2 deletions(-)\n",
    )
    script.call("TodoWrite", {"todos": []}, {"oldTodos": [], "newTodos": []})
    return script


def test_a_refactor_is_one_unit_with_its_symbols_and_commit() -> None:
    script = refactor()
    (unit,) = units = compress(script, script.turn("Done: `compute_tax` is shared now."))
    check_units(script, units)
    assert unit.type == "refactor"
    assert unit.title.startswith("I moved the tax math out of `Invoice.with_tax` into")
    assert unit.source_event_ids == [1, 2, 3, 4, 5, 6]  # the todo list is linked too
    assert "Symbols changed: with_tax, compute_tax" in unit.facts
    assert "Committed: Extract compute_tax" in unit.facts
    assert "Tests: 4 passed" in unit.facts


def investigation() -> Script:
    script = Script("How does the CSV export quote fields?", [], [])
    script.call(
        "Glob",
        {"pattern": "**/*export*.py"},
        {"filenames": [f"{CWD}/src/invoicer/csv_export.py"], "numFiles": 1},
        "Let me find the export code.",
    )
    script.read(
        "src/invoicer/csv_export.py",
        "import csv\n\ndef export(rows, out):\n"
        "    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL)\n",
    )
    script.call(
        "Grep",
        {"pattern": "quoting", "path": f"{CWD}/src"},
        {
            "mode": "files_with_matches",
            "filenames": [f"{CWD}/src/invoicer/csv_export.py"],
            "numFiles": 1,
        },
    )
    script.read("tests/test_csv.py", "def test_quotes_commas(): ...\n")
    script.call("LS", {"path": f"{CWD}/docs"}, f"- {CWD}/docs/\n  - export.md\n")
    return script


QUOTING = (
    "The export uses csv.QUOTE_MINIMAL, so a field is quoted only when it holds a comma, a "
    "quote or a newline."
)


def test_a_reads_only_turn_is_one_discovery_titled_by_what_was_found() -> None:
    script = investigation()
    (unit,) = units = compress(
        script, script.turn(QUOTING + " Nothing else in the code sets quoting.")
    )
    check_units(script, units)
    assert unit.type == "discovery"
    assert (
        unit.title == "The export uses csv.QUOTE_MINIMAL, so a field is quoted only when it "
        "holds a comma, a quote or a newline."
    )
    assert "Read: src/invoicer/csv_export.py, tests/test_csv.py" in unit.facts
    assert "Symbols read: export, test_quotes_commas" in unit.facts
    assert any(fact.startswith("Looked into: 'quoting' in src") for fact in unit.facts)


def test_without_words_the_reply_then_the_prompt_then_the_events_title_it() -> None:
    script = bug_hunt()
    script.words.clear()
    (from_reply,) = compress(script, script.turn(reply=BUG_REPLY))
    assert from_reply.title.startswith("Fixed: `Invoice.total` now sums Decimal amounts")
    assert from_reply.source_event_ids == list(range(1, 9))
    (from_prompt,) = compress(script, script.turn())
    assert (
        from_prompt.title
        == "The invoice total is off by a cent for the sample order: src/invoicer/invoice.py"
    )
    assert "Modified: src/invoicer/invoice.py" in from_prompt.facts
    script.prompt = ""
    (from_events,) = compress(script, script.turn())
    assert from_events.title.startswith("Edited src/invoicer/invoice.py:")
    reads = investigation()
    reads.words.clear()
    reads.prompt = ""
    (looked,) = compress(reads, reads.turn())
    assert looked.title.startswith("Investigated src/invoicer/csv_export.py, tests/test_csv.py")


def test_words_naming_no_call_of_the_batch_open_it() -> None:
    script = investigation()
    script.words.insert(
        0, AgentWords("The quoting rule lives in the export module, it turns out.", "toolu_99")
    )
    (unit,) = compress(script, script.turn())
    assert unit.title == "The quoting rule lives in the export module, it turns out."


def test_only_noise_gives_no_unit() -> None:
    script = Script("plan it", [], [])
    script.call("TodoWrite", {"todos": []}, {}, "Let me plan.")
    assert compress(script, script.turn("Planned.")) == []


def test_realistic_turns_fold_three_calls_or_more_into_each_unit() -> None:
    turns = [
        (bug_hunt(), BUG_REPLY),
        (refactor(), "Done."),
        (investigation(), QUOTING),
    ]
    calls = sum(len(script.events) for script, _ in turns)
    units = sum(len(compress(script, script.turn(reply))) for script, reply in turns)
    assert units / calls <= 0.35


def test_units_are_deterministic() -> None:
    script = bug_hunt()
    turn = script.turn(BUG_REPLY)
    assert compress(script, turn) == compress(script, turn)
    ask = SummaryInput(BUG_REPLY, tuple(script.events))
    assert summarize_session(ask, script.ctx(turn)) == summarize_session(ask, script.ctx(turn))


# --- the turn's summary ---------------------------------------------------------------------


def test_the_summary_learns_the_cause_not_the_test_counts() -> None:
    script = bug_hunt()
    turn = script.turn(BUG_REPLY)
    units = compress(script, turn)
    request = SummaryInput(BUG_REPLY, tuple(script.events), tuple(units))
    summary = summarize_session(request, script.ctx(turn))
    assert summary.request == script.prompt
    assert summary.learned.startswith(CAUSE)
    assert "passed" not in summary.learned
    assert summary.completed.startswith(
        "Modified src/invoicer/invoice.py. Fixed: `Invoice.total` now sums"
    )
    assert summary.investigated.startswith("Read src/invoicer/invoice.py, src/invoicer/lines.py")
    assert summary.notes == "Tests: 3 passed, 1 failed → 4 passed."
    before = summarize_session(request, script.ctx(None))  # without the turn: as before
    assert before.learned.startswith("Ran tests in tests/test_invoice.py: 4 passed")


def test_the_summary_keeps_rules_and_earlier_units_causes() -> None:
    script = refactor()
    turn = script.turn("Done. Never compute tax on a rounded subtotal: always round last.")
    earlier = ObservationDraft(type="bugfix", title="x", narrative=CAUSE + " Tests pass.")
    request = SummaryInput("", tuple(script.events), (earlier,))
    summary = summarize_session(request, script.ctx(turn))
    assert summary.learned.startswith(CAUSE)
    assert "Never compute tax on a rounded subtotal: always round last." in summary.learned
    assert "I moved the tax math out of" in summary.completed
    assert "Committed: Extract compute_tax." in summary.completed
    for text in (summary.request, summary.learned, summary.completed, summary.investigated):
        assert len(text) <= 500


def test_a_long_turn_stays_within_bounds() -> None:
    script = bug_hunt()
    long_words = " ".join(["The bug is that the sum drifts because floats round badly."] * 200)
    turn = replace(script.turn(BUG_REPLY * 50), words=(AgentWords(long_words, "toolu_07"),))
    (unit,) = compress(script, turn)
    assert unit.title == "The bug is that the sum drifts because floats round badly."
    assert len(unit.narrative) <= RECORD_TEXT_CHARS
    summary = summarize_session(SummaryInput(BUG_REPLY, tuple(script.events)), script.ctx(turn))
    assert len(summary.learned) <= 500
    assert len(summary.completed) <= 500
    assert compress_events([], script.ctx(turn)) == []


def test_a_unit_with_only_narration_is_titled_by_the_stated_intent() -> None:
    script = investigation()
    script.prompt = ""
    (unit,) = compress(script, script.turn())
    assert unit.title == "Find the export code."


def test_words_that_say_little_give_way_to_the_request_and_its_files() -> None:
    looked = investigation()
    looked.words.clear()
    (listed,) = compress(looked, looked.turn("I listed the files."))
    assert listed.title == (
        "How does the CSV export quote fields: src/invoicer/csv_export.py, tests/test_csv.py"
    )
    for closing in ("Done.", "All 4 tests pass.", "It passes.", "I looked at the code."):
        script = bug_hunt()
        script.words.clear()
        (unit,) = compress(script, script.turn(closing))
        assert unit.title == (
            "The invoice total is off by a cent for the sample order: src/invoicer/invoice.py"
        ), closing
    script = bug_hunt()
    script.words.clear()
    (said,) = compress(script, script.turn("It passes: `total()` now sums in Decimal."))
    assert said.title == "It passes: `total()` now sums in Decimal."  # names what changed


MEMORY_TOOLS = (
    "mcp__claude-mem-py__search",  # `claude-mem install`: the server `claude-mem-py`
    "mcp__plugin_claude-mem-py_claude-mem-py__timeline",  # installed as a plugin
    "mcp__claude-mem__get_observations",  # the original claude-mem's
)


def test_calls_to_memorys_own_tools_make_no_unit() -> None:
    script = Script("What did we settle about retries?", [], [])
    for name in MEMORY_TOOLS:
        script.call(name, {"query": "retries"}, {"content": [{"type": "text", "text": "#12"}]})
    assert compress(script, script.turn("We settled on two retries, in #12.")) == []
    assert compress(script, None) == []
    script.call("mcp__github__create_issue", {"title": "Retry twice"}, {"number": 7})
    (unit,) = compress(script, script.turn("I opened issue 7 about the retries."))
    assert unit.source_event_ids == [1, 2, 3, 4]  # every event is linked, the unit is the issue
    assert unit.type == "change"
