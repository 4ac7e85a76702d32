"""The embedding model's threads, and the sign-code shortlist's recall on real vectors.

    .venv/bin/python bench/embedding_bench.py [--texts 6000]

1. ONNX threads: query embedding latency (the 15 queries of search_bench, 10 rounds) and
   batch throughput (300 synthetic observation texts, as the background embedder sees) with 1
   or 2 intra-op threads (`embed.THREADS`: a query's, and a batch's when it runs alone) and 1
   or 2 batch runs side by side (`embed.PARALLEL`, one thread each), each alone
   and with a thread keeping one core busy outside the GIL
   beside it (what a search's full-text half is while its query is embedded). A fresh process
   per setting.
2. Recall: real MiniLM embeddings of Python standard-library docstrings (`name: first line`,
   shuffled, distinct) against an exact float32 scan, through `VectorIndex` with its int8 rows
   and sign-code shortlist forced on: the top 12 of all texts (200 held out as queries), and
   the top 20 / top 200 of 100k rows made of noisy copies of them (σ = 0.03 per dimension).
   search_bench's synthetic clusters are the hard case; these are closer to real memory.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import claude_mem.search  # noqa: F401 - first: numpy's thread default, as in the worker

# isort: split
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import synthetic
from claude_mem.search import embed, vectors
from claude_mem.search.vectors import VectorIndex
from search_bench import QUERIES


def docstrings(count: int) -> list[str]:
    root = Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    texts: list[str] = []
    for path in sorted(root.glob("*.py")) + sorted(root.glob("*/*.py")):
        try:
            tree = ast.parse(path.read_text())
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and (
                doc := ast.get_docstring(node)
            ):
                texts.append(f"{node.name}: {doc.splitlines()[0]}")
    random.Random(1).shuffle(texts)
    return list(dict.fromkeys(texts))[:count]


def observation_texts() -> list[str]:
    """What the background embedder embeds: observations' title, subtitle, narrative, facts."""
    sample = synthetic.observations(300, 1, seed=123)
    return [f"{o.title}\n{o.subtitle}\n{o.narrative}\n" + "\n".join(o.facts) for o in sample]


def spin(stop: threading.Event) -> None:
    """Keep one core busy without holding the GIL, as SQLite does in a search's full-text half."""
    block = bytes(1 << 20)
    while not stop.is_set():
        hashlib.sha256(block).digest()  # releases the GIL for large inputs


def threads(count: int, busy: bool, parallel: int) -> dict[str, float]:
    """Run in a fresh process: query latency and batch throughput with `count` ONNX threads
    and `parallel` batch runs side by side."""
    embed.THREADS, embed.PARALLEL = count, parallel
    model = embed.load_embedder("minilm-l6-int8")
    assert model is not None
    stop = threading.Event()
    if busy:
        threading.Thread(target=spin, args=(stop,), daemon=True).start()
    for query in QUERIES:
        model.embed([query])
    timings = []
    for _ in range(10):
        for query in QUERIES:
            started = time.perf_counter()
            model.embed([query])
            timings.append((time.perf_counter() - started) * 1000)
    texts = observation_texts()
    started = time.perf_counter()
    model.embed(texts)
    rate = len(texts) / (time.perf_counter() - started)
    stop.set()
    timings.sort()
    return {"p50": statistics.median(timings), "p95": timings[int(0.95 * len(timings))],
            "rate": rate}  # fmt: skip


def recall(index: VectorIndex, matrix: np.ndarray, queries: np.ndarray, k: int) -> float:
    shares = []
    for query in queries:
        exact = set(np.argsort(-(matrix @ query), kind="stable")[:k].tolist())
        found = {row_id for row_id, _ in index.query(query, k)}
        shares.append(len(exact & found) / k)
    return statistics.mean(shares)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=6000)
    parser.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--busy", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--parallel", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.threads:
        print(json.dumps(threads(args.threads, args.busy, args.parallel)))
        return

    print(
        "| ONNX threads of a one-run call | batch runs side by side (one thread each) | beside "
        "| query p50 | query p95 | batch texts/s |\n|---|---|---|---|---|---|"
    )
    for count, parallel in ((1, 1), (2, 1), (2, 2)):
        for busy in (False, True):
            command = [sys.executable, __file__, "--threads", str(count),
                       "--parallel", str(parallel)]  # fmt: skip
            out = subprocess.run([*command, "--busy"] if busy else command, check=True,
                                 capture_output=True, text=True).stdout  # fmt: skip
            got = json.loads(out)
            print(f"| {count} | {parallel} | {'a busy thread' if busy else 'nothing'} "
                  f"| {got['p50']:.1f} ms | {got['p95']:.1f} ms | {got['rate']:.0f} |")  # fmt: skip

    model = embed.load_embedder("minilm-l6-int8")
    assert model is not None
    texts = docstrings(args.texts)
    started = time.perf_counter()
    real = model.embed(texts)
    print(f"\nembedded {len(texts):,} docstrings in {time.perf_counter() - started:.0f} s")
    rng = np.random.default_rng(0)
    held_out = rng.choice(len(real), 200, replace=False)
    keep = np.ones(len(real), dtype=bool)
    keep[held_out] = False
    base, queries = real[keep], real[held_out]

    vectors.QUANTIZE_ABOVE = 0  # int8 rows and the sign-code shortlist at every size
    small = VectorIndex()
    small.replace(list(range(len(base))), base)
    copies = -(-100_000 // len(base))
    noisy = np.concatenate([base + rng.normal(0, 0.03, base.shape).astype(np.float32)
                            for _ in range(copies)])[:100_000]  # fmt: skip
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    large = VectorIndex()
    large.replace(list(range(len(noisy))), noisy)
    print("\n| rows | recall vs exact float32 |\n|---|---|")
    print(f"| {len(base):,} real | top 12: {recall(small, base, queries, 12):.3f} |")
    print(f"| 100,000 noisy copies | top 20: {recall(large, noisy, queries[:50], 20):.3f},"
          f" top 200: {recall(large, noisy, queries[:50], 200):.3f} |")  # fmt: skip


if __name__ == "__main__":
    main()
