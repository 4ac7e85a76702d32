"""Team search on a real PostgreSQL + pgvector: ranking, the shared fusion, filters, row-level
security, the `scope=team` route through a real worker, and `claude-mem search --team`.

Members are made with plain SQL as the owner (a login role granted the group roles, a members
row, the team's shared projects); their records are inserted as the member, with vectors from
the real local embedding model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from claude_mem.search.embed import Embedder
from claude_mem.search.hybrid import MIN_SIMILARITY, fuse
from claude_mem.store.search_queries import Kind, SearchFilters
from claude_mem.team import embedded, pg, schema
from claude_mem.team import search as team_search
from tests.net import DeadPort, free_port
from tests.polling import wait_until
from tests.team_pg import TeamDatabase
from tests.worker_fixtures import RunningWorker, running_worker
from tests.worker_process import run_cli

T0 = 1_700_000_000_000
PASSWORD = "pw-team-search"
KINDS: dict[str, Kind] = {"observation": "observation", "summary": "summary"}


@dataclass(frozen=True, slots=True)
class Member:
    role: str
    url: str


def add_member(db: TeamDatabase, role: str, team: str, projects: tuple[str, ...]) -> Member:
    """A member of `team` (made if new) that shares `projects`, as plain SQL by the owner."""
    with pg.connect(db.owner_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO claude_mem.teams (name) VALUES (%s) ON CONFLICT DO NOTHING", (team,)
        )
        row = conn.execute("SELECT id FROM claude_mem.teams WHERE name = %s", (team,)).fetchone()
        assert row is not None
        conn.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{PASSWORD}'")
        conn.execute(f'GRANT {schema.READER}, {schema.WRITER} TO "{role}"')
        conn.execute(
            "INSERT INTO claude_mem.members (role, team_id, can_write) VALUES (%s, %s, true)",
            (role, row[0]),
        )
        for project in projects:
            conn.execute(
                "INSERT INTO claude_mem.shared_projects (team_id, project, shared_by)"
                " VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                (row[0], project, role),
            )
    return Member(role, pg.with_credentials(db.owner_url, role, PASSWORD))


@dataclass(frozen=True, slots=True)
class Record:
    title: str
    narrative: str
    project: str = "shop"
    kind: str = "observation"
    type: str = "bugfix"
    created_at: int = T0
    files: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    platform: str = "claude-code"

    @property
    def text(self) -> str:
        return "\n".join([self.title, self.narrative, *self.files, *self.concepts])


def push(member: Member, embedder: Embedder, *records: Record) -> list[str]:
    """`records` inserted as `member` (the way the sync pushes), their origin ids."""
    vectors = embedder.embed([r.text for r in records])
    origins = []
    with pg.connect(member.url) as conn, conn.transaction():
        for n, (record, vector) in enumerate(zip(records, vectors, strict=True)):
            origin = f"m1/{record.kind}/{member.role}-{n}-{record.created_at}"
            fields = {
                "title": record.title,
                "narrative": record.narrative,
                "files_read": [],
                "files_modified": list(record.files),
                "concepts": list(record.concepts),
            }
            if record.kind == "observation":  # as the sync pushes one (team.records)
                fields["type"] = record.type
            body = {"kind": record.kind, "origin_id": origin, "platform": record.platform,
                    "project": record.project, "fields": fields}  # fmt: skip
            conn.execute(
                """INSERT INTO claude_mem.records (origin_id, content_hash, kind, project, type,
                       title, created_at, machine, source_session, body, search_text, embedding)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, 'm1', 's1', %s, %s, %s::vector)
                   ON CONFLICT DO NOTHING""",
                (origin, origin, record.kind, record.project,
                 record.type if record.kind == "observation" else None, record.title,
                 record.created_at, json.dumps(body), record.text,
                 "[" + ",".join(str(float(x)) for x in vector) + "]"),
            )  # fmt: skip
            origins.append(origin)
    return origins


RETRY = Record(
    "Fixed parse_retry_after header crash in src/http/backoff.py",
    "parse_retry_after() raised on HTTP dates; it now accepts both seconds and dates.",
    files=("src/http/backoff.py",),
    concepts=("gotcha",),
)
CACHE = Record(
    "Stale settings after editing the config file",
    "The settings cache kept old values once the configuration file was changed on disk; "
    "it is now invalidated whenever the file's modification time moves.",
    type="discovery",
    created_at=T0 + 60_000,
    files=("src/settings/cache.py",),
    concepts=("how-it-works",),
)
DEPLOY = Record(
    "Deploys run database migrations before the web servers restart",
    "Release order: migrate, then restart, so no server reads a schema it doesn't know.",
    kind="summary",
    created_at=T0 + 120_000,
    platform="codex",
)


@pytest.fixture
def alice(team_db: TeamDatabase, unique_name: Callable[[str], str]) -> Member:
    return add_member(team_db, unique_name("alice"), "core", ("shop",))


@pytest.fixture
def searcher(alice: Member) -> Iterator[team_search.TeamSearcher]:
    found = team_search.TeamSearcher(alice.url)
    yield found
    found.close()


def titles(result: Any) -> list[str]:
    return [hit.title for hit in result.hits]


def test_an_identifier_wins_through_full_text_a_paraphrase_through_vectors(
    alice: Member, embedder: Embedder, searcher: team_search.TeamSearcher
) -> None:
    push(alice, embedder, RETRY, CACHE, DEPLOY)
    query = "parse_retry_after"
    exact = searcher.search(query, embedder.embed([query])[0].tolist())
    assert exact.mode == "hybrid"
    assert exact.hits[0].title == RETRY.title
    assert (exact.hits[0].author, exact.hits[0].source) == (alice.role, "team")
    assert exact.hits[0].origin_id is not None
    assert exact.hits[0].files == ["src/http/backoff.py"]
    # No word in common with CACHE's text: only its meaning finds it.
    prose = "old configuration values remain in memory when someone edits it"
    meaning = searcher.search(prose, embedder.embed([prose])[0].tolist())
    assert meaning.hits[0].title == CACHE.title
    assert searcher.search(prose, None).mode == "fulltext"
    assert CACHE.title not in titles(searcher.search("remain someone", None))
    # Another model's size of vector: nothing on the server is near it, and full text answers.
    other_model = searcher.search(query, [0.1] * 768)
    assert other_model.mode == "hybrid"
    assert titles(other_model) == titles(searcher.search(query, None))


def test_team_scores_are_the_local_fusion_of_the_servers_ranks(
    alice: Member, embedder: Embedder, searcher: team_search.TeamSearcher
) -> None:
    push(alice, embedder, RETRY, CACHE, DEPLOY)
    query = "settings file crash after deploys"
    vector = embedder.embed([query])[0].tolist()
    result = searcher.search(query, vector, limit=10)
    literal = "[" + ",".join(str(x) for x in vector) + "]"
    each = ["settings", "file", "crash", "deploys"]
    word = "plainto_tsquery('claude_mem.code', %s)"
    holds = ", ".join(f"tsv @@ {word}" for _ in each)
    with pg.connect(alice.url) as conn:
        rows = conn.execute(
            f"""SELECT seq, kind, ts_rank_cd(tsv, q), 1 - (embedding <=> %s::vector), tsv @@ q,
                       {holds}
                FROM claude_mem.records, (SELECT {" || ".join([word] * 4)} AS q) words""",
            (literal, *each, *each),
        ).fetchall()
    keys: list[tuple[Kind, int]] = [(KINDS[str(row[1])], int(str(row[0]))) for row in rows]
    # A word one record holds (of these three) is distinctive: its records rank first.
    rare = [n for n in range(len(each)) if sum(bool(row[5 + n]) for row in rows) == 1]
    distinctive = {key for key, r in zip(keys, rows, strict=True) if any(r[5 + n] for n in rare)}
    best = max(float(str(r[2])) for r in rows if r[4])
    fulltext = [
        (key, float(str(r[2])) + (best if key in distinctive else 0.0))
        for key, r in zip(keys, rows, strict=True)
        if r[4]
    ]
    similar = [(key, float(str(r[3]))) for key, r in zip(keys, rows, strict=True)]
    vectors = [(key, value) for key, value in similar if value >= MIN_SIMILARITY]
    expected = fuse(query, fulltext, vectors, distinctive)
    assert {(h.kind, h.id): h.score for h in result.hits} == {
        key: round(score, 6) for key, score in expected.items()
    }
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


def test_filters_the_server_answers(
    alice: Member, embedder: Embedder, searcher: team_search.TeamSearcher
) -> None:
    push(alice, embedder, RETRY, CACHE, DEPLOY)

    def found(filters: SearchFilters, query: str = "") -> set[str]:
        return set(titles(searcher.search(query, None, filters)))

    everything = {RETRY.title, CACHE.title, DEPLOY.title}
    assert found(SearchFilters()) == everything
    assert found(SearchFilters(types=("discovery",))) == {CACHE.title}
    assert found(SearchFilters(since=T0 + 1, until=T0 + 60_000)) == {CACHE.title}
    assert found(SearchFilters(files=("src/http",))) == {RETRY.title}
    assert found(SearchFilters(files=("src/settings/cache.py",))) == {CACHE.title}
    assert found(SearchFilters(files=("src/htt",))) == set()
    assert found(SearchFilters(concepts=("gotcha", "pattern"))) == {RETRY.title}
    assert found(SearchFilters(platforms=("codex",))) == {DEPLOY.title}
    assert found(SearchFilters(projects=("elsewhere",))) == set()
    assert found(SearchFilters(projects=("shop",)), "migrations restart") == {DEPLOY.title}
    assert set(titles(searcher.search("", None, kinds=("summary",)))) == {DEPLOY.title}
    with pytest.raises(team_search.TeamSearchError) as refused:
        searcher.search("x", None, SearchFilters(session_id=3))
    assert refused.value.status == 400
    with pytest.raises(team_search.TeamSearchError, match="as of a date") as refused:
        searcher.search("x", None, SearchFilters(as_of=1_000))
    assert refused.value.status == 400


def test_another_teams_rows_and_unshared_projects_never_come_back(
    team_db: TeamDatabase,
    unique_name: Callable[[str], str],
    alice: Member,
    embedder: Embedder,
    searcher: team_search.TeamSearcher,
) -> None:
    mallory = add_member(team_db, unique_name("mallory"), "rivals", ("shop",))
    push(mallory, embedder, RETRY)
    with pg.connect(team_db.owner_url, autocommit=True) as conn:  # alice's team, unshared
        conn.execute(
            """INSERT INTO claude_mem.records (team_id, origin_id, content_hash, kind, project,
                   title, created_at, member, machine, source_session, body, search_text)
               SELECT team_id, 'm9/observation/1', 'h', 'observation', 'secret', 'secret',
                   1, role, 'm9', 's9', '{}', 'parse_retry_after secret'
               FROM claude_mem.members WHERE role = %s""",
            (alice.role,),
        )
    vector = embedder.embed(["parse_retry_after"])[0].tolist()
    assert searcher.search("parse_retry_after", vector).hits == []
    assert searcher.search("", None).hits == []
    push(alice, embedder, CACHE)
    assert titles(searcher.search("", None)) == [CACHE.title]
    mine = team_search.TeamSearcher(mallory.url)
    assert titles(mine.search("parse_retry_after", vector)) == [RETRY.title]
    mine.close()


def test_forgotten_records_are_gone_and_superseded_ones_weigh_less(
    alice: Member, embedder: Embedder, searcher: team_search.TeamSearcher
) -> None:
    successor = Record(RETRY.title + " again", RETRY.narrative, created_at=T0 - 60_000)
    old, new, cache = push(alice, embedder, RETRY, successor, CACHE)
    before = searcher.search("parse_retry_after", None).hits
    assert before[0].title == RETRY.title  # the same covers: the later record breaks the tie
    with pg.connect(alice.url) as conn, conn.transaction():
        conn.execute(
            "INSERT INTO claude_mem.events (kind, project, origin_id, successor_origin_id,"
            " machine, created_at) VALUES ('supersede', 'shop', %s, %s, 'm1', 1),"
            " ('forget', 'shop', %s, NULL, 'm1', 2)",
            (old, new, cache),
        )
    after = searcher.search("parse_retry_after", None).hits
    assert [h.title for h in after] == [successor.title, RETRY.title]
    assert after[1].score == pytest.approx(before[0].score / 2, abs=1e-6)
    assert CACHE.title not in titles(searcher.search("", None))


def test_a_record_with_the_rare_word_is_never_buried_under_vector_neighbours(
    alice: Member, embedder: Embedder, searcher: team_search.TeamSearcher
) -> None:
    """40 records close to the query, and an older one holding its rare word without a vector
    (pushed before it was embedded): it ranks first, as in full text."""
    target = Record(
        "Quetzal adapter drops the idempotency header",
        "Retries through the Quetzal adapter lost the key, so cards were charged twice.",
        created_at=T0 - 60_000,
    )
    gateway = "The checkout request to the payment gateway timed out under load; raised"
    close = [
        Record(
            f"Checkout times out at the payment gateway ({i})",
            f"{gateway} the timeout and added a retry (case {i}).",
            created_at=T0 + i,
        )
        for i in range(40)
    ]
    origin, *_ = push(alice, embedder, target, *close)
    with pg.connect(alice.url) as conn, conn.transaction():
        conn.execute(
            "UPDATE claude_mem.records SET embedding = NULL WHERE origin_id = %s", (origin,)
        )
    query = "checkout payment gateway timeouts with quetzal"
    result = searcher.search(query, embedder.embed([query])[0].tolist(), limit=30)
    assert result.mode == "hybrid"
    assert titles(result)[0] == target.title
    assert set(titles(result)[1:]) <= {record.title for record in close}
    assert titles(searcher.search(query, None))[0] == target.title


def test_an_unreachable_server_is_an_error_not_a_hang(dead: DeadPort) -> None:
    for port in (dead.port, free_port()):
        gone = team_search.TeamSearcher(f"postgresql://alice:s3cret@127.0.0.1:{port}/team")
        with pytest.raises(team_search.TeamSearchError) as failed:
            gone.search("anything", None)
        assert failed.value.status == 502
        assert "s3cret" not in str(failed.value)


@pytest.fixture
def team_worker(
    team_db: TeamDatabase, unique_name: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[RunningWorker]:
    """A teammate's worker (another member, sharing nothing itself) whose sync round ran at
    start and waits an hour: what is pushed afterwards is on the server, not pulled here."""
    bob = add_member(team_db, unique_name("bob"), "core", ())
    monkeypatch.setenv("CLAUDE_MEM_EMBEDDING_MODEL", "none")  # full text: exact results
    monkeypatch.setenv("CLAUDE_MEM_TEAM_URL", bob.url)
    monkeypatch.setenv("CLAUDE_MEM_TEAM_SYNC_S", "3600")
    with running_worker() as running:
        sync = running.state.team
        assert sync is not None
        assert wait_until(lambda: sync.rounds >= 1, 30)
        yield running


def test_the_search_route_answers_from_the_team_server(
    alice: Member, team_worker: RunningWorker, embedder: Embedder
) -> None:
    push(alice, embedder, RETRY, CACHE)
    local = team_worker.client.get("/api/search", params={"query": "parse_retry_after"})
    assert local.status_code == 200
    assert local.json()["hits"] == []  # not pulled here
    team = team_worker.client.get(
        "/api/search", params={"query": "parse_retry_after", "scope": "team", "format": "text"}
    )
    assert team.status_code == 200, team.text
    body = team.json()
    assert body["mode"] == "fulltext"
    [hit] = body["hits"]
    assert (hit["title"], hit["author"], hit["project"]) == (RETRY.title, alice.role, "shop")
    assert hit["origin_id"].startswith("m1/observation/")
    assert RETRY.title in body["text"]
    row = next(line for line in body["text"].splitlines() if RETRY.title in line)
    assert row.startswith(f"| T{hit['id']} |")  # what `claude-mem show` opens
    assert f"| {alice.role} |" in row
    wrong = team_worker.client.get("/api/search", params={"scope": "team", "session_id": 1})
    assert wrong.status_code == 400


def test_the_route_names_the_setting_or_the_unreachable_server(
    worker: RunningWorker, monkeypatch: pytest.MonkeyPatch, dead: DeadPort
) -> None:
    missing = worker.client.get("/api/search", params={"query": "x", "scope": "team"})
    assert missing.status_code == 409
    assert "CLAUDE_MEM_TEAM_URL" in missing.json()["error"]
    url = f"postgresql://bob:hunter22@127.0.0.1:{dead.port}/team"
    monkeypatch.setenv("CLAUDE_MEM_TEAM_URL", url)
    with running_worker() as other:
        away = other.client.get("/api/search", params={"query": "x", "scope": "team"})
    assert away.status_code == 502
    assert away.json()["code"] == "team_unavailable"
    assert "hunter22" not in away.text


def test_cli_search_team(alice: Member, embedder: Embedder) -> None:
    push(alice, embedder, RETRY, CACHE, DEPLOY)
    env = {"CLAUDE_MEM_TEAM_URL": alice.url, "CLAUDE_MEM_WORKER_PORT": str(free_port()),
           "COLUMNS": "200"}  # fmt: skip
    done = run_cli("search", "--team", "--json", "stale values once the config changed", env=env)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert (found["source"], found["mode"]) == ("team server", "hybrid")
    hit = found["hits"][0]
    assert hit["title"] == CACHE.title
    assert hit["author"] == alice.role
    assert hit["label"] == f"T{hit['id']}"  # the id `show` opens, beside the author
    table = run_cli("search", "--team", "parse_retry_after", env=env)
    assert table.returncode == 0, table.stderr
    heading, row = table.stdout.splitlines()[:2]
    assert heading.split() == ["ID", "Type", "Time", "(UTC)", "Project", "Author", "Title"]
    assert row.startswith("T")  # the id `show` opens: T and the server's id
    assert row.split()[0][1:].isdigit()
    assert f"  {alice.role}  Fixed parse_retry_after" in row
    assert "via the team server" in table.stdout
    # The hit's id opens the whole record, with its author; --full shows it in the search.
    shown = run_cli("show", hit["label"], env=env)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"{hit['label']}  ·  discovery  ·  ")
    assert f"by {alice.role}" in shown.stdout.splitlines()[0]
    assert CACHE.narrative in shown.stdout
    assert "Files modified: src/settings/cache.py" in shown.stdout
    record = json.loads(run_cli("show", hit["label"], "--json", env=env).stdout)["records"][0]
    assert (record["kind"], record["author"], record["id"]) == (
        "observation",
        alice.role,
        hit["id"],
    )
    full = run_cli("search", "--team", "--full", "stale values once the config changed", env=env)
    assert CACHE.narrative in full.stdout
    missing = run_cli("show", "T999999", hit["label"], env=env)
    assert missing.returncode == 1
    assert CACHE.narrative in missing.stdout  # the other id is still shown
    assert missing.stderr == "claude-mem show: no record on the team server T999999\n"
    alone = run_cli("search", "--team", "x", env={"CLAUDE_MEM_WORKER_PORT": str(free_port())})
    assert alone.returncode == 2
    assert "CLAUDE_MEM_TEAM_URL" in alone.stderr
    alone = run_cli("show", hit["label"], env={"CLAUDE_MEM_WORKER_PORT": str(free_port())})
    assert alone.returncode == 1
    assert "CLAUDE_MEM_TEAM_URL" in alone.stderr


def _matching(
    url: str,
    projects: list[str] | None = None,
    words: str = "retry | secret",
    window: int = 1000,
    platforms: list[str] | None = None,
) -> list[int]:
    """`claude_mem.matching` called with raw SQL as `url`'s role: the records it picks for
    `words` (any), 'retry & secret' (all), newest first. A platform filter makes it read
    `records` rather than `record_words` (only the body holds the platform)."""
    with pg.connect(url) as conn:
        rows = conn.execute(
            "SELECT claude_mem.matching(to_tsquery('claude_mem.code', %s),"
            " to_tsquery('claude_mem.code', 'retry & secret'), %s,"
            " ARRAY['observation', 'summary'], %s, NULL, NULL, NULL, %s, NULL, NULL, NULL)",
            (words, window, projects, platforms),
        ).fetchall()
    return [int(str(row[0])) for row in rows]


def test_the_matching_function_returns_only_what_its_caller_may_read(
    team_db: TeamDatabase,
    unique_name: Callable[[str], str],
    alice: Member,
    embedder: Embedder,
) -> None:
    mallory = add_member(team_db, unique_name("mallory"), "rivals", ("shop",))
    push(mallory, embedder, RETRY)
    push(alice, embedder, RETRY)
    outsider, stranger = unique_name("outsider"), unique_name("stranger")
    with pg.connect(team_db.owner_url, autocommit=True) as conn:
        conn.execute(  # alice's team, a project nobody shares
            """INSERT INTO claude_mem.records (team_id, origin_id, content_hash, kind, project,
                   title, created_at, member, machine, source_session, body, search_text)
               SELECT team_id, 'm9/observation/1', 'h', 'observation', 'secret', 'secret',
                   1, role, 'm9', 's9', '{}', 'retry secret'
               FROM claude_mem.members WHERE role = %s""",
            (alice.role,),
        )
        # A reader who is in no team, and a login role that was never granted reading.
        conn.execute(f"CREATE ROLE \"{outsider}\" LOGIN PASSWORD '{PASSWORD}'")
        conn.execute(f'GRANT {schema.READER} TO "{outsider}"')
        conn.execute(f"CREATE ROLE \"{stranger}\" LOGIN PASSWORD '{PASSWORD}'")
        mine = conn.execute(
            "SELECT seq FROM claude_mem.records WHERE member = %s AND project = 'shop'",
            (alice.role,),
        ).fetchall()
        theirs = conn.execute(
            "SELECT seq FROM claude_mem.records WHERE member = %s", (mallory.role,)
        ).fetchall()
    [alices], [mallorys] = [int(str(r[0])) for r in mine], [int(str(r[0])) for r in theirs]
    assert _matching(alice.url) == [alices]
    assert _matching(alice.url, ["secret"]) == []  # a filter narrows, never widens
    assert _matching(alice.url, ["shop", "secret"]) == [alices]
    assert _matching(mallory.url) == [mallorys]
    assert _matching(pg.with_credentials(team_db.owner_url, outsider, PASSWORD)) == []
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _matching(pg.with_credentials(team_db.owner_url, stranger, PASSWORD))
    with pg.connect(team_db.owner_url, autocommit=True) as conn:
        conn.execute("DELETE FROM claude_mem.shared_projects WHERE shared_by = %s", (alice.role,))
    assert _matching(alice.url) == []  # unshared: gone for her too


def test_a_full_window_of_any_word_leaves_room_for_older_records_with_every_word(
    alice: Member, embedder: Embedder
) -> None:
    both = Record("retry secret", "an older record holding both words")
    newer = [Record(f"retry number {n}", "one of the words", created_at=T0 + n) for n in range(3)]
    push(alice, embedder, both, *newer)
    with pg.connect(alice.url) as conn:
        rows = conn.execute(
            "SELECT seq, title FROM claude_mem.records ORDER BY seq DESC"
        ).fetchall()
    seqs = {str(title): int(str(seq)) for seq, title in rows}
    newest = [int(str(seq)) for seq, _ in rows]
    assert _matching(alice.url, words="retry", window=3) == [*newest[:3], seqs[both.title]]
    assert _matching(alice.url, words="retry", window=4) == newest  # not full: all of them


def _record_words(db: TeamDatabase) -> dict[int, str]:
    """The owner's view of `record_words`: seq → its words."""
    with pg.connect(db.owner_url) as conn:
        rows = conn.execute("SELECT seq, tsv::text FROM claude_mem.record_words").fetchall()
    return {int(str(seq)): str(words) for seq, words in rows}


