"""Decisions from conversation: which turns state a rule the agent takes, and what the draft
holds (the rule, the words around it, the files and symbols named, a subject key)."""

from __future__ import annotations

import pytest

from claude_mem.pipeline.local.decisions import RULE_CHARS, decision
from claude_mem.pipeline.providers.base import ObservationDraft, Turn
from claude_mem.subjects import SUBJECT_PREFIX


def _decide(prompt: str, reply: str = "Understood.") -> ObservationDraft | None:
    return decision(Turn(prompt_number=2, prompt=prompt, reply=reply))


def _found(prompt: str, reply: str = "Understood.") -> ObservationDraft:
    draft = _decide(prompt, reply)
    assert draft is not None, prompt
    return draft


@pytest.mark.parametrize(
    ("prompt", "rule"),
    [
        ("no — timeouts are retried twice, never more", "Timeouts are retried twice, never more"),
        ("keep the header row even when empty", "Keep the header row even when empty"),
        ("From now on, run ruff before a commit.", "From now on, run ruff before a commit."),
        ("we'll use httpx instead of requests", "We'll use httpx instead of requests"),
        ("Don't mock the database in tests.", "Don't mock the database in tests."),
        ("Actually, amounts must always be Decimal, never float.",
         "Amounts must always be Decimal, never float."),
        ("no, the page size is 50, not 100", "The page size is 50, not 100"),
        ("Implement the export. It must never drop rows silently.",
         "It must never drop rows silently."),
        ("let's stick with SQLite for the queue", "Let's stick with SQLite for the queue"),
    ],
)  # fmt: skip
def test_a_stated_or_corrected_rule_is_a_decision_in_the_users_words(
    prompt: str, rule: str
) -> None:
    draft = _found(prompt)
    assert draft.type == "decision"
    assert draft.title == rule
    assert draft.source_event_ids == []  # the rule is the user's, not a tool event's


@pytest.mark.parametrize(
    "prompt",
    [
        "fix the bug in x.py",
        # a report of what happened compares without asking for anything
        "A customer was charged 1.72 instead of 1.73 for 3 stickers. Find out why and fix it.",
        "The job with schedule `0 6 * * 7` never runs. Why?",
        "add a test for invoice_total",
        "why does parse_config fail on an empty env?",
        "should we always retry on a timeout?",
        "keep going",
        "no, try again",
        "no, it is still failing",
        "Make sure the tests pass",
        "Refactor the loader and rename load() to read_config()",
        "",
    ],
)
def test_a_request_for_work_or_a_question_is_not_a_decision(prompt: str) -> None:
    assert _decide(prompt) is None


def test_a_rule_the_agent_pushes_back_on_is_not_taken() -> None:
    prompt = "always quote every CSV field"
    assert _decide(prompt, "Sure, every field gets quotes from now on.") is not None
    assert _decide(prompt, "I don't think that's wise: the importer rejects quoted ids.") is None
    assert _decide(prompt, "Are you sure? The bank's parser chokes on quotes.") is None


def test_a_chat_only_turn_and_an_unanswered_one_still_hold_the_rule() -> None:
    turn = Turn(prompt_number=1, prompt="keep the header row even when empty", closed=False)
    draft = decision(turn)
    assert draft is not None
    assert draft.narrative == "The user: keep the header row even when empty"


def test_the_narrative_holds_both_sides_and_is_bounded() -> None:
    reply = "Got it. " + "More. " * 400
    prompt = "keep the header row even when empty, " + "and for the bank's import too, " * 50
    draft = _found(prompt, reply)
    user, agent = draft.narrative.split("\nThe agent: ")
    assert user.startswith("The user: keep the header row even when empty")
    assert agent.startswith("Got it. More.")
    assert len(draft.narrative) < 700
    assert len(draft.title) <= RULE_CHARS
    assert draft.title.endswith("…")
    assert " " not in draft.title[-3:-1]  # cut at a word


def test_files_and_symbols_named_are_facts_and_the_subject() -> None:
    draft = _found(
        "in src/invoicer/export.py, `write_rows` must always write the header row",
        "Right: write_rows() in src/invoicer/export.py now writes it first.",
    )
    assert draft.facts == ["File: src/invoicer/export.py", "Symbol: write_rows"]
    assert draft.concepts == [
        "decision",
        f"{SUBJECT_PREFIX}write_rows",
        f"{SUBJECT_PREFIX}src/invoicer/export.py",
    ]


def test_a_rule_naming_nothing_is_keyed_by_its_topic_whatever_the_phrasing() -> None:
    first = _found("no — timeouts are retried twice, never more")
    later = _found("From now on we retry timeouts three times.")
    keys = [c for c in first.concepts if c.startswith(SUBJECT_PREFIX)]
    assert keys == [c for c in later.concepts if c.startswith(SUBJECT_PREFIX)]
    assert len(keys) == 1


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        ("Round the invoice total once, after summing the lines.",
         "Understood: The total is rounded once, after the lines are summed."),
        ("The staging database listens on port 5433.",
         "Noted: The staging database listens on port 5433."),
    ],
)  # fmt: skip
def test_a_bare_imperative_or_a_statement_needs_the_agent_to_say_it_back(
    prompt: str, reply: str
) -> None:
    assert decision(Turn(prompt_number=1, prompt=prompt, closed=False)) is None  # no reply yet
    assert _decide(prompt, "Here is the diff.") is None  # not taken up
    assert _decide(prompt, "Done.") is None  # work reported, not a rule taken
    assert _found(prompt, reply).title == reply.split(": ", 1)[1]


def test_the_rule_keeps_its_literal_asterisks_and_loses_its_emphasis() -> None:
    draft = _found(
        "Rule: never print secrets; a value whose key ends with _TOKEN is shown as ****.",
        "Agreed: a value whose key ends in `_TOKEN` is **always** shown as ****, logs included.",
    )
    assert (
        draft.title == "A value whose key ends in `_TOKEN` is always shown as ****, logs included."
    )
