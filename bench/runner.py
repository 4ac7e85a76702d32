"""Run the benchmarks and rewrite bench/RESULTS.md from what they print (`bench/run`).

    bench/run                 every benchmark, in order; rewrites the whole file
    bench/run search viewer   only these; their sections are replaced, the others kept
    bench/run --quick ...     smaller sizes for a quick look (marked "quick" in the file)
    bench/run --list          the benchmark names

Each benchmark prints its own Markdown tables on stdout; a section is its title, the script's
docstring (what is measured, the floors), the exact command, when it ran, the load average
before and after, and that output. The file's header names the machine. Nothing in
RESULTS.md is edited by hand: notes on why figures moved are in bench/NOTES.md.
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import re
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "RESULTS.md"
SECTION = re.compile(r"<!-- bench:(?P<name>[\w-]+) -->\n.*?<!-- /bench:(?P=name) -->\n", re.S)


@dataclass(frozen=True)
class Benchmark:
    name: str
    script: str
    title: str
    args: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()


BENCHMARKS = (
    Benchmark("store", "store_bench.py", "Store: 100k observations", quick=("--count", "20000")),
    Benchmark("privacy", "privacy_bench.py", "Privacy: hostile input"),
    Benchmark("cli", "cli_startup.py", "CLI start-up and the demo", quick=("--demo-runs", "1")),
    Benchmark("worker-start", "worker_start_bench.py", "Worker start-up and memory"),
    Benchmark(
        "worker-ingest", "worker_ingest_bench.py", "Worker ingest", quick=("--events", "2000")
    ),
    Benchmark("pipeline", "pipeline_bench.py", "Compression pipeline"),
    Benchmark("hook", "hook_bench.py", "Hooks as whole processes", quick=("--runs", "10")),
    Benchmark("mcp", "mcp_bench.py", "MCP server: spawn to first answers", quick=("--runs", "5")),
    Benchmark(
        "hook-http",
        "http_hook_bench.py",
        "Claude Code http hooks: the POST round trip",
        quick=("--runs", "100"),
    ),
    Benchmark(
        "search",
        "search_bench.py",
        "Search: hybrid full text + vectors",
        args=("--rounds", "10"),
        quick=("--sizes", "10000", "--rounds", "3"),
    ),
    Benchmark(
        "embedding",
        "embedding_bench.py",
        "Embedding model threads and index recall on real vectors",
        quick=("--texts", "1000"),
    ),
    Benchmark(
        "worker-embed",
        "worker_embed_bench.py",
        "Background embedding of an imported git history",
        args=("--commits", "3000", "--clones", "750"),
        quick=("--commits", "1000", "--clones", "250"),
    ),
    Benchmark("vector-floor", "vector_floor.py", "Vector similarity floor on real embeddings"),
    Benchmark(
        "transfer",
        "transfer_bench.py",
        "Export, import, backup, corpora",
        quick=("--count", "5000"),
    ),
    Benchmark(
        "viewer",
        "viewer_bench.py",
        "Web viewer: first paint and live updates",
        quick=("--rounds", "3"),
    ),
    Benchmark(
        "context",
        "context_bench.py",
        "Context injection and file-read gate",
        quick=("--counts", "1000,10000"),
    ),
    Benchmark(
        "memory-quality",
        "memory_quality.py",
        "Memory quality: recall, injection and units on realistic sessions",
        quick=("--noise", "20"),
    ),
    Benchmark(
        "git-history",
        "git_history_bench.py",
        "History import: a 50,000-commit repository made with git",
        quick=("--commits", "5000"),
    ),
    Benchmark(
        "team",
        "team_bench.py",
        "Team memory: search on PostgreSQL + pgvector",
        quick=("--rows", "20000"),
    ),
    Benchmark(
        "team-index",
        "team_index_bench.py",
        "Team server: HNSW build settings, insert rate against recall",
        quick=("--rows", "20000", "--inserted", "5000"),
    ),
    Benchmark(
        "team-sync",
        "team_sync_bench.py",
        "Team sync: push, pull and propagation between workers",
        quick=("--count", "5000", "--tries", "10"),
    ),
    Benchmark(
        "history-quality",
        "history_quality.py",
        "History recall: commit reasons found by questions in other words",
    ),
)
BY_NAME = {bench.name: bench for bench in BENCHMARKS}


# --- the machine ----------------------------------------------------------------------------


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gib() -> str:
    """Total memory from /proc/meminfo, in GiB."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024**2:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def machine() -> str:
    """One line describing where the figures were measured."""
    return (
        f"{cpu_model()}, {os.cpu_count()} cores, {memory_gib()}; {platform.system()} "
        f"{platform.release()}; CPython {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}"
    )


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