def test_record_words_follow_pushes_and_forgets(
    team_db: TeamDatabase, alice: Member, embedder: Embedder, searcher: team_search.TeamSearcher
) -> None:
    retry, cache, deploy = push(alice, embedder, RETRY, CACHE, DEPLOY)
    with pg.connect(team_db.owner_url) as conn:
        rows = conn.execute(
            "SELECT seq, origin_id, strip(tsv)::text FROM claude_mem.records"
        ).fetchall()
    seqs = {str(origin): int(str(seq)) for seq, origin, _ in rows}
    assert _record_words(team_db) == {int(str(seq)): str(words) for seq, _, words in rows}
    late = Record("retry later", "forgotten before it arrived", created_at=T0 + 5)
    with pg.connect(alice.url) as conn, conn.transaction():
        conn.execute(
            "INSERT INTO claude_mem.events (kind, project, origin_id, machine, created_at)"
            " VALUES ('forget', 'shop', %s, 'm1', 1), ('forget', 'shop', %s, 'm1', 1)",
            (cache, f"m1/observation/{alice.role}-0-{late.created_at}"),
        )
    assert set(_record_words(team_db)) == {seqs[retry], seqs[deploy]}
    push(alice, embedder, late)
    assert set(_record_words(team_db)) == {seqs[retry], seqs[deploy]}
    assert titles(searcher.search("retry", None)) == [RETRY.title]


