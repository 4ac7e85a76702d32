"""Tests read only files inside the repository: a fresh clone must pass on its own.

A test that reaches beside the checkout (`../shared/...`, `Path(__file__).parents[1].parent`)
passes on the machine that has the sibling folder and fails everywhere else; the data it needs
belongs in tests/fixtures/.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
# Literal spellings of the folder beside the repository that tests once read.
OUTSIDE_LITERALS = ("../shared", "shared/reference")


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
        if path == Path(__file__).resolve():
            continue  # this file spells the patterns out to look for them
        depth = len(path.parent.relative_to(ROOT).parts)
        found = outside_references(path.read_text("utf-8"), depth)
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert not offenders, f"tests must read tests/fixtures/, not beside the repository: {offenders}"


@pytest.mark.parametrize(
    "source",
    [
        'X = Path(__file__).resolve().parents[1].parent / "shared" / "reference"',
        "ROOT = Path(__file__).resolve().parents[1]\nX = ROOT.parent / 'data'",
        "X = Path(__file__).parent.parent.parent / 'data'",
        "X = Path(__file__).parent / '..' / '..' / 'data'",
        "open('../shared/reference/agent-hooks/codex.jsonl')",
    ],
)
def test_the_check_sees_paths_beside_the_repository(source: str) -> None:
    assert outside_references(source, depth=1)


@pytest.mark.parametrize(
    "source",
    [
        "ROOT = Path(__file__).resolve().parents[1]\nX = ROOT / 'src'",
        "X = Path(__file__).parent / 'fixtures' / 'agent-hooks'",
        "X = Path(__file__).parent.parent / 'README.md'",
        "X = Path(__file__).parent / 'fixtures' / '..' / 'golden'",
        "name = '../x'  # a hostile corpus name, not a path the test reads",
    ],
)
def test_the_check_accepts_paths_inside_the_repository(source: str) -> None:
    assert outside_references(source, depth=1) == []
