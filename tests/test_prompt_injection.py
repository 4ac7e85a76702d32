"""Prompt-time injection end to end: the real hook command with Claude Code's recorded
UserPromptSubmit and SessionStart payloads, against a real worker on a loopback port.

Full text only (`CLAUDE_MEM_EMBEDDING_MODEL=none`) for the floor on shared words, the budget,
what a session was given, modes, pauses and superseded rows; the bundled model for a decision
found in other words, and for the floor's calibration on tests/fixtures/vector-floor/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_mem import __version__
from claude_mem.context.budget import tokens
from claude_mem.context.relevant import relevant
from claude_mem.project import resolve_project
from claude_mem.records import Summary
from claude_mem.search.hybrid import HybridSearcher
from claude_mem.store import Database
from claude_mem.store.search_queries import SearchFilters
from claude_mem.store.sessions import add_prompt
from claude_mem.store.summaries import insert_summary
from tests.agent_hooks import AGENT_HOOKS, read_capture
from tests.polling import wait_until
from tests.store_helpers import observation, session
from tests.test_hooks_process import answer, base_env, hook
from tests.worker_fixtures import RunningWorker, running_worker

CAPTURE = dict(read_capture(AGENT_HOOKS / "claude-code-2.1.332.jsonl"))
RULE = "CSV export keeps the header row even when the report has no rows"
FLOOR = Path(__file__).parent / "fixtures" / "vector-floor" / "memories.json"


class Host:
    """Claude Code in one project folder: its hook runs, as the host runs them."""

    def __init__(self, worker: RunningWorker, env: dict[str, str], project: Path) -> None:
        self.worker, self.env, self.cwd = worker, env, project
        self.project = resolve_project(str(project)).name

    @property
    def db(self) -> Database:
        assert self.worker.state.db is not None
        return self.worker.state.db

    def prompt(self, session_id: str, text: str, **env: str) -> str | None:
        """The context the prompt hook hands the agent, or None."""
        payload = {**CAPTURE["UserPromptSubmit"], "session_id": session_id, "prompt": text}
        payload["cwd"] = str(self.cwd)
        done = hook("claude-code", "user-prompt-submit", payload, {**self.env, **env})
        assert done.returncode == 0, done.stderr
        out: dict[str, Any] = answer(done).get("hookSpecificOutput") or {}
        context = out.get("additionalContext")
        return context if isinstance(context, str) else None

    def start(self, session_id: str) -> str:
        payload = {**CAPTURE["SessionStart"], "session_id": session_id, "cwd": str(self.cwd)}
        done = hook("claude-code", "session-start", payload, self.env)
        assert done.returncode == 0, done.stderr
        context = answer(done)["hookSpecificOutput"]["additionalContext"]
        assert isinstance(context, str)
        return context

    def earlier(self, host_id: str = "earlier-chat") -> int:
        return session(self.db, host_id, project=self.project)

    def note(self, sid: int, **fields: Any) -> int:
        return observation(self.db, sid, project=self.project, **fields)


def host_for(worker: RunningWorker, data_dir: Path, tmp_path: Path) -> Host:
    home, project = tmp_path / "home", tmp_path / "invoicer"
    home.mkdir()
    project.mkdir()
    (data_dir / "install-version").write_text(__version__ + "\n")
    return Host(worker, base_env(data_dir, worker.port, home), project)


@pytest.fixture
def host(worker: RunningWorker, data_dir: Path, tmp_path: Path) -> Host:
    """Full text only (the `worker` fixture turns vectors off)."""
    return host_for(worker, data_dir, tmp_path)


def test_a_related_prompt_gets_the_decision_an_unrelated_one_nothing(host: Host) -> None:
    sid = host.earlier()
    decision = host.note(sid, type="decision", title=RULE,
                         narrative="Keep the CSV export header row even when empty.")  # fmt: skip
    summary_free = host.note(sid, type="discovery", title="Logo is a PNG in assets")
    context = host.prompt("now-1", "the csv export header row when empty")
    assert context is not None
    assert context.splitlines()[:3] == [
        "## Relevant past work",
        f"- #{decision} " + context.splitlines()[1].split(" ", 2)[2],
        "  Keep the CSV export header row even when empty.",
    ]
    assert f"[decision] {RULE}" in context
    assert f"#{summary_free} " not in context
    # One shared word is no evidence: nothing at all is injected.
    assert host.prompt("now-1", "please rename the export button on the settings page") is None
    assert host.prompt("now-1", "what is the weather going to be like tomorrow morning") is None


def test_every_kind_is_searched_and_what_was_given_is_not_given_again(host: Host) -> None:
    sid = host.earlier()
    host.note(sid, type="bugfix", title="Fixed the invoice rounding: Decimal, not float",
              narrative="Summing floats made round() give 1.72; now Decimal.")  # fmt: skip
    with host.db.write() as conn:
        prompt_id = add_prompt(conn, sid, "why is the invoice rounding wrong?", now=1).prompt_id
    question = "the invoice rounding"
    first = host.prompt("now-2", question)
    assert first is not None
    assert f"#P{prompt_id} " in first
    assert "[bugfix] Fixed the invoice rounding" in first
    # The same session never gets the same items twice; its own new prompt is not offered.
    assert host.prompt("now-2", "the invoice rounding?") is None
    # Another session does get them (and the other session's prompts too).
    other = host.prompt("now-3", question)
    assert other is not None
    assert set(first.splitlines()) < set(other.splitlines())


def test_what_session_start_gave_is_not_injected(host: Host) -> None:
    sid = host.earlier()
    rule = host.note(sid, type="decision", title=RULE, narrative="Header row always.")
    start = host.start("fresh-1")
    assert start.index("## Decisions in force") < start.index(f"**{rule}**")
    assert host.prompt("fresh-1", "csv export: keep the header row when empty") is None
    # A second session start (a /clear, a compaction) hands over a fresh context: the rule is
    # not injected then either, since that start carried it again.
    host.start("fresh-1")
    assert host.prompt("fresh-1", "csv export header row, even when empty") is None


def test_superseded_observations_are_never_injected(host: Host) -> None:
    sid = host.earlier()
    old = host.note(sid, type="decision", title="Timeouts are retried three times",
                    narrative="Retry each request timeout three times.")  # fmt: skip
    new = host.note(sid, type="decision", title="Timeouts are retried twice, never more",
                    narrative="Retry each request timeout twice, never more.")  # fmt: skip
    with host.db.write() as conn:
        conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?", (new, old))
    context = host.prompt("now-4", "request timeout retried")
    assert context is not None
    assert f"#{new} " in context
    assert f"#{old} " not in context


def test_the_budget_holds_however_many_items_match(host: Host) -> None:
    sid = host.earlier()
    for n in range(20):
        host.note(sid, type="discovery", title=f"Ledger batch {n} posting retries",
                  narrative=f"Ledger batch {n} posting retries use backoff. " * 12)  # fmt: skip
    many = {"CLAUDE_MEM_SEMANTIC_INJECT_LIMIT": "20"}
    context = host.prompt("now-5", "ledger batch posting retries", **many)
    assert context is not None
    assert tokens(context) <= 500  # CLAUDE_MEM_SEMANTIC_INJECT_TOKENS' default
    items = [line for line in context.splitlines() if line.startswith("- #")]
    assert 1 < len(items) < 20
    assert all(len(line) <= 260 for line in context.splitlines())  # one or two lines each
    few = host.prompt("now-6", "ledger batch posting retries")
    assert few is not None
    assert len([line for line in few.splitlines() if line.startswith("- #")]) <= 5


def test_a_decisions_rule_reaches_the_agent_in_its_own_words(host: Host) -> None:
    """The injection carries the rule as stored, not only its id and title: a long rule is
    shortened at a word to the item's share of the budget, never to a fixed gist."""
    sid = host.earlier()
    rule = (
        "Invoice numbers come from one sequence per tenant and year, allocated inside the "
        "transaction that stores the invoice, so a rolled-back invoice leaves no gap; numbers "
        "are never reused, a cancelled invoice keeps its number and gets a credit note, and "
        "the sequence restarts at 1 on January 1st in the tenant's own time zone, not UTC."
    )
    decision = host.note(sid, type="decision", title="Invoice numbering", narrative=rule)
    context = host.prompt("rule-1", "how are invoice numbers allocated per tenant and year?")
    assert context is not None
    assert f"#{decision} " in context
    assert rule in context  # whole, within the budget
    assert tokens(context) <= 500
    # Under a tight budget the words are shortened at a word, never cut inside one.
    tight = relevant(host.db.read(), HybridSearcher(host.db, None),
                     "how are invoice numbers allocated per tenant and year?",
                     SearchFilters(projects=(host.project,)), own_session=None, given=set(),
                     limit=5, budget=60)  # fmt: skip
    assert tokens(tight.text) <= 60
    assert tight.labels == [str(decision)]
    body = tight.text.splitlines()[2].strip()
    assert body.endswith("…")
    kept = body[:-1].rstrip(" ,;:-")
    assert rule.startswith(kept)
    assert rule[len(kept)] in " ,;:-"


