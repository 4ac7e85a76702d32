"""Percent-encoding of one URL query value, as `urllib.parse.quote(text, safe="")` does it.

`urllib.parse` imports `re`, `ipaddress` and `warnings` (and pathlib imports it): too much for
the few query strings a hook builds. Only RFC 3986's unreserved characters stay as they are.
"""

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")
_ENCODED = tuple(chr(byte) if byte in _UNRESERVED else f"%{byte:02X}" for byte in range(256))


def quote(text: str) -> str:
    """`text` as UTF-8, every byte but the unreserved ones as %XX; a lone surrogate raises
    UnicodeEncodeError, as in urllib."""
    return "".join([_ENCODED[byte] for byte in text.encode("utf-8")])