# --- one benchmark --------------------------------------------------------------------------


def description(script: Path) -> str:
    """The script's docstring without its usage line (the section shows the exact command)."""
    doc = ast.get_docstring(ast.parse(script.read_text("utf-8"))) or ""
    kept = [line for line in doc.splitlines() if "bench/" not in line or "python" not in line]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def run(bench: Benchmark, quick: bool) -> str:
    """Run one benchmark and return its section of RESULTS.md (failures included, loudly)."""
    script = BENCH / bench.script
    args = bench.quick if quick and bench.quick else bench.args
    command = [sys.executable, str(script), *args]
    shown = " ".join(["bench/" + bench.script, *args])
    print(f"bench/run: {bench.name}: {shown}", file=sys.stderr, flush=True)
    before, started = load(), time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    mode = " (quick mode)" if quick and bench.quick else ""
    meta = (
        f"`{shown}`{mode} · {now()} · took {seconds:.0f} s · load average (1/5/15 min) "
        f"before {before}, after {load()}"
    )
    body = done.stdout.strip()
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-20:])
        body = f"**FAILED (exit {done.returncode})**\n\n```\n{body}\n{tail}\n```"
        print(f"bench/run: {bench.name} FAILED:\n{tail}", file=sys.stderr)
    return (
        f"<!-- bench:{bench.name} -->\n## {bench.title} (`bench/{bench.script}`)\n\n"
        f"{description(script)}\n\n{meta}\n\n{body}\n<!-- /bench:{bench.name} -->\n"
    )


# --- the file -------------------------------------------------------------------------------


def header(names: list[str], started: str, load_before: str) -> str:
    ran = "every benchmark" if len(names) == len(BENCHMARKS) else ", ".join(names)
    return (
        "# Benchmark results\n\n"
        "Written by `bench/run` from what each script in this folder prints; do not edit by\n"
        "hand (why figures moved: bench/NOTES.md). Re-run a benchmark with `bench/run NAME`\n"
        "when the code it measures changes; floors come from the issues, and a figure must\n"
        "meet its floor. Each section says when it ran and the load average around it.\n\n"
        f"- Machine: {machine()}\n"
        f"- Last run: {ran}, started {started}; load average (1/5/15 min) before "
        f"{load_before}, after {load()}\n\n"
    )


def existing_sections() -> dict[str, str]:
    """The sections of the current RESULTS.md, by benchmark name."""
    text = RESULTS.read_text("utf-8") if RESULTS.exists() else ""
    return {found["name"]: found.group(0) for found in SECTION.finditer(text)}


def placeholder(bench: Benchmark) -> str:
    return (
        f"<!-- bench:{bench.name} -->\n## {bench.title} (`bench/{bench.script}`)\n\n"
        f"Not measured yet: `bench/run {bench.name}`.\n<!-- /bench:{bench.name} -->\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/run", description="Run benchmarks and rewrite bench/RESULTS.md."
    )
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, marked as quick")
    parser.add_argument("--list", action="store_true", help="print the benchmark names")
    args = parser.parse_args(argv)
    if args.list:
        for bench in BENCHMARKS:
            print(f"{bench.name:14} bench/{bench.script}: {bench.title}")
        return 0
    unknown = [name for name in args.names if name not in BY_NAME]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
    chosen = [BY_NAME[name] for name in dict.fromkeys(args.names)] or list(BENCHMARKS)
    started, load_before = now(), load()
    sections = existing_sections() if args.names else {}
    failed = []
    for bench in chosen:
        sections[bench.name] = run(bench, args.quick)
        if "**FAILED (exit" in sections[bench.name]:
            failed.append(bench.name)
        write(sections, [b.name for b in chosen], started, load_before)
    print(f"bench/run: wrote {RESULTS}", file=sys.stderr)
    if failed:
        print(f"bench/run: failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def write(sections: dict[str, str], names: list[str], started: str, load_before: str) -> None:
    """RESULTS.md with every benchmark's section in order (after each run: nothing is lost if
    a later benchmark is interrupted)."""
    parts = [sections.get(bench.name) or placeholder(bench) for bench in BENCHMARKS]
    RESULTS.write_text(header(names, started, load_before) + "\n".join(parts), "utf-8")


if __name__ == "__main__":
    sys.exit(main())
