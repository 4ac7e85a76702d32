"""Time `claude-mem --help` as a whole process (median of N runs).

.venv/bin/python bench/cli_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    binary = Path(sys.executable).with_name("claude-mem")
    for _ in range(3):  # warm the page cache
        subprocess.run([binary, "--help"], capture_output=True, check=True)
    timings = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run([binary, "--help"], capture_output=True, check=True)
        timings.append((time.perf_counter() - start) * 1000)
    print(
        f"| `claude-mem --help` ({args.runs} runs) | median {statistics.median(timings):.0f} ms,"
        f" min {min(timings):.0f} ms, max {max(timings):.0f} ms |"
    )


if __name__ == "__main__":
    main()
