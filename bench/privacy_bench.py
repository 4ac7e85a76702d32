"""Time tag stripping and secret redaction on the hostile inputs of tests/test_privacy.py.

    .venv/bin/python bench/privacy_bench.py

Floor (foundation issue): 1 MB of nested/unclosed tags stripped in < 100 ms.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.test_privacy import REDACT_HOSTILE, STRIP_HOSTILE

from claude_mem.privacy import redact_secrets, strip_tags


def best_ms(fn: Callable[[str], str], text: str, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> None:
    print("| input (~1 MB) | strip_tags best of 5 |\n|---|---|")
    worst = 0.0
    for name, text, _ in STRIP_HOSTILE:
        ms = best_ms(strip_tags, text)
        worst = max(worst, ms)
        print(f"| {name} | {ms:.1f} ms |")
    print(f"| **worst** | **{worst:.1f} ms** (floor: < 100 ms) |")
    print("\n| input (~1 MB) | redact_secrets best of 5 |\n|---|---|")
    for name, text in REDACT_HOSTILE:
        print(f"| {name} | {best_ms(redact_secrets, text):.1f} ms |")


if __name__ == "__main__":
    main()