def test_identical_earlier_prompts_are_injected_once_beside_the_work(host: Host) -> None:
    """Five copies of one earlier prompt take one item: the work they led to gets the rest."""
    asked = "why does the invoice total drift by a cent on long invoices?"
    prompts = []
    for n in range(5):
        sid = host.earlier(f"asked-{n}")
        with host.db.write() as conn:
            prompts.append(add_prompt(conn, sid, asked, now=n + 1).prompt_id)
    work = host.note(host.earlier("the-fix"), type="bugfix",
                     title="Invoice total: VAT rounded once on the net total",
                     narrative="Root cause: the VAT of each line was rounded, so long invoices "
                               "drift by a cent; now it is rounded once on the total.")  # fmt: skip
    context = host.prompt("ask-again", "the invoice total drifts by a cent on long invoices")
    assert context is not None
    shown = [line for line in context.splitlines() if "[prompt]" in line]
    assert len(shown) == 1, context
    assert f"#{work} " in context
    assert "rounded once on the total" in context


def test_a_short_item_leaves_its_unused_share_to_a_long_rule(host: Host) -> None:
    sid = host.earlier()
    rule = (
        "Invoice numbers come from one sequence per tenant and year, allocated inside the "
        "transaction that stores the invoice, so a rolled-back invoice leaves no gap; numbers "
        "are never reused, a cancelled invoice keeps its number and gets a credit note, and "
        "the sequence restarts at 1 on January 1st in the tenant's own time zone, not UTC, "
        "so two tenants in different zones may start their year hours apart."
    )
    decision = host.note(sid, type="decision", title="Invoice numbering", narrative=rule)
    short = host.note(sid, type="discovery", title="Invoice numbers per tenant are printed",
                      narrative="Top right, per year.")  # fmt: skip
    question = "invoice numbers per tenant and year"
    filters = SearchFilters(projects=(host.project,))
    found = relevant(host.db.read(), HybridSearcher(host.db, None), question, filters,
                     own_session=None, given=set(), limit=5, budget=200)  # fmt: skip
    assert sorted(found.labels) == sorted([str(decision), str(short)])
    assert len(rule) > 370  # more than an equal share (half of 200 tokens, heading in) holds
    assert rule in found.text
    assert tokens(found.text) <= 200


