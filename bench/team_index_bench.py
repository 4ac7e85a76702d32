"""The team server's HNSW build settings: insert rate against recall, at 100k real-shaped vectors.

    .venv/bin/python bench/team_index_bench.py [--rows 100000] [--inserted 10000]

Why. The push's largest part is the server inserting each vector into the records' HNSW
graph; a cheaper graph (fewer links `m`, fewer candidates per insert `ef_construction`, half
precision `halfvec`) inserts faster and may find less. This measures both for a few settings,
the schema's own (migration 0002's: pgvector's defaults) first.

Server. `claude_mem.team.embedded` (what `claude-mem team serve --embedded` starts) in a
temporary folder, the team schema migrated. A base table shaped as `claude_mem.records`
(`LIKE … INCLUDING ALL`: its columns, generated `tsv`, unique, pull and GIN indexes; no HNSW
index) holds `--rows` observations of `bench/synthetic.py` with team_bench's shape (body JSON,
search text), loaded by COPY.

Vectors. As team_bench: 300 observation texts embedded by the local model are templates, row
i gets template (i mod 300) plus Gaussian noise (σ = 0.02), normalised. Queries are real
embeddings: search_bench's 15 queries and 85 other synthetic observation texts (their own
seed), embedded once.

Per setting. A copy of the base table (same seqs) holds its first `--rows` − `--inserted`
rows, the setting's HNSW index is built over them (`CREATE INDEX`, timed: what rebuilding the
index would cost an existing server), then the last `--inserted` rows go in as the sync sends them:
batches of 1,000, each one `INSERT … SELECT unnest(arrays)` in its own transaction, one
connection (rows/s over the batches; the statement's parameters are made before timing, so
this is the server's side). Recall: the HNSW search at team search's width
(`hnsw.ef_search = team.search.EF_SEARCH`), top 20, against an exact scan of the base table
in full precision (no index), averaged over the queries, and the lowest query's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import claude_mem.search  # noqa: F401 - first: numpy's thread default, as in the worker

# isort: split
import numpy as np
import psycopg

import synthetic
from claude_mem.team import embedded, pg, schema
from claude_mem.team.schema import DIMENSIONS
from claude_mem.team.search import EF_SEARCH
from search_bench import QUERIES
from team_bench import COLUMNS, corpus, shaped, vectors


@dataclass(frozen=True, slots=True)
class HnswIndex:
    """An HNSW build: `m` links per node, `ef_construction` candidates looked at per insert,
    the operator class (the column's type and distance)."""

    m: int
    ef_construction: int
    opclass: str = "vector_cosine_ops"

    def create(self, name: str, table: str) -> str:
        return (
            f"CREATE INDEX {name} ON {table} USING hnsw (embedding {self.opclass})"
            f" WITH (m = {self.m}, ef_construction = {self.ef_construction})"
        )


TOP = 20
BATCH = 1000  # rows per INSERT, as the sync's push
HALF = "halfvec_cosine_ops"
SETTINGS = (
    HnswIndex(16, 64),  # pgvector's default
    HnswIndex(16, 32),
    HnswIndex(12, 32),
    HnswIndex(8, 32),
    HnswIndex(16, 64, HALF),
    HnswIndex(12, 32, HALF),
)
_TYPES = (
    "bigint", "bigint", "text", "text", "text", "text", "text", "text", "bigint", "name",
    "text", "text", "jsonb", "text",
)  # fmt: skip  # COLUMNS' types but the vector's


def label(setting: HnswIndex) -> str:
    kind = "halfvec" if setting.opclass == HALF else "vector"
    mark = " (the schema's: pgvector's default)" if setting == SETTINGS[0] else ""
    return f"m {setting.m}, ef_construction {setting.ef_construction}, {kind}{mark}"


def load(conn: psycopg.Connection, rows: int, templates: np.ndarray) -> None:
    """The base table `bench.base`: `rows` records-shaped observations, no HNSW index."""
    conn.execute("CREATE SCHEMA bench")
    conn.execute("CREATE TABLE bench.base (LIKE claude_mem.records INCLUDING ALL)")
    drop_vector_index(conn, "base")
    sql = f"COPY bench.base (seq, {COLUMNS}) FROM STDIN"
    for offset in range(0, rows, 10_000):
        count = min(10_000, rows - offset)
        chunk = synthetic.observations(count, 1, seed=offset + 1)
        literals = vectors(templates, offset, count, seed=offset + 1)
        with conn.transaction(), conn.cursor() as cur, cur.copy(sql) as copy:
            for n, (obs, literal) in enumerate(zip(chunk, literals, strict=True)):
                origin, body, text = shaped(obs, offset + n, "loader")
                copy.write_row((offset + n + 1, 1, origin, origin, "observation", obs.project,
                                obs.type, obs.title, obs.created_at, "loader", "loader", "s",
                                body, text, literal))  # fmt: skip
    conn.execute("VACUUM ANALYZE bench.base")


def drop_vector_index(conn: psycopg.Connection, table: str) -> None:
    """The HNSW index `LIKE … INCLUDING ALL` copied from the records, dropped."""
    for (name,) in conn.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = 'bench' AND tablename = %s"
        " AND indexdef LIKE '%%USING hnsw%%'",
        (table,),
    ).fetchall():
        conn.execute(f"DROP INDEX bench.{name}")


