"""The worker's background embedder on an imported git history, against the model alone.

    .venv/bin/python bench/worker_embed_bench.py [--commits 4000] [--clones 1000]

A data dir is made whose database holds `--commits` commit-like observations (source 'git':
a 5–12 word subject, a body on about a third of them of one to three short paragraphs, a
subtitle with hash, date and author, facts naming the hash, changed files and touched
symbols), stored through the store's own insert, and a second project with the same texts for
`--clones` of them (the same history in another clone). No vectors. A real worker process
(`python -m claude_mem.worker run`, embeddings on) is started on it and /api/stats is polled
until nothing is pending: texts/s is every row embedded (or copied) over that time, from the
worker's first pending count to none, excluding model load. Copies are the rows whose vector
was taken from an identical text's instead of the model. For comparison, the same distinct
texts are embedded in this process by `Embedder.embed`, in one call. Then a worker on a
fresh copy is stopped (SIGTERM) as soon as its first batch is stored, in the middle of the
backlog: the seconds until it exits, whether it shut down cleanly (its marker), and the
vectors kept. Floor: the worker's rate ≥ 150 texts/s.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from claude_mem.records import Observation
from claude_mem.worker.client import WorkerUnavailable, request
from worker_start_bench import worker_on

FLOOR_RATE = 150.0
WORDS = (  # noqa: SIM905 - a sentence of words reads better than a list
    "retry gateway cache token parser config session worker queue index schema migration "
    "timeout client server request response handler router export import backup search "
    "vector embedding prompt summary context hook setting limit lock thread pool buffer "
    "stream socket file path module test fixture logger metric counter batch window"
).split()
VERBS = ["Fix", "Add", "Remove", "Refactor", "Keep", "Revert", "Rename", "Document", "Bump"]
AUTHORS = ["Alice Doe", "Bob Roe", "Chen Wei", "Dana Ek", "Émile Durand"]


def sentence(rng: random.Random, low: int, high: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def commit(rng: random.Random, n: int, session_id: int, project: str) -> Observation:
    """One commit as `claude-mem import --git` stores it."""
    sha = f"{rng.getrandbits(160):040x}"
    subject = f"{rng.choice(VERBS)} " + " ".join(
        rng.choice(WORDS) for _ in range(rng.randint(4, 11))
    )
    body = ""
    if rng.random() < 1 / 3:
        paragraphs = [
            " ".join(sentence(rng, 6, 16) for _ in range(rng.randint(1, 3)))
            for _ in range(rng.randint(1, 3))
        ]
        body = "\n\n".join(paragraphs)
    files = [f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py" for _ in range(rng.randint(1, 4))]
    facts = [f"commit {sha}"]
    facts += [f"changed {f} (+{rng.randint(1, 90)} -{rng.randint(0, 40)})" for f in files]
    facts += [f"touches {rng.choice(WORDS)}_{rng.choice(WORDS)} in {files[0]}"]
    return Observation(
        session_id=session_id,
        project=project,
        type=rng.choice(["bugfix", "feature", "refactor", "change", "decision"]),
        title=subject,
        subtitle=f"commit {sha[:7]} · 2023-04-{1 + n % 28:02d} · {rng.choice(AUTHORS)}",
        narrative=body,
        facts=facts,
        concepts=["history"],
        files_modified=files,
        source="git",
        created_at=1_680_000_000_000 + n * 60_000,
    )


def build(data: Path, commits: int, clones: int) -> list[str]:
    """The database of the benchmark; returns the distinct texts the embedder will see."""
    from claude_mem.store import Database, vectors  # noqa: PLC0415 - after the data dir is set
    from claude_mem.store.observations import insert_observation  # noqa: PLC0415
    from claude_mem.store.sessions import ensure_session  # noqa: PLC0415

    history = [commit(random.Random(n), n, 0, "") for n in range(commits)]
    with Database(data / "claude-mem.db") as db, db.write() as conn:
        for project, count in (("origin", commits), ("clone", clones)):
            session = ensure_session(
                conn, platform="git", host_session_id=f"git-{project}", project=project
            )
            for obs in history[:count]:
                insert_observation(
                    conn, Observation(**{**_fields(obs), "session_id": session, "project": project})
                )
        pending = vectors.missing(conn, "observation", "-", commits + clones)
    return list(dict.fromkeys(text for _, text in pending))


def _fields(obs: Observation) -> dict[str, object]:
    return {name: getattr(obs, name) for name in obs.__struct_fields__}


def stats(port: int, token: str) -> dict[str, object] | None:
    try:
        embedding = request("GET", "/api/stats", port=port, token=token, timeout=10).json()
    except WorkerUnavailable:
        return None
    found = embedding.get("embedding")
    return found if isinstance(found, dict) else None


def worker_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_MEM_")}
    env["CLAUDE_MEM_EMBEDDING_MODEL"] = "minilm-l6-int8"
    return env


def worker_token(data: Path, proc: subprocess.Popen[bytes]) -> str:
    token_file = data / "worker.token"
    while not token_file.exists() or not token_file.read_text().strip():
        if proc.poll() is not None:
            raise RuntimeError("the worker exited")
        time.sleep(0.05)
    return token_file.read_text().strip()


def worker_rate(data: Path, total: int) -> tuple[float, float, int]:
    """(texts/s from the first pending count to none, seconds, vectors copied)."""
    with worker_on(str(data), worker_env()) as (proc, port):
        token = worker_token(data, proc)
        started = first = None
        while True:
            status = stats(port, token)
            pending = status.get("pending") if status else None
            if isinstance(pending, int):
                if started is None:
                    started, first = time.perf_counter(), pending
                elif pending == 0:
                    break
            if proc.poll() is not None:
                raise RuntimeError("the worker exited")
            time.sleep(0.25)
        seconds = time.perf_counter() - started
        assert first is not None
    with sqlite3.connect(data / "claude-mem.db") as conn:
        copied = copies(conn)
        stored = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    if stored != total:
        raise RuntimeError(f"{stored} vectors for {total} rows")
    return first / seconds, seconds, copied


def stop_in_backlog(data: Path) -> tuple[float, bool, int]:
    """(seconds from SIGTERM to exit, whether the worker wrote its clean-shutdown marker,
    vectors stored) for a worker stopped once its first batch is stored."""
    from claude_mem.worker import lifecycle  # noqa: PLC0415 - after the data dir is set

    with worker_on(str(data), worker_env()) as (proc, port):
        token = worker_token(data, proc)
        while True:
            status = stats(port, token)
            embedded = status.get("embedded") if status else None
            if isinstance(embedded, dict) and embedded.get("observation"):
                break
            if proc.poll() is not None:
                raise RuntimeError("the worker exited")
            time.sleep(0.02)
        started = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        seconds = time.perf_counter() - started
    with sqlite3.connect(data / "claude-mem.db") as conn:
        stored = int(conn.execute("SELECT count(*) FROM vectors").fetchone()[0])
    return seconds, Path(lifecycle.clean_shutdown_path()).exists(), stored


def copies(conn: sqlite3.Connection) -> int:
    """Vectors whose text hash another row's vector already had: copied, not embedded."""
    return int(
        conn.execute(
            "SELECT count(*) - count(DISTINCT model || text_hash) FROM vectors"
            " WHERE text_hash IS NOT NULL"
        ).fetchone()[0]
    )


