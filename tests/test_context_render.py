"""Golden files of the session-start context (fixed timestamps, fixed time zone), and the
rules behind them: budget never exceeded, oldest rows dropped first, deterministic output.

Regenerate the golden files after an intended change with UPDATE_GOLDEN=1 and
review the diff.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_mem import settings
from claude_mem.context.budget import tokens
from claude_mem.context.gather import DECISION_SHARE
from claude_mem.context.render import Context, compose
from claude_mem.context.terminal import terminal_view
from claude_mem.history.importer import import_history
from claude_mem.pipeline.health import HealthLedger
from claude_mem.pipeline.providers.base import ProviderError
from claude_mem.records import Summary
from claude_mem.store import Database
from claude_mem.store.summaries import insert_summary
from tests.git_repos import Repo
from tests.store_helpers import observation, session

GOLDEN = Path(__file__).parent / "golden" / "context"
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
START = 1_764_489_600_000  # 2025-11-30 08:00 UTC = 09:00 in Berlin (CET)
KINDS = ("bugfix", "feature", "refactor", "change", "discovery", "decision")


@pytest.fixture(autouse=True)
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times render in the local zone: pin it."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text + "\n", encoding="utf-8")
    assert text + "\n" == path.read_text(encoding="utf-8"), f"differs from {path}"


def summary(db: Database, sid: int, project: str = "proj", at: int = START, **fields: Any) -> int:
    with db.write() as conn:
        return insert_summary(
            conn, Summary(session_id=sid, project=project, created_at=at, **fields)
        )


def many(db: Database, sid: int, count: int, *, project: str = "proj") -> None:
    """`count` observations spread over four days, a few per hour, with work tokens."""
    for n in range(count):
        observation(
            db,
            sid,
            project=project,
            type=KINDS[n % len(KINDS)],
            title=f"Step {n}: {'adjusted' if n % 2 else 'checked'} the ledger batch {n % 7}",
            narrative=f"Batch {n % 7} posts payments; retry {n} used backoff of {n * 5} s.",
            facts=[f"ledger/batch_{n % 7}.py:{10 + n} changed", f"{n} tests pass"],
            files_modified=[f"ledger/batch_{n % 7}.py"],
            discovery_tokens=1200 + 10 * n,
            created_at=START - 3 * DAY_MS + n * 85 * 60_000,
        )


def render(db: Database, projects: tuple[str, ...], warning: str | None = None) -> str:
    return compose(db.read(), projects, settings.load(), warning=warning).text


def test_empty_project(data_dir: Path) -> None:
    with Database() as db:
        text = render(db, ("proj",))
    golden("empty", text)
    assert text  # a welcome, never an empty string


def test_one_session(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        observation(db, sid, type="discovery", title="Ledger posts in batches of 500",
                    narrative="Read ledger/post.py: batches of 500, retried three times.",
                    discovery_tokens=2400, created_at=START)  # fmt: skip
        observation(db, sid, type="bugfix", title="Fixed the retry cap in ledger/post.py",
                    narrative="The cap was compared in ms against seconds; now seconds.",
                    facts=["ledger/post.py:88 compares seconds"], files_modified=["ledger/post.py"],
                    discovery_tokens=5100, created_at=START + 4 * 60_000)  # fmt: skip
        observation(db, sid, type="change", title="Ran the ledger tests: 42 pass",
                    discovery_tokens=900, created_at=START + 4 * 60_000)  # fmt: skip
        observation(db, sid, title="Other project", project="other", created_at=START)
        summary(db, sid, at=START + 9 * 60_000, request="Fix the ledger retry cap",
                learned="Backoff values are seconds", completed="Cap fixed, tests pass",
                next_steps="Add a regression test for the cap")  # fmt: skip
        text = render(db, ("proj",))
        assert render(db, ("proj",)) == text  # same database, same bytes
    golden("one_session", text)
    assert "Other project" not in text


def test_fifty_observations_over_several_days(data_dir: Path) -> None:
    with Database() as db:
        first, second = session(db, "s-1"), session(db, "s-2")
        many(db, first, 40)
        many(db, second, 0)
        for n in range(40, 56):
            observation(db, second, type="feature", title=f"Added export step {n}",
                        narrative=f"Export {n} writes CSV.", discovery_tokens=800,
                        created_at=START + n * 60_000)  # fmt: skip
        summary(db, first, at=START - DAY_MS, request="Harden ledger batches",
                completed="Backoff capped")  # fmt: skip
        summary(db, second, at=START + 57 * 60_000, request="Add CSV export",
                learned="Export reads the ledger view", next_steps="Quote commas")  # fmt: skip
        text = render(db, ("proj",))
    golden("fifty_over_days", text)
    days = [line for line in text.splitlines() if line.startswith("### ")]
    assert len(days) >= 4
    assert sum(1 for line in text.splitlines() if line.split(" ")[0].strip("*").isdigit()) == 50


def test_worktree_with_parent(data_dir: Path) -> None:
    with Database() as db:
        main = session(db, "s-main", project="ledger")
        tree = session(db, "s-wt", project="ledger/retry-fix")
        observation(db, main, project="ledger", type="decision",
                    title="Chose exponential backoff for batches", created_at=START)  # fmt: skip
        observation(db, tree, project="ledger/retry-fix", type="bugfix",
                    title="Fixed the retry cap on the branch",
                    created_at=START + HOUR_MS)  # fmt: skip
        observation(db, tree, project="other/retry-fix", title="Not this repo",
                    created_at=START)  # fmt: skip
        text = render(db, ("ledger", "ledger/retry-fix"))
    golden("worktree", text)
    assert "Chose exponential backoff" in text
    assert "Fixed the retry cap" in text


def test_budget_overflow_drops_oldest_rows_first(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_CONTEXT_TOKEN_BUDGET", "400")
    with Database() as db:
        sid = session(db)
        many(db, sid, 60)
        summary(db, sid, at=START + DAY_MS, request="Harden ledger batches",
                learned="Backoff is in seconds", next_steps="Ship it")  # fmt: skip
        context = compose(db.read(), ("proj",), settings.load())
    golden("budget_overflow", context.text)
    assert tokens(context.text) <= 400
    assert context.dropped > 0
    assert f"({context.dropped} rows left out to stay within 400 tokens)" in context.text
    # The index goes first, oldest rows first, then findings, then decisions: under this
    # budget the 5 newest observations (whatever their type) and the decisions within their
    # share are what is left.
    shown = {int(r.ident) for r in context.rows}
    assert set(range(56, 61)) <= shown
    assert all(r.section == "decision" for r in context.rows if int(r.ident) < 56)


def newest_and_decisions(context: Context, count: int) -> tuple[set[str], int]:
    """Which of the 5 newest observations (ids `count - 4` … `count`) the context shows, and
    the tokens of its "Decisions in force" section."""
    shown = {r.ident for r in context.rows}
    lines = context.text.splitlines()
    start = lines.index("## Decisions in force")
    end = next(n for n in range(start + 1, len(lines)) if lines[n].startswith("## "))
    newest = {str(n) for n in range(count - 4, count + 1)}
    return newest & shown, tokens("\n".join(lines[start:end]))


@pytest.mark.parametrize("budget", [2000, 800])
def test_many_decisions_leave_the_newest_work_shown(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    """One observation in six a decision (bench/context_bench.py: 3,000 with 500): decisions
    take at most their share of the budget, the 5 newest observations are always shown, and a
    timeline of the newest work follows."""
    monkeypatch.setenv("CLAUDE_MEM_CONTEXT_TOKEN_BUDGET", str(budget))
    with Database() as db:
        sid = session(db)
        many(db, sid, 300)
        context = compose(db.read(), ("proj",), settings.load())
    assert len(context.memory.decisions) <= 20  # 40% of the 50 rows
    assert tokens(context.text) <= budget
    newest, decided = newest_and_decisions(context, 300)
    assert len(newest) == 5, context.text
    assert decided <= DECISION_SHARE * budget
    assert "## Timeline" in context.text
    sections = {r.section for r in context.rows}
    assert sections == {"decision", "finding", "index"}


def test_each_finding_names_its_main_files(data_dir: Path) -> None:
    with Database() as db:
        sid = session(db)
        observation(db, sid, type="discovery", title="Audited the auth module",
                    narrative="Tokens are compared in constant time.",
                    files_read=["/home/ada/shop/src/auth/tokens.py", "src/auth/session.py"],
                    created_at=START)  # fmt: skip
        observation(db, sid, type="bugfix", title="Fixed the cart total",
                    narrative="Sums Decimals now.", files_read=["src/cart/view.py"],
                    files_modified=["src/cart/total.py", "src/cart/tax.py", "tests/test_cart.py",
                                    "src/cart/more.py"],
                    created_at=START + 60_000)  # fmt: skip
        text = render(db, ("proj",))
    lines = text.splitlines()
    audit = lines.index("  Tokens are compared in constant time.")
    assert lines[audit + 1] == "  Files: auth/tokens.py, auth/session.py"
    fix = lines.index("  Sums Decimals now.")
    assert lines[fix + 1] == "  Files: cart/total.py, cart/tax.py, tests/test_cart.py"


def test_a_project_with_only_history_says_how_many_commits(data_dir: Path, tmp_path: Path) -> None:
    repo = Repo(tmp_path / "ledger")
    for n in range(4):
        message = f"Post ledger batch {n} in one transaction\n\nA crash left half a batch."
        repo.commit({f"ledger/step{n}.py": f"n = {n}\n"}, message)
    with Database() as db:
        stats = import_history(db, str(repo.path))
        assert stats.kept == 4
        text = render(db, (stats.project,))
    assert text.startswith(
        f"# [{stats.project}] claude-mem: 4 commits of git history in memory (no sessions yet)."
    )
    assert "no memory yet" not in text
    assert "claude-mem search QUERY" in text


def test_failing_pipeline_warning_comes_first(data_dir: Path) -> None:
    ledger = HealthLedger()
    for _ in range(3):
        ledger.failed("anthropic", ProviderError("transient", "connection refused"))
    warning = ledger.warning(["anthropic", "local"])
    assert warning is not None
    with Database() as db:
        sid = session(db)
        observation(db, sid, type="bugfix", title="Fixed the parser", created_at=START)
        text = render(db, ("proj",), warning=warning)
        empty = render(db, ("nothing-here",), warning=warning)
    golden("failing_pipeline", text)
    assert text.startswith("⚠ claude-mem: compression with 'anthropic' is failing")
    assert empty.split("\n")[0] == warning


@pytest.mark.parametrize("budget", [100, 150, 400, 1000])
def test_budget_is_never_exceeded_even_by_huge_fields(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_CONTEXT_TOKEN_BUDGET", str(budget))
    with Database() as db:
        sid = session(db)
        many(db, sid, 30)
        summary(db, sid, request="r" * 3000, learned="l " * 3000, completed="c" * 3000)
        ledger_warning = "⚠ " + "w" * 600
        context = compose(db.read(), ("proj",), settings.load(), warning=ledger_warning)
    assert tokens(context.text) <= budget
    assert context.text.startswith("⚠ ")


def test_expanded_rows_show_facts_when_asked(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_CONTEXT_FULL_FIELD", "facts")
    monkeypatch.setenv("CLAUDE_MEM_CONTEXT_FULL_COUNT", "1")
    with Database() as db:
        sid = session(db)
        many(db, sid, 3)
        text = render(db, ("proj",))
    lines = text.splitlines()
    expanded = [n for n, line in enumerate(lines) if line.startswith("**")]
    assert len(expanded) == 1
    assert lines[expanded[0]].startswith("**3** ")
    assert lines[expanded[0] + 1 : expanded[0] + 3] == [
        "  - ledger/batch_2.py:12 changed",
        "  - 2 tests pass",
    ]


def test_terminal_view_shows_the_same_rows(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_MEM_CONTEXT_TOKEN_BUDGET", "400")
    with Database() as db:
        sid = session(db)
        many(db, sid, 60)
        summary(db, sid, at=START + DAY_MS, request="Harden", next_steps="Ship it")
        context = compose(db.read(), ("proj",), settings.load())
        view = terminal_view(context)
    rows = [line.split()[0] for line in view.splitlines() if line.startswith("  #")]
    assert rows == [f"#{row.ident}" for row in context.rows]
    assert f"… {context.dropped} rows left out" in view
    assert f"Injected: ~{context.tokens:,} of 400 tokens" in view
    assert view.endswith("Next steps (S1): Ship it")


def test_knowledge_leads_and_superseded_never_appears(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decisions in force first (however old), then the newest findings, then the index; a
    superseded observation nowhere, and CLAUDE_MEM_CONTEXT_OBSERVATIONS still caps the rows."""
    with Database() as db:
        sid = session(db)
        old_rule = observation(db, sid, type="decision", title="Timeouts are retried three times",
                               narrative="Retry three times.", created_at=START)  # fmt: skip
        rule = observation(db, sid, type="decision", title="Timeouts are retried twice",
                           narrative="Retry a timeout twice, never more.",
                           created_at=START + 60_000)  # fmt: skip
        with db.write() as conn:
            conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?", (rule, old_rule))
        many(db, sid, 0)
        for n in range(12):
            observation(db, sid, type="bugfix", title=f"Fixed batch {n}",
                        narrative=f"Batch {n} summed floats; now Decimal.",
                        created_at=START + (n + 2) * HOUR_MS)  # fmt: skip
        context = compose(db.read(), ("proj",), settings.load())
        lines = context.text.splitlines()
        assert "retried three times" not in context.text
        assert lines.index("## Decisions in force") < lines.index("## Latest findings")
        assert lines.index("## Latest findings") < lines.index("## Timeline")
        assert lines[lines.index("## Decisions in force") + 1 :][:2] == [
            f"**{rule}** Nov 30 09:01 ⚖ **Timeouts are retried twice**",
            "  Retry a timeout twice, never more.",
        ]
        findings = [r.ident for r in context.rows if r.section == "finding"]
        assert findings == ["14", "13", "12"]  # CLAUDE_MEM_CONTEXT_FULL_COUNT, newest first
        assert [r.section for r in context.rows][:4] == ["decision", *["finding"] * 3]
        view = terminal_view(context)
        assert view.splitlines()[:2] == [
            "Decisions in force",
            f"  #{rule:<6} Nov 30 09:01 ⚖ Timeouts are retried twice",
        ]
        with db.write() as conn:
            conn.execute("UPDATE observations SET superseded_by = NULL")
        monkeypatch.setenv("CLAUDE_MEM_CONTEXT_OBSERVATIONS", "5")
        capped = compose(db.read(), ("proj",), settings.load())
        assert [r.ident for r in capped.rows] == [str(rule), str(old_rule), "14", "13", "12"]