def test_members_can_neither_read_nor_write_record_words(
    team_db: TeamDatabase, alice: Member, embedder: Embedder
) -> None:
    push(alice, embedder, RETRY)
    [seq] = _record_words(team_db)
    refused = [
        "SELECT * FROM claude_mem.record_words",
        f"DELETE FROM claude_mem.record_words WHERE seq = {seq}",
        "INSERT INTO claude_mem.record_words (seq, team_id, created_at, kind, project, tsv)"
        f" VALUES ({seq}, 1, 1, 'observation', 'shop', 'x')",
        "SELECT claude_mem.newest_words(to_tsquery('claude_mem.code', 'retry'), NULL, 10,"
        " ARRAY['observation'], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    ]
    for sql in refused:
        with pg.connect(alice.url) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(sql)
    assert _matching(alice.url, words="retry") == [seq]


def test_windows_read_in_ranges_are_the_newest_matches(
    team_db: TeamDatabase, alice: Member, embedder: Embedder
) -> None:
    """Matches spread thinly over many records: `record_words`' ranges find the same windows
    as reading every match in `records` (0004's way, still taken for a platform filter)."""
    records = [
        Record("retry secret" if n % 7 == 0 else "retry" if n % 3 == 0 else "other", "words",
               project="shop" if n % 2 else "elsewhere", created_at=T0 + n)
        for n in range(120)
    ]  # fmt: skip
    with pg.connect(team_db.owner_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO claude_mem.shared_projects (team_id, project, shared_by)"
            " SELECT team_id, 'elsewhere', role FROM claude_mem.members WHERE role = %s",
            (alice.role,),
        )
    push(alice, embedder, *records)
    with pg.connect(team_db.owner_url) as conn:
        rows = conn.execute(
            "SELECT seq, title, project FROM claude_mem.records ORDER BY seq DESC"
        ).fetchall()
    newest = [(int(str(seq)), str(title), str(project)) for seq, title, project in rows]
    for window in (3, 5, 8, 30):
        for projects in (None, ["shop"]):
            allowed = [r for r in newest if projects is None or r[2] in projects]
            anyword = [seq for seq, title, _ in allowed if "retry" in title][:window]
            both = [seq for seq, title, _ in allowed if title == "retry secret"]
            older = [seq for seq in both if len(anyword) == window and seq < anyword[-1]]
            expected = anyword + older[:window]
            assert _matching(alice.url, projects, "retry", window) == expected
            assert _matching(alice.url, projects, "retry", window, ["claude-code"]) == expected


def test_the_migration_copies_the_records_already_there(
    team_server: embedded.EmbeddedServer,
    unique_name: Callable[[str], str],
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = TeamDatabase(team_server, unique_name("premigrated"))
    with pg.connect(team_server.url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db.name}"')
    try:
        before = tuple(m for m in schema.MIGRATIONS if m.name < "0005")
        with pg.connect(db.owner_url, autocommit=True) as conn:
            monkeypatch.setattr(schema, "MIGRATIONS", before)
            schema.migrate(conn)
            monkeypatch.undo()
        alice = add_member(db, unique_name("alice"), "core", ("shop",))
        retry, cache = push(alice, embedder, RETRY, CACHE)
        with pg.connect(alice.url) as conn, conn.transaction():
            conn.execute(
                "INSERT INTO claude_mem.events (kind, project, origin_id, machine, created_at)"
                " VALUES ('forget', 'shop', %s, 'm1', 1)",
                (cache,),
            )
        with pg.connect(db.owner_url, autocommit=True) as conn:
            assert "0005_record_words" in schema.migrate(conn)
            [kept] = conn.execute(
                "SELECT seq FROM claude_mem.records WHERE origin_id = %s", (retry,)
            ).fetchall()
        assert set(_record_words(db)) == {int(str(kept[0]))}
        assert _matching(alice.url, words="parse_retry_after | stale") == [int(str(kept[0]))]
    finally:
        with pg.connect(team_server.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db.name}" WITH (FORCE)')
