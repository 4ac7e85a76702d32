"""hooks.percent.quote against urllib.parse.quote(text, safe=""), which it replaces."""

from __future__ import annotations

from urllib.parse import quote as urllib_quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claude_mem.hooks.percent import quote


@settings(max_examples=1000, deadline=None)
@given(st.text() | st.text(st.characters(max_codepoint=0x7F)) | st.binary().map(bytes.hex))
def test_quote_encodes_as_urllib_does(text: str) -> None:
    assert quote(text) == urllib_quote(text, safe="")


@pytest.mark.parametrize(
    "text",
    ["", "/home/dev/my proj", "a&b=c?d#e", "100%", "~_.-", "é日本😀", "\x00\x7f", "+ /:"],
)
def test_quote_encodes_paths_and_separators_as_urllib_does(text: str) -> None:
    assert quote(text) == urllib_quote(text, safe="")


def test_a_lone_surrogate_raises_as_in_urllib() -> None:
    for encode in (quote, lambda text: urllib_quote(text, safe="")):
        with pytest.raises(UnicodeEncodeError):
            encode("a\ud800b")
