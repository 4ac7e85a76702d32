"""Time export, import (fresh and repeated), backup and corpus build over synthetic memory.

    .venv/bin/python bench/transfer_bench.py [--count 20000]

Prints a Markdown table; the latest figures are kept in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path

from msgspec.structs import replace

sys.path.insert(0, str(Path(__file__).parent))

from claude_mem import backup
from claude_mem.corpus.build import CorpusFilter, build
from claude_mem.store import Database
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session
from claude_mem.transfer.jsonl import export, import_lines
from synthetic import observations


def timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CLAUDE_MEM_DATA_DIR"] = str(Path(tmp) / "data")
        db = Database(Path(tmp) / "source.db")
        rows = list(observations(args.count, 0))
        with db.write() as conn:
            for n in range(0, len(rows), 50):  # 50 observations per session
                sid = ensure_session(conn, platform="bench", host_session_id=f"s{n}",
                                     project=rows[n].project)  # fmt: skip
                for obs in rows[n : n + 50]:
                    insert_observation(conn, replace(obs, session_id=sid))
        out = io.BytesIO()
        counts, export_s = timed(lambda: export(db, out))
        data = out.getvalue()
        records = sum(counts.values())
        target = Database(Path(tmp) / "target.db")
        lines = data.splitlines()
        _, import_s = timed(lambda: import_lines(target, lines))
        again, again_s = timed(lambda: import_lines(target, lines))
        assert sum(again.imported.values()) == 0
        made, backup_s = timed(lambda: backup.backup(db, Path(tmp) / "copy.db"))
        _, corpus_s = timed(lambda: build(db, "bench", CorpusFilter.parse(limit=500)))
        _, query_corpus_s = timed(
            lambda: build(db, "bench-q", CorpusFilter.parse(query="race condition", limit=200))
        )
        print(f"| figure ({args.count:,} observations, {records:,} records, "
              f"{len(data) / 1e6:.1f} MB of JSONL) | value |")  # fmt: skip
        print("|---|---|")
        print(f"| export | {records / export_s:,.0f} records/s ({export_s:.2f} s) |")
        print(f"| import into an empty database | {records / import_s:,.0f} records/s "
              f"({import_s:.2f} s) |")  # fmt: skip
        print(f"| import again (everything skipped) | {records / again_s:,.0f} records/s "
              f"({again_s:.2f} s) |")  # fmt: skip
        print(f"| backup ({made.bytes / 1e6:.1f} MB) | {backup_s * 1000:.0f} ms |")
        print(f"| corpus build, newest 500 | {corpus_s * 1000:.0f} ms |")
        print(f"| corpus build, query + 200 | {query_corpus_s * 1000:.0f} ms |")
        db.close()
        target.close()


if __name__ == "__main__":
    main()
