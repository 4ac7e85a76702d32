"""Time tag stripping and secret redaction on the hostile inputs of tests/test_privacy.py,
and the 10 MB inputs of its tests and of tests/test_pipeline_parser.py.

    .venv/bin/python bench/privacy_bench.py

Floor (foundation issue): 1 MB of nested/unclosed tags stripped in < 100 ms. The tests check
that these inputs take linear time; the times themselves are measured here, best of 5 (of 2
for 10 MB). Budget for 10 MB inputs: < 1 s each.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.scaling import repeat
from tests.test_pipeline_parser import HOSTILE as PARSER_HOSTILE
from tests.test_pipeline_parser import big_fields
from tests.test_privacy import REDACT_HOSTILE, STRIP_HOSTILE

from claude_mem.pipeline.parser import parse_response
from claude_mem.privacy import clean_text, redact_secrets, strip_tags

TEN_MB: list[tuple[str, Callable[[str], object], str]] = [
    (
        "strip_tags, prose with private regions",
        strip_tags,
        repeat("some normal output line with a <private>secret</private> in it\n")(160_000),
    ),
    (
        "clean_text, prose with secrets and private regions",
        clean_text,
        repeat("ordinary prose, DB_PASSWORD=hunter2 and <private>diary</private> :// x\n")(145_000),
    ),
    ("parse_response, one observation with 10 MB fields", parse_response, big_fields(10_000_000)),
    *(
        (f"parse_response, {name}", parse_response, make(n))
        for name, make, n in PARSER_HOSTILE
        if len(make(n)) >= 5_000_000
    ),
]


def best_ms(fn: Callable[[str], object], text: str, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> None:
    print("| input (~1 MB) | strip_tags best of 5 |\n|---|---|")
    worst = 0.0
    for name, make, n, _ in STRIP_HOSTILE:
        ms = best_ms(strip_tags, make(n))
        worst = max(worst, ms)
        print(f"| {name} | {ms:.1f} ms |")
    print(f"| **worst** | **{worst:.1f} ms** (floor: < 100 ms) |")
    print("\n| input (~1 MB) | redact_secrets best of 5 |\n|---|---|")
    for name, make, n in REDACT_HOSTILE:
        print(f"| {name} | {best_ms(redact_secrets, make(n)):.1f} ms |")
    print("\n| input (5-10 MB) | best of 2 | budget < 1 s |\n|---|---|---|")
    for name, fn, text in TEN_MB:
        ms = best_ms(fn, text, runs=2)
        print(f"| {name} ({len(text) / 1e6:.1f} MB) | {ms:.0f} ms | {'✓' if ms < 1000 else '✗'} |")


if __name__ == "__main__":
    main()
