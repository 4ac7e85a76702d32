"""Privacy rules: tag stripping, protocol detection, secret redaction and value cleaning."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claude_mem import privacy
from claude_mem.privacy import (
    MEMORY_TAGS,
    PROTOCOL_TAGS,
    clean_text,
    clean_value,
    is_fully_private,
    is_protocol_payload,
    redact_secrets,
    strip_tags,
)
from tests.scaling import assert_linear, repeat

ELIDED = "[elided: nesting too deep]"


# Hostile inputs are checked for linear growth (tests/scaling.py), never against a time budget;
# the figures against the floors are measured by bench/privacy_bench.py.


# --- constants and imports -------------------------------------------------------------------


def test_tag_constants() -> None:
    assert MEMORY_TAGS == (
        "private",
        "claude-mem-context",
        "system_instruction",
        "system-instruction",
        "persisted-output",
        "system-reminder",
    )
    assert PROTOCOL_TAGS == ("task-notification",)


def test_module_imports_only_the_standard_library() -> None:
    code = (
        "import sys; before = set(sys.modules); import claude_mem.privacy; "
        "print('\\n'.join(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = {name.split(".")[0] for name in out.split()}
    assert loaded <= set(sys.stdlib_module_names) | {"claude_mem"}, loaded


# --- strip_tags ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("   \n\t ", ""),
        ("plain text", "plain text"),
        ("  padded  ", "padded"),
        ("a <private>x</private> b", "a  b"),
        ("<private>secret</private>", ""),
        ("before<private>secret</private>after", "beforeafter"),
        ("a<private>1</private>b<private>2</private>c", "abc"),
        # attributes
        ('a<private reason="x">secret</private>b', "ab"),
        ("a<private\n  reason='multi\nline'>secret</private>b", "ab"),
        ('a<private note="/">secret</private>b', "ab"),
        # multiline content
        ("keep\n<private>\nline1\nline2\n</private>\nalso", "keep\n\nalso"),
        # closing tag with whitespace before '>'
        ("a<private>s</private  >b", "ab"),
        ("a<private>s</private\n>b", "ab"),
        # nesting of the same name
        ("<private>a<private>b</private>c</private>d", "d"),
        ("x<private><private><private>s</private></private></private>y", "xy"),
        # other names inside a region are plain content
        (
            "<system-reminder>r <claude-mem-context>c</claude-mem-context> r</system-reminder>t",
            "t",
        ),
        ("<private>a<system-reminder>b</private>c", "c"),
        ("<private>a</system-reminder>b</private>c", "c"),
        # every tag name
        ("a<claude-mem-context>x</claude-mem-context>b", "ab"),
        ("a<system_instruction>x</system_instruction>b", "ab"),
        ("a<system-instruction>x</system-instruction>b", "ab"),
        ("a<persisted-output>x</persisted-output>b", "ab"),
        ("a<system-reminder>x</system-reminder>b", "ab"),
        # a different closing name does not close the region
        ("a<system_instruction>x</system-instruction>b", "a"),
        # fail closed
        ("keep <private>secret", "keep"),
        ("keep <private>a<private>b</private>secret", "keep"),
        ("keep <private reason='x'>secret", "keep"),
        ("keep <private no closing bracket", "keep"),
        ("a<private>x</private>b<system-reminder>tail", "ab"),
        # stray closers and look-alikes are left alone
        ("x </private> y", "x </private> y"),
        ("</private>a<private>s</private>", "</private>a"),
        ("<privateer>x</privateer>", "<privateer>x</privateer>"),
        ("<private-key>x</private-key>", "<private-key>x</private-key>"),
        ("<PRIVATE>x</PRIVATE>", "<PRIVATE>x</PRIVATE>"),
        ("<Private>x</Private>", "<Private>x</Private>"),
        ("< private>x</ private>", "< private>x</ private>"),
        ("a <private", "a <private"),
        ("a </private", "a </private"),
        ("use a<b and c>d", "use a<b and c>d"),
        # self-closing tags hold nothing and are not openers
        ("a<private/>b", "a<private/>b"),
        ("a<private />b", "a<private />b"),
        ('a<private reason="x"/>b<private>s</private>c', 'a<private reason="x"/>bc'),
        # a '>' inside an attribute ends the tag (the rest is hidden, fail closed)
        ('<private a="x>y">secret</private>after', "after"),
        # tags inside an opener's attributes are part of it
        ('<private a="</private>">secret</private>after', "after"),
    ],
)
def test_strip_tags(text: str, expected: str) -> None:
    assert strip_tags(text) == expected


def test_strip_tags_odd_characters() -> None:
    assert strip_tags("a\x00<private>\x00s</private>\x00b") == "a\x00\x00b"
    lone = json.loads('"x\\ud800<private>\\udfff</private>y"')
    assert strip_tags(lone) == "x\ud800y"
    assert strip_tags("\ud800") == "\ud800"
    assert strip_tags("é<private>ü</private>ö") == "éö"


def test_strip_tags_removes_spliced_tags_and_is_stable() -> None:
    # Removing the inner region splices `<` + `private>` into a new opener; fail closed.
    text = "<<private>x</private>private>hidden</private>shown"
    assert strip_tags(text) == "shown"
    assert strip_tags("<<private>x</private>private>tail") == ""


def test_strip_tags_gives_up_on_endless_splicing() -> None:
    # Each round of removal forms one more tag; past the round limit the whole text goes.
    layers = 20
    text = "<" * layers + "<private>x</private>" + "private>x</private>" * layers + "end"
    assert strip_tags(text) == ""


# --- is_fully_private ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<private>everything</private>", True),
        ("  <private>a</private>\n<system-reminder>b</system-reminder>  ", True),
        ("<private>unclosed", True),
        ("<private>a</private> visible", False),
        ("visible", False),
        ("", False),
        ("   \n ", False),
        ("<private></private>", True),
        ("<private/>", False),
    ],
)
def test_is_fully_private(text: str, expected: bool) -> None:
    assert is_fully_private(text) is expected


# --- is_protocol_payload ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "<task-notification>done</task-notification>",
        "  \n<task-notification>done</task-notification>\n ",
        '<task-notification id="7" kind="x">\nmulti\nline\n</task-notification>',
        "<task-notification>a <private>b</private> c</task-notification >",
        "<task-notification></task-notification>",
        "<task-notification>a<task-notificationx>b</task-notification>",
    ],
)
def test_protocol_payload_positive(text: str) -> None:
    assert is_protocol_payload(text) is True


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello",
        "note <task-notification>done</task-notification>",
        "<task-notification>done</task-notification> thanks",
        "<task-notification>a</task-notification><task-notification>b</task-notification>",
        "<task-notification>a<task-notification>b</task-notification>",
        "<task-notification>a</task-notification>b</task-notification>",
        "<task-notification x='1'>a<task-notification y='2'>b</task-notification>",
        "<task-notification>done",
        "done</task-notification>",
        "<task-notification/>x</task-notification>",
        "<task-notification x/>x</task-notification>",
        "<task-notificationx>done</task-notification>",
        "<TASK-NOTIFICATION>done</TASK-NOTIFICATION>",
        "<task-notification attr-without-end</task-notification>",
    ],
)
def test_protocol_payload_negative(text: str) -> None:
    assert is_protocol_payload(text) is False


def test_protocol_payload_size_limit() -> None:
    open_, close = "<task-notification>", "</task-notification>"
    fits = open_ + "x" * (256 * 1024 - len(open_) - len(close)) + close
    assert len(fits) == 256 * 1024
    assert is_protocol_payload(fits) is True
    assert is_protocol_payload(open_ + "x" * (256 * 1024) + close) is False


def test_protocol_payload_hostile_is_fast() -> None:
    def hostile(n: int) -> str:
        return "<task-notification>" + "<task-notification " * n + "</task-notification>"

    assert assert_linear(is_protocol_payload, hostile, 12_000) is False


# --- redact_secrets --------------------------------------------------------------------------

OPENAI = "sk-proj-" + "Ab3_xY9-" * 4
ANTHROPIC = "sk-ant-api03-" + "q" * 40 + "-AA"
GITHUB = "ghp_" + "A1b2C3d4E5" * 4
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAuX5\nZm9vYmFy\n-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key {OPENAI} end", "key [REDACTED:api-key] end"),
        (f"ANTHROPIC_KEY={ANTHROPIC}", "ANTHROPIC_KEY=[REDACTED:api-key]"),
        (f'"{OPENAI}"', '"[REDACTED:api-key]"'),
        (f"token {GITHUB}.", "token [REDACTED:github-token]."),
        ("gho_" + "z" * 30, "[REDACTED:github-token]"),
        ("github_pat_" + "11AB_cd" * 7, "[REDACTED:github-token]"),
        ("id AKIAIOSFODNN7EXAMPLE here", "id [REDACTED:aws-access-key] here"),
        ("ASIAIOSFODNN7EXAMPLE", "[REDACTED:aws-access-key]"),
        ("xoxb-123456789012-abcdefABCDEF", "[REDACTED:slack-token]"),
        ("url?key=AIza" + "S" * 35 + "&x=1", "url?key=[REDACTED:google-api-key]&x=1"),
        (f"jwt: {JWT} ok", "jwt: [REDACTED:jwt] ok"),
        (f"before\n{PEM}\nafter", "before\n[REDACTED:private-key]\nafter"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\n-----END OPENSSH PRIVATE KEY-----",
            "[REDACTED:private-key]",
        ),
        ("x -----BEGIN PRIVATE KEY-----\nMIIE\ntruncated", "x [REDACTED:private-key]"),
        ("DB_PASSWORD=hunter2", "DB_PASSWORD=[REDACTED:password]"),
        ("password: hunter2 next", "password: [REDACTED:password] next"),
        ('"api_key": "abc123"', '"api_key": "[REDACTED:api-key]"'),
        ("{'passwd': 'p w'}", "{'passwd': '[REDACTED:password]'}"),
        ("PWD=/home/me", "PWD=[REDACTED:password]"),
        ("GITHUB_TOKEN=abc", "GITHUB_TOKEN=[REDACTED:token]"),
        ("access_token = 'x'", "access_token = '[REDACTED:token]'"),
        ("auth_token:xyz", "auth_token:[REDACTED:token]"),
        ("client_secret=s3cr3t", "client_secret=[REDACTED:secret]"),
        ("SECRET=s", "SECRET=[REDACTED:secret]"),
        ("SECRET_KEY='django-insecure'", "SECRET_KEY='[REDACTED:secret]'"),
        ("apikey=k", "apikey=[REDACTED:api-key]"),
        ("x-api-key: k", "x-api-key: [REDACTED:api-key]"),
        ("aws_secret_access_key = " + "w" * 40, "aws_secret_access_key = [REDACTED:aws-secret]"),
        ("AWS_SECRET_ACCESS_KEY=" + "w" * 40, "AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret]"),
        ("'password' => 'hunter2'", "'password' => '[REDACTED:password]'"),
        ("password := 'a b'", "password := '[REDACTED:password]'"),
        ('password = "a \\" b"', 'password = "[REDACTED:password]"'),
        (
            '{\\"password\\": \\"x\\", \\"user\\": 1}',
            '{\\"password\\": \\"[REDACTED:password]\\", \\"user\\": 1}',
        ),
        ("login(password=hunter2)", "login(password=[REDACTED:password])"),
        ("?token=abc&page=2", "?token=[REDACTED:token]&page=2"),
        ("password=a;user=b", "password=[REDACTED:password];user=b"),
        (
            "Authorization: Bearer abc.def-ghi_jkl",
            "Authorization: Bearer [REDACTED:auth-token]",
        ),
        (
            '"authorization": "Basic dXNlcjpwYXNz"',
            '"authorization": "Basic [REDACTED:auth-token]"',
        ),
        ("Bearer " + "t0k3n" * 5, "Bearer [REDACTED:auth-token]"),
        ("postgres://app:hunter2@db:5432/x", "postgres://app:[REDACTED:url-password]@db:5432/x"),
        ("redis://:p@ss:w@cache/0", "redis://:[REDACTED:url-password]@cache/0"),
        ("https://u:pw@h.example/p?q", "https://u:[REDACTED:url-password]@h.example/p?q"),
    ],
)
def test_redact_positive(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected
    assert redact_secrets(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "sk-short",
        "skeleton key",
        "task-" + "a" * 30,
        "risk-" + "a" * 30,
        "ghp_short",
        "ghp_" + "a" * 29,
        "xAKIAIOSFODNN7EXAMPLE",
        "AKIAIOSFODNN7EXAMPLEX",
        "AKIAiosfodnn7example",
        "xoxb-short",
        "AIza" + "S" * 34,
        "dGhpcyBpcyBub3QgYSB0b2tlbg==.eyJhYmMiOjF9.c2ln",
        "aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ=",
        "eyJhbGciOiJIUzI1NiJ9 only one segment",
        "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----\nMIIB",
        "the token is in the header",
        "we need a password reset flow",
        "secrets: []",
        "max_tokens: 1024",
        "password_hash = compute()",
        'password = ""',
        "password =",
        "password:\n  nested",
        "Authorization: Bearer",
        "the bearer of bad news",
        "https://example.com:8443/path",
        "ssh://git@github.com:22/org/repo",
        "git@github.com:org/repo.git",
        "email me at dev@example.com: thanks",
    ],
)
def test_redact_negative(text: str) -> None:
    assert redact_secrets(text) == text


def test_redact_keeps_surrounding_text() -> None:
    text = f"line one\nexport OPENAI_API_KEY={OPENAI} # set\nline three"
    assert (
        redact_secrets(text)
        == "line one\nexport OPENAI_API_KEY=[REDACTED:api-key] # set\nline three"
    )
    text = "a=1, password=hunter2, b=2"
    assert redact_secrets(text) == "a=1, password=[REDACTED:password], b=2"


def test_redact_value_that_looks_like_a_marker_is_still_redacted() -> None:
    assert redact_secrets("password=[REDACTED:x]tail") == "password=[REDACTED:password]"
    assert redact_secrets("password=[REDACTED:password]") == "password=[REDACTED:password]"


def test_redact_is_idempotent_on_mixed_text() -> None:
    text = (
        f"token={OPENAI} password={JWT} url=mysql://root:{GITHUB}@h/db "
        f"Authorization: token {ANTHROPIC}\n{PEM}"
    )
    once = redact_secrets(text)
    for secret in (OPENAI, JWT, GITHUB, ANTHROPIC, "MIIEowIBAAKCAQEAuX5"):
        assert secret not in once
    assert redact_secrets(once) == once


def test_redact_odd_characters() -> None:
    lone = json.loads('"\\ud800 password=\\udfffx \\u0000"')
    assert redact_secrets(lone) == "\ud800 password=[REDACTED:password] \x00"
    # Non-ASCII letters that lowercase to two characters must not shift offsets.
    assert redact_secrets("İİ password=x İ") == "İİ password=[REDACTED:password] İ"


# --- clean_text ------------------------------------------------------------------------------


def test_clean_text_strips_then_redacts() -> None:
    text = f"  run <private>my diary</private> with key={OPENAI}  "
    assert clean_text(text) == "run  with key=[REDACTED:api-key]"
    assert clean_text(text, redact=False) == f"run  with key={OPENAI}"


def test_clean_text_catches_secrets_spliced_by_tag_removal() -> None:
    assert clean_text("pass<private>x</private>word=hunter2") == "password=[REDACTED:password]"


def test_clean_text_is_idempotent() -> None:
    text = "<private>a</private>password=<b> <private x/> sk-" + "z" * 30
    once = clean_text(text)
    assert clean_text(once) == once


# --- clean_value -----------------------------------------------------------------------------


def test_clean_value_cleans_keys_and_values() -> None:
    value = {
        "prompt": "hi <private>diary</private>",
        "<private>k</private>name": "v",
        "nested": [{"cmd": f"curl -H 'Authorization: Bearer {OPENAI}'"}, ("t", 1)],
        "n": 1,
        "f": 1.5,
        "b": True,
        "none": None,
        7: "seven",
    }
    assert clean_value(value) == {
        "prompt": "hi",
        "name": "v",
        "nested": [{"cmd": "curl -H 'Authorization: Bearer [REDACTED:api-key]'"}, ["t", 1]],
        "n": 1,
        "f": 1.5,
        "b": True,
        "none": None,
        7: "seven",
    }


def test_clean_value_scalars() -> None:
    assert clean_value("<private>x</private>") == ""
    assert clean_value(3) == 3
    assert clean_value(2.5) == 2.5
    assert clean_value(False) is False
    assert clean_value(None) is None
    assert clean_value(("a", ["b"])) == ["a", ["b"]]


def test_clean_value_hides_values_of_secret_keys() -> None:
    value = {
        "env": {"DB_PASSWORD": "hunter2", "API_KEY": 12345, "client_secret": "c", "HOME": "/h"},
        "token": {"inner": "not a scalar, recursed"},
        "password": "",
        "is_secret": True,
    }
    assert clean_value(value) == {
        "env": {
            "DB_PASSWORD": "[REDACTED:password]",
            "API_KEY": "[REDACTED:api-key]",
            "client_secret": "[REDACTED:secret]",
            "HOME": "/h",
        },
        "token": {"inner": "not a scalar, recursed"},
        "password": "",
        "is_secret": True,
    }
    assert clean_value({"password": "hunter2"}, redact=False) == {"password": "hunter2"}
    cleaned = clean_value(value)
    assert clean_value(cleaned) == cleaned


def test_clean_value_without_redaction_still_strips_tags() -> None:
    value = {"a": f"<private>x</private>{OPENAI}"}
    assert clean_value(value, redact=False) == {"a": OPENAI}


def _nest(depth: int, leaf: object = "x") -> object:
    value: object = leaf
    for _ in range(depth):
        value = [value]
    return value


def _depth_and_leaf(value: object) -> tuple[int, object]:
    depth = 0
    while isinstance(value, list):
        (value,) = value
        depth += 1
    return depth, value


def test_clean_value_depth_limit() -> None:
    assert _depth_and_leaf(clean_value(_nest(200, "<private>s</private>ok"))) == (200, "ok")
    assert _depth_and_leaf(clean_value(_nest(201))) == (201, ELIDED)
    assert _depth_and_leaf(clean_value(_nest(1000))) == (201, ELIDED)


def test_clean_value_deep_dicts() -> None:
    value: object = "x"
    for _ in range(1000):
        value = {"k": value}
    cleaned = clean_value(value)
    depth = 0
    while isinstance(cleaned, dict):
        cleaned = cleaned["k"]
        depth += 1
    assert (depth, cleaned) == (201, ELIDED)


def test_clean_value_100k_deep_does_not_recurse() -> None:
    assert _depth_and_leaf(assert_linear(clean_value, _nest, 100_000)) == (201, ELIDED)


def test_clean_value_shared_and_cyclic_containers() -> None:
    shared: list[object] = ["s"]
    for _ in range(60):  # 2**60 paths if sharing were expanded
        shared = [shared, shared]
    cleaned = clean_value(shared)
    assert isinstance(cleaned, list)
    assert cleaned[0] is cleaned[1]
    cyclic: list[object] = ["<private>p</private>v"]
    cyclic.append(cyclic)
    result = clean_value(cyclic)
    assert isinstance(result, list)
    assert result[0] == "v"
    assert result[1] is result


def test_clean_value_other_types_become_clean_strings() -> None:
    class Thing:
        def __str__(self) -> str:
            return "thing password=x <private>y</private>"

    assert clean_value([Thing(), {1, 2} & {2}]) == ["thing password=[REDACTED:password]", [2]]


# --- hostile input timing --------------------------------------------------------------------


def unclosed_tail(n: int) -> str:
    """n openers deep, one closer short."""
    return "ok" + "<private>" * n + "</private>" * (n - 1)


ALTERNATING_OPEN = "".join(f"<{t}>" for t in MEMORY_TAGS)
ALTERNATING_CLOSED = "".join(f"<{t}>x</{t}>" for t in MEMORY_TAGS)

# id, input of size n, n (~1 MB), what strip_tags leaves of the input of size n
STRIP_HOSTILE: list[tuple[str, Callable[[int], str], int, Callable[[int], str]]] = [
    ("many openers", repeat("<private>"), 110_000, lambda n: ""),
    ("openers without '>'", repeat("<private "), 110_000, lambda n: ""),
    ("half open half close", lambda n: "<private>" * n + "</private>" * n, 50_000, lambda n: ""),
    ("100k deep", lambda n: "<private>" * n + "x" + "</private>" * n, 100_000, lambda n: ""),
    ("100k deep, unclosed tail", unclosed_tail, 100_000, lambda n: "ok"),
    ("alternating names unclosed", repeat(ALTERNATING_OPEN), 12_000, lambda n: ""),
    ("alternating names closed", repeat(ALTERNATING_CLOSED), 6_000, lambda n: ""),
    ("1 MB of '<'", repeat("<"), 1_000_000, repeat("<")),
    ("stray closers", repeat("</private>"), 100_000, repeat("</private>")),
    ("self-closing", repeat("<private a/>"), 90_000, repeat("<private a/>")),
    ("closers without '>'", repeat("</private "), 110_000, lambda n: ("</private " * n).strip()),
    ("many regions", repeat("a<private>x</private>"), 50_000, repeat("a")),
]


@pytest.mark.parametrize(
    ("make", "n", "expected"), [c[1:] for c in STRIP_HOSTILE], ids=[c[0] for c in STRIP_HOSTILE]
)
def test_strip_tags_hostile_input_is_linear(
    make: Callable[[int], str], n: int, expected: Callable[[int], str]
) -> None:
    assert len(make(n)) >= 900_000
    assert assert_linear(strip_tags, make, n) == expected(n)


def test_strip_tags_10mb() -> None:
    make = repeat("some normal output line with a <private>secret</private> in it\n")
    assert len(make(160_000)) > 10_000_000
    result = assert_linear(strip_tags, make, 160_000, runs=2)
    assert "secret" not in result
    assert result.count("some normal output") == 160_000


def test_clean_text_10mb() -> None:
    make = repeat("ordinary prose, DB_PASSWORD=hunter2 and <private>diary</private> :// x\n")
    assert len(make(145_000)) > 10_000_000
    result = assert_linear(clean_text, make, 145_000, runs=2)
    assert "hunter2" not in result
    assert "diary" not in result


# id, input of size n, n (~1 MB)
REDACT_HOSTILE: list[tuple[str, Callable[[int], str], int]] = [
    ("sk-", repeat("sk-"), 340_000),
    ("password=", repeat("password="), 115_000),
    ("password: ", repeat("password: "), 100_000),
    ('password="', repeat('password="'), 100_000),
    ("eyJ", repeat("eyJ"), 340_000),
    ("eyJa.", repeat("eyJa."), 200_000),
    ("BEGIN", repeat("-----BEGIN RSA PRIVATE KEY-----"), 33_000),
    ("://", repeat("://"), 340_000),
    ("://a:", repeat("://a:"), 200_000),
    ("authorization: ", repeat("authorization: "), 70_000),
    ("bearer ", repeat("bearer "), 150_000),
    ("ghp_", repeat("ghp_"), 250_000),
    ("AKIA", repeat("AKIA"), 250_000),
    ("A", repeat("A"), 1_000_000),
    ("backslashes", repeat("\\a", prefix='password="'), 500_000),
]


@pytest.mark.parametrize(
    ("make", "n"), [c[1:] for c in REDACT_HOSTILE], ids=[c[0] for c in REDACT_HOSTILE]
)
def test_redact_hostile_input_is_linear(make: Callable[[int], str], n: int) -> None:
    assert len(make(n)) >= 990_000
    result = assert_linear(redact_secrets, make, n)
    assert redact_secrets(result) == result


def test_redact_hostile_results() -> None:
    assert redact_secrets("sk-" * 340_000) == "[REDACTED:api-key]"
    assert redact_secrets("password=" * 115_000) == "password=[REDACTED:password]"
    assert redact_secrets("-----BEGIN RSA PRIVATE KEY-----" * 33_000) == "[REDACTED:private-key]"
    assert redact_secrets("eyJ" * 340_000) == "eyJ" * 340_000


# --- properties ------------------------------------------------------------------------------

# No 'Q' in the surrounding text, so a secret starting with "QQ" can only come from the region.
_SAFE_TEXT = st.text(alphabet=st.characters(exclude_characters="Q"), max_size=40)
_FRAGMENTS = st.sampled_from(
    [
        "<private>",
        "</private>",
        "<private a='>'>",
        "<private/>",
        "<system-reminder x='1'>",
        "</system-reminder>",
        "<claude-mem-context>",
        "</claude-mem-context >",
        "private>",
        "a",
        " ",
        "\n",
        "<",
        ">",
        "/",
    ]
)
_SECRET_FRAGMENTS = st.sampled_from(
    [
        "password",
        "=",
        ": ",
        '"',
        "'",
        "\\",
        "sk-",
        "a" * 10,
        "eyJ",
        ".",
        "://",
        "@",
        "u:p",
        "[REDACTED:x]",
        "]",
        ")",
        "Authorization: Bearer ",
        "-----BEGIN PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
        "AKIA",
        "ABCDEFGHIJKLMNOP",
        "token",
        " ",
        "\n",
        ",",
        "x",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    a=_SAFE_TEXT,
    b=_SAFE_TEXT,
    secret=st.text(alphabet="abcXYZ019 _-\n", max_size=20),
    tag=st.sampled_from(MEMORY_TAGS),
    attrs=st.sampled_from(["", " a='1'", ' reason="x y"', "\n data-x=2 ", " "]),
    closing_space=st.sampled_from(["", " ", "\n"]),
)
def test_property_tagged_secret_never_survives(
    *, a: str, b: str, secret: str, tag: str, attrs: str, closing_space: str
) -> None:
    marker = "QQ" + secret
    assert marker not in clean_text(a + "<private>" + marker + "</private>" + b)
    text = f"{a}<{tag}{attrs}>{marker}</{tag}{closing_space}>{b}"
    assert marker not in clean_text(text)
    assert marker not in clean_text(text, redact=False)
    assert marker not in strip_tags(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=30).map("".join))
def test_property_strip_tags_idempotent(text: str) -> None:
    once = strip_tags(text)
    assert strip_tags(once) == once


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_property_redact_idempotent_on_arbitrary_text(text: str) -> None:
    once = redact_secrets(text)
    assert redact_secrets(once) == once


@settings(max_examples=200, deadline=None)
@given(st.lists(_SECRET_FRAGMENTS, max_size=25).map("".join))
def test_property_redact_idempotent_on_secret_shapes(text: str) -> None:
    once = redact_secrets(text)
    assert redact_secrets(once) == once
    cleaned = clean_text(text)
    assert clean_text(cleaned) == cleaned


# The pattern the literal trigger words replaced: redaction ran only where it matched.
TRIGGER_PATTERN = (
    r"-----begin|eyj|sk-|gh[pousr]_|github_pat_|akia|asia|xox|aiza|://|authorization|bearer"
    r"|passw|pwd|secret|token|api[_-]?key|private[_-]?key"
)
TRIGGER_PIECES = ["-----BEGIN", "eyJ", "sk-", "gh", "p_", "o_", "u_", "s_", "r_", "x_",
                  "github_pat_", "AKIA", "asia", "xox", "AIza", "://", "Authorization",
                  "bearer", "passw", "pwd", "SECRET", "token", "api", "_", "-", "key", "private",
                  "tok", "en", "pass", "w", " ", "é", "İ"]  # fmt: skip


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(TRIGGER_PIECES), max_size=6).map("".join) | st.text())
def test_the_trigger_words_decide_exactly_as_the_trigger_pattern(text: str) -> None:
    import re

    folded = text.lower()
    assert privacy._triggered(folded) == (re.search(TRIGGER_PATTERN, folded) is not None)


def test_text_without_tags_or_trigger_words_is_cleaned_without_re_and_the_rest_with_it() -> None:
    """In a fresh interpreter, as in a hook: plain text and plain tool input need no pattern;
    a secret, a secret-named key or a tag still gets its rule (and re)."""
    script = """
import sys
sys.path.insert(0, sys.argv[1])
from claude_mem import privacy
plain = {"command": "ls -la", "cwd": "/home/dev", "n": 3, "files": ["a.py", "b.py"]}
assert privacy.clean_value(plain) == plain
assert privacy.clean_text("Run the tests for module 3") == "Run the tests for module 3"
assert not privacy.is_protocol_payload("fix the <b> tag")
assert "re" not in sys.modules, "re imported for plain text"
assert privacy.clean_value({"DB_PASSWORD": "hunter22"}) == {"DB_PASSWORD": "[REDACTED:password]"}
assert "re" in sys.modules
assert privacy.clean_text("key sk-" + "A" * 30) == "key [REDACTED:api-key]"
assert privacy.clean_text("a <private>b</private> c") == "a  c"
"""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script, str(Path(privacy.__file__).parents[1])],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