def exact(conn: psycopg.Connection, queries: list[str]) -> list[list[int]]:
    """Each query's true top 20: a full scan of the base table."""
    return [
        [int(r[0]) for r in conn.execute(
            "SELECT seq FROM bench.base ORDER BY embedding <=> %s::vector, seq LIMIT %s",
            (q, TOP))]
        for q in queries
    ]  # fmt: skip


def batches(conn: psycopg.Connection, first: int) -> list[list[list[object]]]:
    """The base table's rows from seq `first` on, as the columns of batches of 1,000."""
    names = f"seq, {COLUMNS}"
    rows = conn.execute(
        f"SELECT {names.replace('body', 'body::text').replace('embedding', 'embedding::text')}"
        " FROM bench.base"
        " WHERE seq >= %s ORDER BY seq",
        (first,),
    ).fetchall()
    return [[list(col) for col in zip(*rows[i : i + BATCH], strict=True)]
            for i in range(0, len(rows), BATCH)]  # fmt: skip


def measure(
    conn: psycopg.Connection,
    setting: HnswIndex,
    *,
    kept: int,
    inserts: list[list[list[object]]],
    queries: list[str],
    truth: list[list[int]],
) -> tuple[float, float, float, float]:
    """(build s, insert rows/s, mean recall@20, lowest recall@20) of one setting."""
    kind = "halfvec" if setting.opclass == HALF else "vector"
    column = f"{kind}({DIMENSIONS})"
    conn.execute("DROP TABLE IF EXISTS bench.t")
    conn.execute("CREATE TABLE bench.t (LIKE bench.base INCLUDING ALL)")
    conn.execute(f"ALTER TABLE bench.t ALTER COLUMN embedding TYPE {column}")
    names = f"seq, {COLUMNS}"
    conn.execute(
        f"INSERT INTO bench.t ({names}) SELECT"
        f" {names.replace('embedding', f'embedding::{column}')} FROM bench.base WHERE seq <= %s",
        (kept,),
    )
    conn.execute("VACUUM ANALYZE bench.t")
    start = time.perf_counter()
    conn.execute(setting.create("t_embedding", "bench.t"))
    build_s = time.perf_counter() - start

    arrays = ", ".join(f"%b::{t}[]" for t in (*_TYPES, kind))
    insert = f"INSERT INTO bench.t ({names}) SELECT * FROM unnest({arrays})"
    spent = 0.0
    for columns in inserts:
        start = time.perf_counter()
        with conn.transaction():
            conn.execute(insert, columns)
        spent += time.perf_counter() - start
    rate = sum(len(c[0]) for c in inserts) / spent

    shares = []
    with conn.transaction():
        conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(EF_SEARCH),))
        conn.execute("SET LOCAL enable_seqscan = off")  # the graph, even at a quick size
        search = f"SELECT seq FROM bench.t ORDER BY embedding <=> %s::{column} LIMIT %s"
        plan = conn.execute(f"EXPLAIN {search}", (queries[0], TOP)).fetchall()
        assert any("t_embedding" in str(line[0]) for line in plan), plan  # the HNSW graph's
        for query, best in zip(queries, truth, strict=True):
            found = conn.execute(search, (query, TOP)).fetchall()
            shares.append(len({int(r[0]) for r in found} & set(best)) / TOP)
    conn.execute("DROP TABLE bench.t")
    return build_s, rate, statistics.mean(shares), min(shares)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--inserted", type=int, default=10_000)
    args = parser.parse_args()
    embedder, templates = corpus(300)
    others = [shaped(o, 0, "x")[2] for o in synthetic.observations(85, 1, seed=777)]
    queries = [
        "[" + ",".join(f"{float(x):.7g}" for x in v) + "]"
        for v in embedder.embed([*QUERIES, *others])
    ]
    kept = args.rows - args.inserted

    results = []
    with tempfile.TemporaryDirectory(prefix="team-index-bench-") as tmp:
        server = embedded.start(tmp, create_user=True)
        try:
            with pg.connect(server.url(), autocommit=True) as conn:
                conn.execute("CREATE DATABASE team_index_bench")
            with pg.connect(server.url("team_index_bench"), autocommit=True) as conn:
                schema.migrate(conn)
                conn.execute("SET maintenance_work_mem = '1GB'")
                conn.execute("SET max_parallel_maintenance_workers = 2")
                load(conn, args.rows, templates)
                truth = exact(conn, queries)
                inserts = batches(conn, kept + 1)
                for setting in SETTINGS:
                    results.append(
                        (
                            setting,
                            *measure(
                                conn,
                                setting,
                                kept=kept,
                                inserts=inserts,
                                queries=queries,
                                truth=truth,
                            ),
                        )
                    )
        finally:
            server.stop()

    print(f"\n### {args.rows:,} real-shaped vectors, {args.inserted:,} of them inserted\n")
    print(
        f"| HNSW setting | build over {kept:,} rows | insert, batches of {BATCH:,} |"
        f" recall@{TOP} (ef_search {EF_SEARCH}), mean | lowest query |"
    )
    print("|---|---|---|---|---|")
    for setting, build_s, rate, mean, low in results:
        print(
            f"| {label(setting)} | {build_s:.1f} s | {rate:,.0f} rows/s | {mean:.3f} | {low:.2f} |"
        )


if __name__ == "__main__":
    main()
