"""Time decides between rules (issue #30 item 2), on a real store and through a real worker:
a newer decision on the same subject supersedes the older one whatever words it uses, each
carries when it held (`valid_from`, `valid_to`), search ranks the newer first, and `as_of`
answers with what held on a date (store, `/api/search`, `claude-mem search`, MCP `search`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from mcp import ClientSession

from claude_mem.records import Observation
from claude_mem.search.filters import build_filters
from claude_mem.search.hybrid import HybridSearcher
from claude_mem.store import Database
from claude_mem.store.db import open_database
from claude_mem.store.observations import delete_observation, get_observation, insert_observation
from claude_mem.store.supersede import settle
from claude_mem.worker import client, lifecycle
from tests.polling import wait_until
from tests.store_helpers import found, session
from tests.test_mcp_server import text_of, with_session
from tests.worker_process import Env, worker_env

MARCH = 1_772_445_600_000  # 2026-03-02 10:00 UTC: the rule agreed first
APRIL = 1_775_469_600_000  # 2026-04-06 10:00 UTC: the rule as it stands now
BETWEEN, BEFORE = "2026-03-20", "2026-03-01"
SUBJECT = ["subject:to_csv", "subject:src/invoicer/export.py"]
OLD_RULE = "to_csv() returns an empty string when an invoice has no items"
NEW_RULE = "to_csv() always writes the header row, then a TOTAL row of 0.00"
# The next bug report on that code: its words are the older rule's, not the newer one's.
BUG = "accounting import failed: to_csv returned an empty string for an invoice with no items"


def _decided(db: Database, host_id: str, title: str, when: int) -> int:
    """A decision as the consumer stores it: inserted, then settled in the same write."""
    sid = session(db, host_id, project="invoicer")
    obs = Observation(session_id=sid, project="invoicer", type="decision", title=title,
                      narrative=f"Agreed: {title}.", concepts=SUBJECT,
                      files_read=["src/invoicer/export.py"], created_at=when)  # fmt: skip
    with db.write() as conn:
        return settle(conn, insert_observation(conn, obs)[0])


def _seed(db: Database) -> tuple[int, int]:
    return _decided(db, "s-march", OLD_RULE, MARCH), _decided(db, "s-april", NEW_RULE, APRIL)


def _row(db: Database, obs_id: int) -> dict[str, Any]:
    return found(get_observation(db.read(), obs_id))


@pytest.fixture
def db(data_dir: Path) -> Iterator[Database]:
    database = Database()
    yield database
    database.close()


def test_a_newer_rule_on_the_same_subject_supersedes_without_a_word_of_amending(
    db: Database,
) -> None:
    old, new = _seed(db)
    assert (_row(db, old)["valid_from"], _row(db, old)["valid_to"]) == (MARCH, APRIL)
    assert _row(db, old)["superseded_by"] == new
    assert (_row(db, new)["valid_from"], _row(db, new)["valid_to"]) == (APRIL, None)
    assert _row(db, new)["superseded_by"] is None


def test_search_ranks_the_newer_first_and_as_of_answers_with_what_held(db: Database) -> None:
    old, new = _seed(db)
    searcher = HybridSearcher(db)

    def ids(**filters: Any) -> list[int]:
        hits = searcher.search(BUG, build_filters(projects=["invoicer"], **filters)).hits
        return [hit.id for hit in hits if hit.kind == "observation"]

    assert ids()[:2] == [new, old]  # both found, the newer first though the words are older
    assert ids(as_of=BETWEEN) == [old]  # what we believed then: current, and nothing newer
    assert ids(as_of=BEFORE) == []
    assert ids(as_of=APRIL) == [new]  # from the moment it was agreed
    with pytest.raises(ValueError, match="'someday' is not a date"):
        build_filters(as_of="someday")


def test_a_decision_never_supersedes_a_newer_one(db: Database) -> None:
    new = _decided(db, "s-april", NEW_RULE, APRIL)
    old = _decided(db, "s-march", OLD_RULE, MARCH)  # back-filled after it, from before it
    assert _row(db, new)["superseded_by"] is None
    assert _row(db, old)["superseded_by"] is None


def test_forgetting_the_newer_rule_makes_the_older_current_again(db: Database) -> None:
    old, new = _seed(db)
    with db.write() as conn:
        assert delete_observation(conn, new)
    assert (_row(db, old)["superseded_by"], _row(db, old)["valid_to"]) == (None, None)


def test_decisions_of_another_project_are_never_superseded(db: Database) -> None:
    old = _decided(db, "s-march", OLD_RULE, MARCH)
    sid = session(db, "s-other", project="other")
    with db.write() as conn:
        theirs = Observation(session_id=sid, project="other", type="decision", title=NEW_RULE,
                             concepts=SUBJECT, created_at=APRIL)  # fmt: skip
        settle(conn, insert_observation(conn, theirs)[0])
    assert (_row(db, old)["superseded_by"], _row(db, old)["valid_to"]) == (None, None)


@pytest.fixture
def env(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    yield from worker_env(data_dir, monkeypatch)


def test_as_of_through_a_real_worker_the_cli_and_mcp(env: Env, tmp_path: Path) -> None:
    with open_database() as db:
        old, new = _seed(db)
    env.vars["CLAUDE_MEM_EMBEDDING_MODEL"] = "none"  # full text: the same ranking every run
    env.start()
    # `worker start` returns once the socket answers; the store opens just after (two phases).
    assert wait_until(lambda: lifecycle.ready_with_token() is not None, timeout=60)
    worker = lifecycle.ready_with_token()
    assert worker is not None
    running, token = worker

    def api(**params: str) -> list[int]:
        path = "/api/search?" + urlencode({"query": BUG, "project": "invoicer", **params})
        answer = client.request("GET", path, port=running.port, token=token, timeout=30)
        assert answer.status == 200, answer.body
        hits = json.loads(answer.body)["hits"]
        return [hit["id"] for hit in hits if hit["kind"] == "observation"]

    assert api()[:2] == [new, old]
    assert api(as_of=BETWEEN) == [old]
    assert api(as_of=BEFORE) == []
    refused = client.request("GET", "/api/search?query=x&as_of=someday", port=running.port,
                             token=token, timeout=30)  # fmt: skip
    assert refused.status == 400
    assert "'someday' is not a date" in json.loads(refused.body)["error"]

    def cli(*argv: str) -> list[int]:
        done = env.cli("search", BUG, "--project", "invoicer", "--json", *argv)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert answer["source"] == "worker"
        return [hit["id"] for hit in answer["hits"] if hit["kind"] == "observation"]

    assert cli()[:2] == [new, old]
    assert cli("--as-of", BETWEEN) == [old]
    assert cli("--as-of", BEFORE) == []
    bad = env.cli("search", BUG, "--as-of", "the day before")
    assert bad.returncode == 2
    assert "--as-of 'the day before' is not a date" in bad.stderr

    async def work(mcp: ClientSession) -> list[str]:
        calls = [{}, {"as_of": BETWEEN}, {"as_of": BEFORE}]
        return [
            text_of(await mcp.call_tool("search", {"query": BUG, "project": "invoicer", **c}))
            for c in calls
        ]

    now, then, before = with_session(env.vars, tmp_path, work)
    assert now.index(f"#{new} ") < now.index(f"#{old} ")
    assert f"(superseded by #{new})" in now
    assert f"#{old} " in then
    assert f"#{new} " not in then
    assert "superseded" not in then  # as of then, it was the rule
    assert f"#{old} " not in before
    assert f"#{new} " not in before