def test_a_sentence_already_given_is_not_given_again(host: Host) -> None:
    """A summary that repeats the one before it (a "commit it" turn) brings only what is new."""
    cause = "Root cause: the VAT of every line was rounded to the cent and then summed."
    turns = [
        ("The VAT on invoice 2291 is 0.12 too high. Find out why.", cause),
        ("good, commit it", f"{cause} Committed as a41c9e2: invoice VAT too high fix."),
    ]
    with host.db.write() as conn:
        for n, (request, learned) in enumerate(turns):
            sid = host.earlier(f"vat-{n}")
            summary = Summary(session_id=sid, project=host.project, request=request,
                              learned=learned)  # fmt: skip
            insert_summary(conn, summary)
    context = host.prompt("vat-again", "why is the VAT on an invoice too high? rounded per line")
    assert context is not None
    assert context.count(cause) == 1, context
    assert "Committed as a41c9e2" in context


def test_modes_and_pauses(host: Host) -> None:
    sid = host.earlier()
    host.note(sid, type="decision", title=RULE, narrative="Header row always.")
    question = "csv export: keep the header row when empty"
    assert host.prompt("mode-1", question, CLAUDE_MEM_MODE="capture-only") is None
    assert host.prompt("mode-2", question, CLAUDE_MEM_MODE="recall-only") is not None
    assert host.prompt("mode-3", "#nomem let us look at the csv export") is None
    assert host.prompt("mode-3", question) is None  # paused by #nomem
    assert host.prompt("mode-4", question, CLAUDE_MEM_SEMANTIC_INJECT="false") is None
    assert host.prompt("mode-4", question) is not None


