"""Team search on PostgreSQL + pgvector: 100k observations on an embedded server.

    .venv/bin/python bench/team_bench.py [--rows 100000] [--rounds 5]
    .venv/bin/python bench/team_bench.py --rows 1000000    # the 1M figure, outside CI

Server. `claude_mem.team.embedded` (what `claude-mem team serve --embedded` starts) in a
temporary folder, the team schema migrated, one team, one member role made with plain SQL
(granted the reader and writer roles, its projects shared), as `team init` / `add-member` do.

Load. `--rows` observations from `bench/synthetic.py` with search_bench's wide vocabulary,
shaped as the sync pushes them (`records.body` a TeamRecord's JSON, `search_text` its indexed
fields), written by the owner with COPY (the server's triggers fill `record_words` as a
push does); the full-text (GIN) and vector (HNSW) indexes are dropped first and built after
the load from the schema's own definitions (timed apart), then ANALYZE.

Vectors. As in search_bench: `--sample` (300) observation texts embedded for real are the
templates; row i gets template (i mod 300) plus Gaussian noise (σ = 0.02 per dimension),
normalised: realistic clusters, no ties, no 100k-text embedding run. Query vectors are real:
each query is embedded once by the local model, before timing.

Search. `team.search.TeamSearcher` as the member (row-level security on), top 20, search_bench's
15 queries (words, a path, an identifier, paraphrases, a miss) × `--rounds`, after one warm-up
round: hybrid (full text + HNSW, fused), full text only, and hybrid under a project filter.
Time is the search's, connection reused (one per worker), embedding excluded.

Floor, printed ok/✗: team search p95 ≤ 30 ms (hybrid, at 100k). Push throughput is
bench/team_sync_bench.py's (through the real sync).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import claude_mem.search  # noqa: F401 - first: numpy's thread default, as in the worker

# isort: split
import numpy as np

import synthetic
from claude_mem.records import Observation
from claude_mem.search.embed import Embedder, load_embedder
from claude_mem.store.search_queries import SearchFilters
from claude_mem.team import embedded, pg, schema
from claude_mem.team.search import TeamSearcher
from search_bench import QUERIES, SIGMA, WIDE_MODULES, WIDE_PROBLEMS, row, timed
from stats import percentile

SEARCH_FLOOR_MS = 30.0  # p95, hybrid
MEMBER, TEAM, PASSWORD = "bench_member", "bench", "bench-password"
PROJECTS = [f"project-{n}" for n in range(12)]  # synthetic's
INDEXED = ("title", "subtitle", "narrative", "facts", "concepts", "files_read", "files_modified")
COLUMNS = (
    "team_id, origin_id, content_hash, kind, project, type, title, created_at, member,"
    " machine, source_session, body, search_text, embedding"
)


def shaped(obs: Observation, n: int, machine: str) -> tuple[str, str, str]:
    """(origin id, body JSON, search text) of `obs` as the sync pushes it."""
    fields = {name: getattr(obs, name) for name in INDEXED}
    fields |= {"prompt_number": obs.prompt_number, "discovery_tokens": obs.discovery_tokens}
    values = [fields[name] for name in INDEXED]
    parts = [p for v in values for p in (v if isinstance(v, list) else [v])]
    search_text = "\n".join(str(p) for p in parts if p)
    origin = f"{machine}/observation/{n}"
    body = {"kind": "observation", "origin_id": origin, "content_hash": origin,
            "project": obs.project, "type": obs.type, "title": obs.title,
            "created_at": obs.created_at, "machine": machine, "source_session": "s",
            "platform": "claude-code", "fields": fields, "search_text": search_text}  # fmt: skip
    return origin, json.dumps(body), search_text


def vectors(templates: np.ndarray, start: int, count: int, seed: int) -> list[str]:
    """Template vectors with noise, as pgvector text literals."""
    rng = np.random.default_rng(seed)
    base = templates[np.arange(start, start + count) % len(templates)]
    noisy = base + rng.normal(0, SIGMA, base.shape).astype(np.float32)
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    out = io.StringIO()
    np.savetxt(out, noisy, fmt="%.6f", delimiter=",")
    return ["[" + line + "]" for line in out.getvalue().splitlines()]


def setup(server: embedded.EmbeddedServer) -> tuple[str, str, int]:
    """(owner URL, member URL, team id) of a fresh, migrated database."""
    with pg.connect(server.url(), autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS team_bench WITH (FORCE)")
        conn.execute("CREATE DATABASE team_bench")
        conn.execute(f"DROP ROLE IF EXISTS {MEMBER}")
    owner = server.url("team_bench")
    with pg.connect(owner, autocommit=True) as conn:
        schema.migrate(conn)
        team = conn.execute(
            "INSERT INTO claude_mem.teams (name) VALUES (%s) RETURNING id", (TEAM,)
        ).fetchone()
        assert team is not None
        conn.execute(f"CREATE ROLE {MEMBER} LOGIN PASSWORD '{PASSWORD}'")
        conn.execute(f"GRANT {schema.READER}, {schema.WRITER} TO {MEMBER}")
        conn.execute(
            "INSERT INTO claude_mem.members (role, team_id) VALUES (%s, %s)", (MEMBER, team[0])
        )
        conn.execute(
            "INSERT INTO claude_mem.shared_projects (team_id, project, shared_by)"
            " SELECT %s, p, %s FROM unnest(%s::text[]) AS p",
            (team[0], MEMBER, PROJECTS),
        )
    return owner, pg.with_credentials(owner, MEMBER, PASSWORD), int(team[0])


def load(owner: str, team: int, rows: int, templates: np.ndarray) -> tuple[float, float]:
    """COPY `rows` observations as the owner; (load seconds, index build seconds)."""
    start = time.perf_counter()
    with pg.connect(owner) as conn:
        with conn.transaction():
            built = conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'claude_mem'"
                " AND indexdef ~ ' USING (gin|hnsw) '"
            ).fetchall()
            conn.execute("DROP INDEX " + ", ".join(f"claude_mem.{name}" for name, _ in built))
        for offset in range(0, rows, 10_000):
            count = min(10_000, rows - offset)
            chunk = synthetic.observations(count, 1, seed=offset + 1)
            literals = vectors(templates, offset, count, seed=offset + 1)
            sql = f"COPY claude_mem.records ({COLUMNS}) FROM STDIN"
            with conn.transaction(), conn.cursor() as cur, cur.copy(sql) as copy:
                for n, (obs, literal) in enumerate(zip(chunk, literals, strict=True)):
                    origin, body, text = shaped(obs, offset + n, "loader")
                    copy.write_row((team, origin, origin, "observation", obs.project, obs.type,
                                    obs.title, obs.created_at + offset * 60_000, MEMBER,
                                    "loader", "s", body, text, literal))  # fmt: skip
        load_s = time.perf_counter() - start
        start = time.perf_counter()
        conn.autocommit = True
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute("SET max_parallel_maintenance_workers = 2")
        for _, definition in built:  # the schema's own, as its migrations made them
            conn.execute(definition)
        conn.execute("VACUUM ANALYZE claude_mem.records, claude_mem.record_words")
        return load_s, time.perf_counter() - start


def corpus(sample: int) -> tuple[Embedder, np.ndarray]:
    """search_bench's wider vocabulary for the synthetic records, the real model, and the real
    embeddings of `sample` records: the templates the records' vectors are made from."""
    synthetic.MODULES[:] = WIDE_MODULES
    synthetic.PROBLEMS[:] = WIDE_PROBLEMS
    embedder = load_embedder("minilm-l6-int8")
    assert embedder is not None
    texts = [shaped(o, 0, "x")[2] for o in synthetic.observations(sample, 1, seed=123)]
    return embedder, embedder.embed(texts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sample", type=int, default=300)
    args = parser.parse_args()
    embedder, templates = corpus(args.sample)
    query_vectors = {q: embedder.embed([q])[0].tolist() for q in QUERIES}

    with tempfile.TemporaryDirectory(prefix="team-bench-") as tmp:
        server = embedded.start(tmp, create_user=True)
        try:
            owner, member, team = setup(server)
            load_s, index_s = load(owner, team, args.rows, templates)
            searcher = TeamSearcher(member)
            project = SearchFilters(projects=("project-3",))
            hybrid = timed(lambda q: searcher.search(q, query_vectors[q]), QUERIES, args.rounds)
            fulltext = timed(lambda q: searcher.search(q, None), QUERIES, args.rounds)
            filtered = timed(
                lambda q: searcher.search(q, query_vectors[q], project), QUERIES, args.rounds
            )
            searcher.close()
        finally:
            server.stop()

    p95 = percentile(hybrid, 0.95)
    print(f"\n### {args.rows:,} observations\n\n| figure | value |\n|---|---|")
    print(f"| COPY load (owner) | {load_s:.1f} s ({args.rows / load_s:,.0f} rows/s) |")
    print(f"| GIN + HNSW index build, ANALYZE | {index_s:.1f} s |")
    print(row("team search, hybrid", hybrid))
    print(row("team search, full text only", fulltext))
    print(row("team search, hybrid, one project", filtered))
    mark = "ok" if p95 <= SEARCH_FLOOR_MS else "✗"
    print(f"| floor (at 100k): hybrid p95 ≤ {SEARCH_FLOOR_MS:.0f} ms | {p95:.2f} ms {mark} |")


if __name__ == "__main__":
    main()
