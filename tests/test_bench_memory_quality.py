"""bench/memory_quality.py: its corpus is complete and consistent, and its replay through the
real hooks into a real worker measures what it says (run on two sessions, not the corpus)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench import memory_quality as mq

ROOT = Path(__file__).resolve().parents[1]
CORPUS = mq.load_corpus()
BY_ID = {session.id: session for session in CORPUS}
QUESTIONS = [session for session in CORPUS if session.question]


def test_every_question_has_an_answering_turn_in_its_own_session() -> None:
    assert len(QUESTIONS) >= 30
    assert len({s.id for s in CORPUS}) == len(CORPUS)
    for session in QUESTIONS:
        assert 1 <= session.target_turn <= len(session.turns), session.id
        assert session.answer, session.id
        assert len(session.turns) >= 1
    assert sum(len(s.turns) > 1 for s in QUESTIONS) >= len(QUESTIONS) // 2  # mostly multi-turn


def test_the_corpus_covers_amended_and_reverted_decisions_and_chat_only_rules() -> None:
    order = [s.id for s in CORPUS]
    amended = [s for s in QUESTIONS if s.amends]
    assert len(amended) >= 4
    for session in amended:
        for stale in mq.stale_of(session, BY_ID):
            assert order.index(stale.id) < order.index(session.id)  # replayed before the new rule
            assert not stale.question  # a stale rule answers nothing any more
    assert any(len(mq.stale_of(s, BY_ID)) >= 2 for s in amended)  # a decision reverted
    chat_only = [s for s in QUESTIONS if not s.turns[s.target_turn - 1].steps]
    assert len(chat_only) >= 3
    kinds = {s.kind for s in QUESTIONS}
    assert {"bug", "decision", "feature", "refactor", "dead-end", "investigation"} <= kinds


def test_noise_is_deterministic_and_large_enough() -> None:
    noise = mq.noise_sessions(mq.NOISE)
    assert len(noise) >= 100
    assert noise == mq.noise_sessions(mq.NOISE)
    assert len({s.turns[0].prompt for s in noise}) > 50
    order = mq.replay_order(CORPUS, noise)
    assert [s for s in order if s.kind != "noise"] == CORPUS
    assert len(order) == len(CORPUS) + len(noise)


def test_the_replay_of_two_sessions_measures_their_questions() -> None:
    chosen = ["inv-csv-keep-header", "cron-dow-sunday"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "memory_quality.py"), "--json", "--noise", "2",
         "--sessions", ",".join(chosen)],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    replayed = [*chosen, "inv-csv-skip-header"]  # the stale decision comes along
    sent = sum(BY_ID[name].tool_calls for name in replayed)
    sent += sum(s.tool_calls for s in mq.noise_sessions(2))
    assert result["sessions"] == {"target": 3, "noise": 2, "questions": 2}
    assert (
        result["tool_calls"]
        == sent
        == result["tool_calls_in_corpus"] + sum(s.tool_calls for s in mq.noise_sessions(2))
    )
    assert result["problems"] == []
    assert sorted(q["id"] for q in result["questions"]) == sorted(chosen)
    assert all(q["units"] for q in result["questions"])  # each answering turn left a unit
    assert [p["stale"] for p in result["amended"]] == ["inv-csv-skip-header"]
    for name, value in result["figures"].items():
        assert value >= 0, name
        if name != "obs_per_tool_call":
            assert value <= 1, name
    assert result["observations"] >= 1
    assert result["figures"]["obs_per_tool_call"] == round(result["observations"] / sent, 3)
    assert set(result["met"]) == set(result["floors"]) == set(result["figures"])