# --- the bundled embedding model -----------------------------------------------------------


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Host, dict[str, Any]]]:
    """A worker with the real model holding the vector-floor fixture and a chat-only decision."""
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("embedded")
    data = root / "data"
    data.mkdir()
    mp.setenv("CLAUDE_MEM_DATA_DIR", str(data))
    mp.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "minilm-l6-int8")
    try:
        with running_worker() as worker:
            host = host_for(worker, data, root)
            yield host, _embed(host)
    finally:
        mp.undo()


def _embed(host: Host) -> dict[str, Any]:
    memories: dict[str, Any] = json.loads(FLOOR.read_text("utf-8"))
    chat = host.earlier("chat-only")
    with host.db.write() as conn:
        add_prompt(conn, chat, "no - timeouts are retried twice, never more", now=1)
    rule = host.note(chat, type="decision", title="Request timeouts are retried twice",
                     narrative="Timeouts are retried twice, never more.")  # fmt: skip
    sid = host.earlier("floor")
    related = [(host.note(sid, title=m["title"], narrative=m["narrative"]), q)
               for m in memories["observations"] for q in m["queries"]]  # fmt: skip
    embedding = host.worker.state.embedding
    assert embedding is not None
    assert embedding.wait_loaded(60)
    embedding.notify()
    wait_until(lambda: not embedding.status()["pending"], timeout=120)
    return {"rule": rule, "related": related, "unrelated": memories["unrelated"]}


def test_a_chat_only_decision_reaches_a_later_prompt_in_other_words(
    embedded: tuple[Host, dict[str, Any]],
) -> None:
    host, stored = embedded
    context = host.prompt(
        "later-1", "how many attempts should the http client make on a slow server?"
    )
    assert context is not None
    assert f"#{stored['rule']} " in context
    assert "retried twice, never more" in context


def test_the_floor_passes_related_prompts_and_stops_unrelated_ones(
    embedded: tuple[Host, dict[str, Any]],
) -> None:
    host, stored = embedded
    post = host.worker.client.post
    missed = []
    for record, query in stored["related"]:
        answer = post("/api/context/semantic", json={"q": _prompt(query)}).json()
        if f"#{record} " not in answer["context"]:
            missed.append(query)
    assert missed == []
    for query in stored["unrelated"]:
        answer = post("/api/context/semantic", json={"q": _prompt(query)})
        assert answer.json()["count"] == 0, query


def _prompt(query: str) -> str:
    """A query as a prompt long enough to be searched (shorter prompts are skipped)."""
    return query if len(query) >= 20 else f"{query}: what do we know?"
