"""hooks.jsonio against the json module it stands in for: same values, same text, same errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claude_mem.hooks import jsonio

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**300), max_value=10**300)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.text(st.characters(min_codepoint=0, max_codepoint=0x3F))  # control characters
    | st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF))  # lone surrogates
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


def same(left: object, right: object) -> bool:
    """Equal, NaN included (NaN != NaN)."""
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(same, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same(left[k], right[k]) for k in left)
    return type(left) is type(right) and left == right


def outcome(load: Callable[..., object], text: str | bytes, strict: bool) -> tuple[str, object]:
    try:
        return "value", load(text, strict=strict)
    except (ValueError, TypeError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def assert_loads_like_json(text: str | bytes) -> None:
    for strict in (True, False):
        mine, theirs = outcome(jsonio.loads, text, strict), outcome(json.loads, text, strict)
        assert mine[0] == theirs[0], (text, strict, mine, theirs)
        assert same(mine[1], theirs[1]), (text, strict, mine, theirs)


@settings(max_examples=400, deadline=None)
@given(values, st.booleans(), st.sampled_from([(", ", ": "), (",", ":")]))
def test_dumps_writes_what_json_writes(
    value: object, ascii_only: bool, separators: tuple[str, str]
) -> None:
    mine = jsonio.dumps(value, ensure_ascii=ascii_only, separators=separators)
    assert mine == json.dumps(value, ensure_ascii=ascii_only, separators=separators)


@settings(max_examples=400, deadline=None)
@given(values, st.sampled_from(["", " ", "\n\t ", "\r\n"]))
def test_loads_reads_what_json_reads(value: object, space: str) -> None:
    for ascii_only in (True, False):
        text = space + json.dumps(value, ensure_ascii=ascii_only) + space
        assert_loads_like_json(text)
        assert_loads_like_json(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=600, deadline=None)
@given(st.text(st.sampled_from('{}[]",:0123456789.eE+-truefalsnNI \t\n\x00\x1f\\u\ufeffé')))
def test_loads_fails_or_succeeds_like_json_on_arbitrary_text(text: str) -> None:
    assert_loads_like_json(text)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=24))
def test_loads_treats_arbitrary_bytes_like_json(raw: bytes) -> None:
    assert_loads_like_json(raw)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "line\nbreak\x01"}',  # raw control characters: strict=False only
        '"\\ud83d\\ude00 \\udc00"',
        "[NaN, Infinity, -Infinity, 1e400, -0.0]",
        "1" * 5000,  # past int's digit limit: json's ValueError
        "[" * 100_000 + "]" * 100_000,  # too deep: RecursionError, as json
        "\ufeff{}",
        '{"a": 1} {"b": 2}',
        "",
        "   ",
        '{"a": 1,}',
        "nul",
    ],
)
def test_loads_matches_json_on_edge_cases(text: str) -> None:
    assert_loads_like_json(text)
    for encoding in ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32-be"):
        assert_loads_like_json(text.encode(encoding, "surrogatepass"))


def test_dumps_refuses_what_json_refuses() -> None:
    circular: list[object] = []
    circular.append(circular)
    for value in ({1, 2}, object(), circular, {(1, 2): 3}):
        with pytest.raises((TypeError, ValueError)) as mine:
            jsonio.dumps(value)
        with pytest.raises((TypeError, ValueError)) as theirs:
            json.dumps(value)
        assert (type(mine.value), str(mine.value)) == (type(theirs.value), str(theirs.value))


FRESH = r"""
import sys
sys.path.insert(0, sys.argv[1])
from claude_mem.hooks import jsonio
assert jsonio.loads(b' {"a": [1, 2.5, "\u00e9", null]} ') == {"a": [1, 2.5, "\u00e9", None]}
assert jsonio.dumps({"a": "\u00e9"}) == '{"a": "\\u00e9"}'
assert not {"json", "re", "enum"} & set(sys.modules), sorted(sys.modules)
for text in sys.argv[2:]:
    try:
        jsonio.loads(text)
    except ValueError as exc:
        print(type(exc).__name__, exc)
"""
INVALID = ('{"a": 1,}', "[1, 2", "", '{"a": 1} x', '"\x01"')


def test_a_fresh_interpreter_decodes_without_json_and_fails_with_its_errors() -> None:
    """Run where nothing imported json yet, as in a hook: valid input never imports it, and
    invalid input still raises json's own error (not the accelerator's SystemError)."""
    src = Path(jsonio.__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", FRESH, str(src), *INVALID],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    expected = []
    for text in INVALID:
        with pytest.raises(json.JSONDecodeError) as caught:
            json.loads(text)
        expected.append(f"JSONDecodeError {caught.value}")
    assert done.stdout.splitlines() == expected
