"""Percent-encoding of one URL query value, as `urllib.parse.quote(text, safe="")` does it,
and its inverse.

`urllib.parse` imports `re`, `ipaddress` and `warnings` (and pathlib imports it): too much for
the few query strings a hook builds. Only RFC 3986's unreserved characters stay as they are.
"""

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")
_ENCODED = tuple(chr(byte) if byte in _UNRESERVED else f"%{byte:02X}" for byte in range(256))


def quote(text: str) -> str:
    """`text` as UTF-8, every byte but the unreserved ones as %XX; a lone surrogate raises
    UnicodeEncodeError, as in urllib."""
    return "".join([_ENCODED[byte] for byte in text.encode("utf-8")])


_HEX = frozenset("0123456789abcdefABCDEF")


def unquote(text: str) -> str:
    """`urllib.parse.unquote(text)`: each %XX a byte, the bytes read as UTF-8 (an invalid
    sequence replaced); a `%` not followed by two hex digits stays as it is."""
    first, *rest = text.split("%")
    out = bytearray(first.encode("utf-8", "surrogatepass"))
    for part in rest:
        pair = part[:2]
        if len(pair) == 2 and pair[0] in _HEX and pair[1] in _HEX:
            out.append(int(pair, 16))
            out += part[2:].encode("utf-8", "surrogatepass")
        else:
            out += b"%" + part.encode("utf-8", "surrogatepass")
    return out.decode("utf-8", "replace")
