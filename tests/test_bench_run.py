"""`bench/run` writes bench/RESULTS.md from the benchmarks' output, a subset only its sections."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from bench import runner

ROOT = Path(__file__).resolve().parents[1]


def script(folder: Path, name: str, body: str) -> None:
    (folder / name).write_text(
        f'"""Measures {name}.\n\n    .venv/bin/python bench/{name}\n\nFloor: none."""\n{body}\n'
    )


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two tiny benchmarks in their own folder: `a` prints a table, `b` fails."""
    script(tmp_path, "a.py", 'print("| a | 1 |")')
    script(tmp_path, "b.py", 'import sys\nprint("partial")\nsys.exit("b broke")')
    benches = (runner.Benchmark("a", "a.py", "Bench A"), runner.Benchmark("b", "b.py", "Bench B"))
    monkeypatch.setattr(runner, "BENCH", tmp_path)
    monkeypatch.setattr(runner, "RESULTS", tmp_path / "RESULTS.md")
    monkeypatch.setattr(runner, "BENCHMARKS", benches)
    monkeypatch.setattr(runner, "BY_NAME", {b.name: b for b in benches})
    return tmp_path


def test_a_full_run_writes_every_section_with_machine_and_load(fake: Path) -> None:
    assert runner.main([]) == 1  # b failed, and says so
    text = (fake / "RESULTS.md").read_text()
    assert "- Machine: " in text
    assert " cores, " in text
    assert "CPython " in text
    assert "- Last run: every benchmark" in text
    assert text.count("load average (1/5/15 min) before ") == 3  # header + each section
    assert "## Bench A (`bench/a.py`)\n\nMeasures a.py.\n\nFloor: none.\n\n`bench/a.py` · " in text
    assert "| a | 1 |" in text
    assert "**FAILED (exit 1)**" in text
    assert "b broke" in text
    assert ".venv/bin/python bench/a.py" not in text  # the usage line gives way to the command


def test_a_subset_rewrites_only_its_sections(fake: Path) -> None:
    runner.main([])
    before = (fake / "RESULTS.md").read_text()
    section_b = before[before.index("<!-- bench:b -->") :]
    script(fake, "a.py", 'print("| a | 2 |")')
    assert runner.main(["a"]) == 0
    after = (fake / "RESULTS.md").read_text()
    assert "| a | 2 |" in after
    assert "| a | 1 |" not in after
    assert after.endswith(section_b)  # b's section kept byte for byte
    assert "- Last run: a, started " in after


def test_a_subset_without_earlier_results_marks_the_rest_unmeasured(fake: Path) -> None:
    assert runner.main(["a"]) == 0
    text = (fake / "RESULTS.md").read_text()
    assert "| a | 1 |" in text
    assert "Not measured yet: `bench/run b`." in text


def test_the_command_lists_every_benchmark_and_refuses_unknown_names() -> None:
    listed = subprocess.run(
        [str(ROOT / "bench" / "run"), "--list"], capture_output=True, text=True, check=True
    )
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert names == [bench.name for bench in runner.BENCHMARKS]
    scripts = {bench.script for bench in runner.BENCHMARKS}
    on_disk = {p.name for p in (ROOT / "bench").glob("*.py")} - {
        "runner.py",
        "synthetic.py",
        "stats.py",
        "memory_quality_measures.py",  # memory_quality.py's measures, not a benchmark
    }
    assert scripts == on_disk  # every benchmark script has a section
    refused = subprocess.run(
        [str(ROOT / "bench" / "run"), "nosuch"], capture_output=True, text=True, check=False
    )
    assert refused.returncode == 2
    assert "unknown benchmark nosuch; known: store, privacy" in refused.stderr