def model_rate(texts: list[str]) -> tuple[float, float]:
    """(texts/s, seconds) of `Embedder.embed` on `texts` in this process (one warm-up call)."""
    import claude_mem.search  # noqa: F401, PLC0415 - numpy's thread default, as in the worker
    from claude_mem.search.embed import load_embedder  # noqa: PLC0415

    embedder = load_embedder("minilm-l6-int8")
    assert embedder is not None
    embedder.embed(texts[:64])
    started = time.perf_counter()
    embedder.embed(texts)
    seconds = time.perf_counter() - started
    return len(texts) / seconds, seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=4000)
    parser.add_argument("--clones", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cm-bench-embed-") as tmp:
        data = Path(tmp)
        os.environ["CLAUDE_MEM_DATA_DIR"] = tmp
        texts = build(data, args.commits, args.clones)
        total = args.commits + args.clones
        rate, seconds, copied = worker_rate(data, total)
    with tempfile.TemporaryDirectory(prefix="cm-bench-embed-stop-") as tmp:
        os.environ["CLAUDE_MEM_DATA_DIR"] = tmp
        build(Path(tmp), args.commits, args.clones)
        stop_s, clean, kept = stop_in_backlog(Path(tmp))
    single, single_s = model_rate(texts)
    with_body = sum(1 for t in texts if "\n" in t)
    verdict = "ok" if rate >= FLOOR_RATE else "UNDER"
    print("| figure | value | floor | |\n|---|---|---|---|")
    print(
        f"| rows | {total:,}: {args.commits:,} commits ({with_body:,} with a body), "
        f"{args.clones:,} of them again in a second project | | |"
    )
    print(
        f"| worker background embedding | {rate:,.0f} texts/s ({total:,} rows in "
        f"{seconds:.1f} s) | ≥ {FLOOR_RATE:.0f} texts/s | {verdict} |"
    )
    print(f"| vectors copied from an identical text (model not run) | {copied:,} | | |")
    print(
        f"| worker, texts the model ran on | {(total - copied) / seconds:,.0f} texts/s "
        f"({total - copied:,} in {seconds:.1f} s) | | |"
    )
    print(
        f"| worker stopped in the backlog (SIGTERM to exit) | {stop_s:.2f} s, "
        f"{'clean shutdown' if clean else 'NOT a clean shutdown'}, {kept:,} of {total:,} "
        "rows embedded | | |"
    )
    print(
        f"| `Embedder.embed` in one process, the {len(texts):,} distinct texts | "
        f"{single:,.0f} texts/s ({single_s:.1f} s) | | |"
    )


if __name__ == "__main__":
    main()
