"""Time `claude-mem --help` as a whole process (median of N runs), and `claude-mem demo`.

.venv/bin/python bench/cli_startup.py [--runs 20] [--demo-runs 3]

Floor: `claude-mem --help` ≤ 150 ms. The demo (a temporary data dir, its own worker, three
recorded sessions replayed through the real hooks) takes a few seconds; tests/test_demo.py
checks what it does, this measures how long.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    """Milliseconds for one run of `command`, which must succeed."""
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True, env=env)
    return (time.perf_counter() - start) * 1000


def demo_env(scratch: Path) -> dict[str, str]:
    """The demo in a scratch HOME and data dir, away from the user's memory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_MEM_")}
    env.update(HOME=str(scratch), CLAUDE_MEM_DATA_DIR=str(scratch / "data"), TMPDIR=str(scratch))
    return env


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--demo-runs", type=int, default=3)
    args = parser.parse_args()
    binary = str(Path(sys.executable).with_name("claude-mem"))
    for _ in range(3):  # warm the page cache
        timed([binary, "--help"])
    timings = [timed([binary, "--help"]) for _ in range(args.runs)]
    demos = []
    for _ in range(args.demo_runs):
        with tempfile.TemporaryDirectory(prefix="demo-bench-") as scratch:
            demos.append(timed([binary, "demo"], demo_env(Path(scratch))) / 1000)
    print("| figure | value |\n|---|---|")
    print(
        f"| `claude-mem --help` ({args.runs} runs) | median {statistics.median(timings):.0f} ms,"
        f" min {min(timings):.0f} ms, max {max(timings):.0f} ms |"
    )
    print(
        f"| `claude-mem demo` end to end ({args.demo_runs} runs) | median "
        f"{statistics.median(demos):.1f} s, max {max(demos):.1f} s |"
    )


if __name__ == "__main__":
    main()
