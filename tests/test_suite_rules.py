"""Rules for the test suite itself, so that a fresh clone passes on a busy machine.

Tests read only files inside the repository: a test that reaches beside the checkout (a
sibling folder, a path climbing above the root) passes on the machine that has that folder and
fails everywhere else; the data it needs belongs in tests/fixtures/.

Tests hold no wall-clock budgets (an upper bound on a measured duration): load decides those.
Linear time is checked by growth (tests/scaling.py), a wait that must be skipped by what
happened meanwhile (the other side still holding, the signal that ended a process, the
statements run), and speed figures are measured in bench/.
Comments and docstrings (in src/ and tests/) name the bench/ script that measures something
instead of quoting its figures, which drift from bench/RESULTS.md as the code changes.
The samples each check must catch or accept are in tests/fixtures/suite-rules/.
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SAMPLES = TESTS / "fixtures" / "suite-rules"


# Placeholders in the sample files: the samples spell what the checks must catch, and the
# repository's own scans of its tests must not take the samples for the real thing.
PLACEHOLDERS = {"@SIBLING@": "shared", "@LT@": "<", "@GT@": ">"}


def samples(name: str) -> list[str]:
    """The sources in a sample file, one per `# ---` separated block, placeholders filled."""
    text = (SAMPLES / name).read_text("utf-8")
    for placeholder, value in PLACEHOLDERS.items():
        text = text.replace(placeholder, value)
    return text.strip("\n").split("\n# ---\n")


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
# The helper that owns the allowed timing checks (growth of CPU time, not a budget).
TIMING_HELPERS = {TESTS / "scaling.py"}


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


# --- comments name the benchmark instead of quoting its figures ------------------------------

# Shapes a measured figure takes in prose, in this order: an approximate duration, a percentile,
# a speed-up, a rate, a before and after, a halving, a memory reading (samples: figures.txt).
# Constants the code sets (timeouts, batch sizes, test inputs' sizes) have none of these shapes
# (samples: constants.txt).
_TIME = r"(?:ns|µs|us|ms|s|sec|seconds|min|minutes)\b"
_SIZE = r"(?:KB|KiB|MB|MiB|GB|GiB)\b"
_NUMBER = r"\d[\d.,]*(?:\s?[-–]\s?\d[\d.,]*)?"
FIGURES = re.compile(
    "|".join(
        (
            rf"(?:~|≈|\babout\s)\s?{_NUMBER}\s?{_TIME}",
            r"\bp(?:50|90|95|99)\b\s?[:=]?\s?~?\d",
            rf"{_NUMBER}\s?[×x]\s?(?:faster|slower|quicker|as fast)",
            r"\d[\d.,]*\s?(?:texts|events|rows|queries|requests)?/s\b",
            rf"\d[\d.]*\s?(?:{_TIME}|{_SIZE})\s?(?:→|->)\s?~?\d",
            r"\bhalf the time\b|\btwice as fast\b|\d+\s?% (?:faster|slower|less|more|fewer)\b",
            rf"{_NUMBER}\s?{_SIZE}\s(?:of\s)?(?:peak|idle|RSS|more peak)",
            rf"\b(?:peak|idle|RSS)\b[^.]{{0,12}}?\d[\d.]*\s?{_SIZE}",
        )
    )
)


def _prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring in `source`."""
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                found.append((node.body[0].lineno, docstring))
    return found


def measured_figures(source: str) -> list[str]:
    """Figures in `source`'s comments and docstrings that read as measurements."""
    return [
        f"line {line}: {match.group()!r}"
        for line, text in _prose(source)
        for match in FIGURES.finditer(" ".join(text.split()))
    ]


def test_no_comment_quotes_a_measured_figure() -> None:
    offenders = {}
    for path in sorted([*(ROOT / "src").rglob("*.py"), *TESTS.rglob("*.py")]):
        found = measured_figures(path.read_text("utf-8"))
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert not offenders, f"name the bench/ script instead of quoting its figures: {offenders}"


@pytest.mark.parametrize("source", samples("figures.txt"))
def test_the_check_sees_measured_figures(source: str) -> None:
    assert measured_figures(source)


@pytest.mark.parametrize("source", samples("constants.txt"))
def test_the_check_accepts_constants_and_sizes(source: str) -> None:
    assert measured_figures(source) == []
