"""`json.loads` / `json.dumps` as the hook path uses them, without importing `json`.

The `json` package imports `re` (its decoder's whitespace pattern, its encoder's escapes), and
`re` imports `enum`: together most of a hook's import time. CPython's `_json` accelerator is
what `json` itself runs for these calls, so driving it directly gives the same results; only
the whitespace skipping around a document is done here. Anything this module does not handle
itself (invalid JSON, BOMs, UTF-16/32 bytes, an interpreter without `_json`) goes to `json`,
so errors are json's own `JSONDecodeError` (a ValueError) with json's messages.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _accelerator() -> Any:
    try:
        return __import__("_json")
    except ImportError:  # not CPython: json (with re) it is
        return None


_C = _accelerator()

_WHITESPACE = " \t\n\r"  # JSON's, as json.decoder's pattern spells them
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Context:
    """The decoder settings `_json.make_scanner` reads (json.JSONDecoder's defaults)."""

    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__

    def __init__(self, strict: bool) -> None:
        self.strict = strict


_scanners: dict[bool, Any] = {}


def _not_serializable(value: object) -> object:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def loads(s: str | bytes | bytearray, *, strict: bool = True) -> Any:
    """json.loads(s, strict=strict): strict=False accepts raw control characters in strings."""
    if _C is None:
        return _json_loads(s, strict)
    if not isinstance(s, str):
        if not isinstance(s, bytes | bytearray):
            return _json_loads(s, strict)  # json's TypeError
        # json.detect_encoding says utf-8 exactly when there is no BOM and no NUL in the
        # first bytes; the rest (UTF-16/32 guesses, BOM handling) is json's.
        if s[:3] == b"\xef\xbb\xbf" or s[:2] in (b"\xff\xfe", b"\xfe\xff") or 0 in s[:4]:
            return _json_loads(s, strict)
        s = s.decode("utf-8", "surrogatepass")
    scan = _scanners.get(strict)
    if scan is None:
        scan = _scanners[strict] = _C.make_scanner(_Context(strict))
    size = len(s)
    start = 0
    while start < size and s[start] in _WHITESPACE:
        start += 1
    try:
        value, end = scan(s, start)
    except (StopIteration, ValueError, SystemError):
        # SystemError: on 3.11 the scanner reports an error through json.decoder's class and
        # fails that way when json.decoder was never imported; json raises the real one.
        return _json_loads(s, strict)
    while end < size and s[end] in _WHITESPACE:
        end += 1
    if end != size:
        return _json_loads(s, strict)  # "Extra data"
    return value


def dumps(
    value: object, *, ensure_ascii: bool = True, separators: tuple[str, str] = (", ", ": ")
) -> str:
    """json.dumps(value, ensure_ascii=..., separators=...) with json's other defaults."""
    if _C is None:
        import json  # noqa: PLC0415 - no accelerator

        return json.dumps(value, ensure_ascii=ensure_ascii, separators=separators)
    escape = _C.encode_basestring_ascii if ensure_ascii else _C.encode_basestring
    if isinstance(value, str):
        return str(escape(value))
    item, key = separators
    encode = _C.make_encoder({}, _not_serializable, escape, None, key, item, False, False, True)
    return "".join(encode(value, 0))


def _json_loads(s: str | bytes | bytearray, strict: bool) -> Any:
    import json  # noqa: PLC0415 - errors and rare encodings only

    return json.loads(s, strict=strict)
