"""bench/memory_quality.py: its corpus is complete and consistent, and its replay through the
real hooks into a real worker measures what it says (run on two sessions, not the corpus)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bench import memory_quality as mq
from bench import memory_quality_measures as mqm

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "tests" / "fixtures" / "memory_quality_heldout"  # a tiny stand-in, not the set
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
         "--sessions", ",".join([*chosen, "shop-cart-ttl-2h"]), "--heldout", str(HELDOUT)],
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
    # Issue #30: the held-out set ran in its own worker, beside the dev set, its files checked.
    assert result["heldout_hashes"] == {
        "present": True, "matches": True, "files": 1, "problems": [], "folder": str(HELDOUT)
    }  # fmt: skip
    held = result["heldout"]
    assert held["sessions"] == {"target": 2, "noise": 2, "questions": 1}
    assert [q["id"] for q in held["questions"]] == ["shop-cart-ttl-2h"]
    assert [p["stale"] for p in held["amended"]] == ["shop-cart-ttl-30"]
    assert held["decisions"]["rules"] == 2
    for part in (result, held):
        assert set(part["met30"]) == set(mq.FLOORS_30)
        assert set(part["figures30"]) == {*mq.FLOORS_30, "recall_bm25_sessions"}
        shares = {k: v for k, v in part["figures30"].items() if k not in mq.AT_MOST}
        shares.pop("hybrid_minus_fulltext")
        assert all(v is None or 0 <= v <= 1 for v in shares.values()), shares
        assert part["as_of"] is None or len(part["as_of"]) == len(part["amended"])
    assert held["figures30"]["recall_bm25_sessions"] == 1.0  # "abandoned": in the top 5 of 4


# --- issue #30: the pure measures, on texts written here --------------------------------------


def test_the_held_out_format_loads_rules_and_amendments() -> None:
    first, second = mq.load_corpus(HELDOUT)
    assert first.rules == (mqm.Rule("An idle shopping cart expires after 30 minutes.",
                                    ("cart", "30 minutes"), 2),)  # fmt: skip
    assert second.amends == first.id
    assert second.rules[0].words == ("cart", "2 hours")
    assert mq.stale_of(second, {s.id: s for s in (first, second)}) == [first]


def test_a_bad_corpus_file_stops_with_its_name(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text((HELDOUT / "tinyshop.toml").read_text("utf-8").replace("words =", "wordz ="))
    with pytest.raises(
        SystemExit, match=r"bad\.toml: not a memory-quality corpus file \(missing 'words'\)"
    ):
        mq.load_corpus(tmp_path)
    bad.write_text((HELDOUT / "tinyshop.toml").read_text("utf-8").replace('"cart", ', ""))
    bad.write_text(bad.read_text("utf-8").replace('["30 minutes"]', "[]"))
    with pytest.raises(SystemExit, match=r"bad\.toml: .*words must be a list of strings, not \[\]"):
        mq.load_corpus(tmp_path)
    amends_later = (
        (HELDOUT / "tinyshop.toml")
        .read_text("utf-8")
        .replace('amends = "shop-cart-ttl-30"', 'amends = "shop-cart-ttl-2h"')
    )
    bad.write_text(amends_later)
    with pytest.raises(SystemExit, match=r"shop-cart-ttl-2h amends 'shop-cart-ttl-2h'"):
        mq.load_corpus(tmp_path)
    # What no figure reads may be left out: a rule's text and turn, a session's kind.
    lean = (HELDOUT / "tinyshop.toml").read_text("utf-8").replace('kind = "decision"\n', "")
    bad.write_text(lean.replace("turn = 2\n", "").replace('text = "An idle shopping cart', "# "))
    assert [s.rules[0].words for s in mq.load_corpus(tmp_path)] == [
        ("cart", "30 minutes"), ("cart", "2 hours")
    ]  # fmt: skip


def test_every_dev_rule_is_labelled_and_stated_at_its_turn() -> None:
    for session in CORPUS:
        if session.kind == "decision" or any(s.amends == session.id for s in CORPUS):
            assert session.rules, session.id
        for rule in session.rules:
            assert 1 <= rule.turn <= len(session.turns), session.id
            turn = session.turns[rule.turn - 1]
            assert mqm.states(rule.text, rule), session.id
            assert mqm.states(f"{turn.prompt} {turn.reply}", rule), session.id
            assert 2 <= len(rule.words) <= 4
            assert all(w == w.lower() for w in rule.words)


def test_a_rule_is_stated_when_every_word_is_there() -> None:
    rule = mqm.Rule("Carts expire after 2 hours.", ("cart", "2 hours"), 1)
    assert mqm.states("Settled: an idle CART now expires after 2\n   hours.", rule)
    assert not mqm.states("An idle cart expires after 30 minutes.", rule)
    assert not mqm.states("anything", mqm.Rule("no words", (), 1))


def test_the_same_text_twice_identical_or_near_identical() -> None:
    ten = "the export always writes the header row even for empty invoices"
    assert mqm.same_text(ten, "  The EXPORT always writes the header row\neven for empty invoices")
    assert mqm.same_text(ten, ten + " today")  # 10 of 11 words shared: Jaccard 0.91
    assert not mqm.same_text(ten, ten + " from today on")  # 10 of 12: 0.83
    assert not mqm.same_text("", "")
    texts = [ten, "reminders move to monday", ten.upper(), "Reminders move to Monday."]
    assert mqm.repeated_pairs(texts) == [(0, 2), (1, 3)]


def test_bm25_over_whole_sessions_ranks_the_rare_word_first() -> None:
    documents = {
        "common": "the invoice export writes the invoice header and the invoice total",
        "rare": "the invoice mailer retried after SMTPServerDisconnected: idempotency key",
        "other": "cron jobs retry twice after a timeout",
    }
    query = "why was the invoice email sent again? idempotency"
    assert mqm.bm25_ranking(documents, query, 5) == ["rare", "common"]
    assert mqm.bm25_ranking(documents, query, 1) == ["rare"]
    assert mqm.bm25_ranking(documents, "the what and", 5) == []  # function words only
    assert mqm.bm25_ranking(documents, 'quote" OR ( NEAR', 5) == []  # no FTS syntax leaks
    assert mqm.query_terms("What was THE header, the header?") == ["header"]


def test_decision_precision_and_recall() -> None:
    old = mqm.Rule("30 minutes", ("cart", "30 minutes"), 1)
    new = mqm.Rule("2 hours", ("cart", "2 hours"), 1)
    rules = [mqm.LabelledRule("a", old, current=False), mqm.LabelledRule("b", new)]
    records = [
        mqm.DecisionRecord("a", "An idle cart expires after 30 minutes.", superseded=True),
        mqm.DecisionRecord("b", "Carts expire after 2 hours."),
        mqm.DecisionRecord("b", "This feels like a performance hit compared to Redis."),
    ]
    assert mqm.decision_precision(records, rules) == 0.667
    assert mqm.decision_recall(records, rules) == 1.0
    superseded = [records[0], mqm.DecisionRecord("b", "cart: 2 hours", superseded=True)]
    assert mqm.decision_recall(superseded, rules) == 0.5  # the current rule must be current
    wrong_session = [mqm.DecisionRecord("a", "Carts expire after 2 hours.")]
    assert mqm.decision_recall(wrong_session, rules) == 0.0
    assert mqm.decision_precision([], rules) is None


def test_the_held_out_files_are_checked_against_their_hashes(tmp_path: Path) -> None:
    hashes = HELDOUT.with_name(HELDOUT.name + ".sha256")
    assert mq.hashes_of(HELDOUT) == hashes
    good = mqm.check_hashes(HELDOUT, hashes)
    assert (good.present, good.matches, good.files, good.problems) == (True, True, 1, [])
    folder = tmp_path / "memory_quality_heldout"
    shutil.copytree(HELDOUT, folder)
    copied = mq.hashes_of(folder)
    shutil.copy(hashes, copied)
    assert mqm.check_hashes(folder, copied).matches
    edited = folder / "tinyshop.toml"
    edited.write_text(edited.read_text("utf-8").replace("2 hours", "3 hours"), "utf-8")
    (folder / "extra.toml").write_text('project = "x"\n', "utf-8")
    found = mqm.check_hashes(folder, copied)
    assert not found.matches
    assert found.problems == [
        "extra.toml is not in memory_quality_heldout.sha256",
        "tinyshop.toml differs from its committed hash",
    ]
    digest = hashlib.sha256(edited.read_bytes()).hexdigest()
    copied.write_text(f"{digest}  tinyshop.toml\n{'0' * 64}  gone.toml\n", "utf-8")
    assert mqm.check_hashes(folder, copied).problems == [
        "extra.toml is not in memory_quality_heldout.sha256",
        "gone.toml is listed but missing",
    ]
    copied.unlink()
    assert mqm.check_hashes(folder, copied).problems == ["memory_quality_heldout.sha256 is missing"]
    absent = mqm.check_hashes(tmp_path / "nothing", tmp_path / "nothing.sha256")
    assert (absent.present, absent.matches) == (False, True)


def test_replayed_sessions_are_spread_over_weeks_in_order() -> None:
    clock = mq.session_clock()
    starts = [next(clock) for _ in range(len(CORPUS) + mq.NOISE)]
    assert starts == sorted(starts)
    assert len(set(starts)) == len(starts)
    assert starts[-1] - starts[0] > 21 * 86400  # weeks, not minutes
    assert starts == [next(c) for c in [mq.session_clock()] for _ in starts]  # deterministic
