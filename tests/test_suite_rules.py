"""Rules for the test suite itself, so that a fresh clone passes on a busy machine.

Tests read only files inside the repository: a test that reaches beside the checkout (a
sibling folder, a path climbing above the root) passes on the machine that has that folder and
fails everywhere else; the data it needs belongs in tests/fixtures/.

Tests hold no wall-clock budgets (an upper bound on a measured duration): load decides those.
Linear time is checked by growth (tests/scaling.py), a wait that must be skipped with
`sooner_than` (a wait of seconds, tests/polling.py), and speed figures are measured in bench/.
The samples each check must catch or accept are in tests/fixtures/suite-rules/.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SAMPLES = TESTS / "fixtures" / "suite-rules"


def samples(name: str) -> list[str]:
    """The sources in a sample file, one per `# ---` separated block."""
    return (SAMPLES / name).read_text("utf-8").strip("\n").split("\n# ---\n")


# Literal spellings of the folder beside the repository that tests once read.
OUTSIDE_LITERALS = tuple(samples("outside-literals.txt")[0].split())


def _file_anchor(node: ast.expr) -> bool:
    """`Path(__file__)`, optionally `.resolve()`d or `.absolute()`d."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ("resolve", "absolute"):
        return _file_anchor(func.value)
    return (
        isinstance(func, ast.Name)
        and func.id == "Path"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == "__file__"
    )


def levels_up(node: ast.expr, names: dict[str, int]) -> int | None:
    """How many folders above the source file's own folder `node` points (-1: the file itself),
    for expressions built from `Path(__file__)`; None for anything else."""
    if _file_anchor(node):
        return -1
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        base = levels_up(node.value, names)
        return None if base is None else base + 1
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "parents"
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, int)
    ):
        base = levels_up(node.value.value, names)
        return None if base is None else base + 1 + node.slice.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        base = levels_up(node.left, names)
        if base is None or not isinstance(node.right, ast.Constant):
            return base
        parts = str(node.right.value).split("/")
        return base + sum(1 if p == ".." else -1 for p in parts if p not in ("", "."))
    return None


def outside_references(source: str, depth: int) -> list[str]:
    """What in `source` (a file `depth` folders below the repository root) points outside it."""
    tree = ast.parse(source)
    names: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            level = levels_up(node.value, names)
            if isinstance(target, ast.Name) and level is not None:
                names[target.id] = level
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if any(literal in node.value for literal in OUTSIDE_LITERALS):
                found.append(f"line {node.lineno}: {node.value!r}")
        elif isinstance(node, ast.expr) and (levels_up(node, names) or 0) > depth:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_test_file_reads_beside_the_repository() -> None:
    offenders = {}
    for path in sorted(TESTS.rglob("*.py")):
        depth = len(path.parent.relative_to(ROOT).parts)
        found = outside_references(path.read_text("utf-8"), depth)
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert not offenders, f"tests must read tests/fixtures/, not beside the repository: {offenders}"


@pytest.mark.parametrize("source", samples("outside.txt"))
def test_the_check_sees_paths_beside_the_repository(source: str) -> None:
    assert outside_references(source, depth=1)


@pytest.mark.parametrize("source", samples("inside.txt"))
def test_the_check_accepts_paths_inside_the_repository(source: str) -> None:
    assert outside_references(source, depth=1) == []


# --- no wall-clock budgets ------------------------------------------------------------------

CLOCKS = {"monotonic", "perf_counter", "time", "thread_time", "process_time", "monotonic_ns"}
# The two helpers that own the allowed timing checks.
TIMING_HELPERS = {TESTS / "polling.py", TESTS / "scaling.py"}


def _reads_clock(node: ast.AST) -> bool:
    return any(
        isinstance(sub, ast.Call)
        and isinstance(sub.func, ast.Attribute)
        and sub.func.attr in CLOCKS
        and isinstance(sub.func.value, ast.Name)
        and sub.func.value.id == "time"
        for sub in ast.walk(node)
    )


def _is_duration(node: ast.AST, durations: set[str]) -> bool:
    """A clock difference, or a name one was assigned to."""
    return any(
        (isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Sub) and _reads_clock(sub))
        or (isinstance(sub, ast.Name) and sub.id in durations)
        for sub in ast.walk(node)
    )


def time_budgets(source: str) -> list[str]:
    """Asserts in `source` that bound a measured duration from above."""
    tree = ast.parse(source)
    durations = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _is_duration(node.value, set())
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
            sides = [compare.left, *compare.comparators]
            for op, (left, right) in zip(compare.ops, itertools.pairwise(sides), strict=True):
                below = isinstance(op, ast.Lt | ast.LtE) and _is_duration(left, durations)
                above = isinstance(op, ast.Gt | ast.GtE) and _is_duration(right, durations)
                if below or above:
                    found.append(f"line {node.lineno}: {ast.unparse(node.test)}")
    return found


def test_no_test_holds_a_wall_clock_budget() -> None:
    offenders = {}
    for path in sorted(TESTS.rglob("*.py")):
        if path in TIMING_HELPERS:
            continue
        found = time_budgets(path.read_text("utf-8"))
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert not offenders, f"wall-clock budgets belong in bench/, not tests: {offenders}"


@pytest.mark.parametrize("source", samples("budgets.txt"))
def test_the_check_sees_time_budgets(source: str) -> None:
    assert time_budgets(source)


@pytest.mark.parametrize("source", samples("allowed.txt"))
def test_the_check_accepts_waits_and_lower_bounds(source: str) -> None:
    assert time_budgets(source) == []
