"""The reply parser: every rule of the XML dialect, prose handling and hostile input."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from claude_mem.pipeline.parser import MAX_OBSERVATIONS, parse_response, prose_error, unwrap_fence
from tests.scaling import assert_linear, repeat

GOOD = """<observation>
  <type>bugfix</type>
  <title>Fixed the token refresh race</title>
  <subtitle>Two refreshes could run at once</subtitle>
  <facts>
    <fact>auth/refresh.py now holds a lock</fact>
    <fact>  </fact>
    <fact>The race showed up as HTTP 401 under load</fact>
  </facts>
  <narrative>The refresh ran twice and the second call invalidated the first token.</narrative>
  <concepts><concept>problem-solution</concept><concept>gotcha</concept></concepts>
  <files_read><file>auth/client.py</file></files_read>
  <files_modified><file>auth/refresh.py</file><file></file></files_modified>
</observation>"""


def test_good_observation_fields() -> None:
    parsed = parse_response(GOOD)
    assert parsed.kind == "observations"
    assert parsed.error is None
    [obs] = parsed.observations
    assert obs.type == "bugfix"
    assert obs.title == "Fixed the token refresh race"
    assert obs.subtitle == "Two refreshes could run at once"
    assert obs.facts == [
        "auth/refresh.py now holds a lock",
        "The race showed up as HTTP 401 under load",
    ]
    assert obs.narrative.startswith("The refresh ran twice")
    assert obs.concepts == ["problem-solution", "gotcha"]
    assert obs.source_event_ids == []


def test_file_lists_a_model_still_sends_are_ignored_without_error() -> None:
    parsed = parse_response(GOOD)  # GOOD carries <files_read> and <files_modified>
    assert (parsed.kind, parsed.error) == ("observations", None)
    [obs] = parsed.observations
    assert not hasattr(obs, "files_read")
    assert not hasattr(obs, "files_modified")
    assert "auth/client.py" not in obs.narrative + "".join(obs.facts)
    assert obs.title == "Fixed the token refresh race"


def test_every_observation_is_collected() -> None:
    text = "Here you go:\n" + GOOD + "\nand\n" + GOOD.replace("bugfix", "feature") + "\nbye"
    parsed = parse_response(text)
    assert [o.type for o in parsed.observations] == ["bugfix", "feature"]


@pytest.mark.parametrize(
    "text",
    [
        "```xml\n" + GOOD + "\n```",
        "```\n" + GOOD + "\n```\n",
        "  ```XML\n" + GOOD + "\n```  ",
    ],
)
def test_whole_reply_fence_is_unwrapped(text: str) -> None:
    assert unwrap_fence(text).strip() == GOOD
    assert parse_response(text).observations[0].title == "Fixed the token refresh race"


def test_partial_fence_is_left_alone() -> None:
    text = "Intro\n```xml\n" + GOOD + "\n```"
    assert unwrap_fence(text) == text
    # The observation inside is still found: fences only matter when they wrap everything.
    assert len(parse_response(text).observations) == 1
    fenced_code = "```python\nprint(1)\n```"
    assert unwrap_fence(fenced_code) == fenced_code


def test_first_root_tag_decides_the_kind() -> None:
    summary = "<summary><request>r</request></summary>"
    assert parse_response(summary + GOOD).kind == "summary"
    parsed = parse_response(GOOD + summary)
    assert parsed.kind == "observations"
    assert parsed.summary is None
    assert parse_response('<skip_summary reason="x"/>' + GOOD).kind == "skip_summary"
    assert parse_response("<OBSERVATION><title>Upper</title></OBSERVATION>").kind == "observations"


def test_fields_take_the_first_match_trimmed_and_unescaped() -> None:
    text = (
        "<observation><title>  a &lt;b&gt; &amp;&amp; &quot;c&quot; &apos;d&apos; &#65;&#x42; "
        "</title><title>second</title><narrative><![CDATA[x <y> &amp;]]></narrative>"
        "</observation>"
    )
    [obs] = parse_response(text).observations
    assert obs.title == "a <b> && \"c\" 'd' AB"
    assert obs.narrative == "x <y> &amp;"


def test_double_escaped_entities_unescape_once() -> None:
    [obs] = parse_response(
        "<observation><title>&amp;lt;tag&amp;gt;</title></observation>"
    ).observations
    assert obs.title == "&lt;tag&gt;"


def test_bad_numeric_entities_are_kept() -> None:
    text = "<observation><title>&#0; &#xD800; &#9999999;</title></observation>"
    [obs] = parse_response(text).observations
    assert obs.title == "&#0; &#xD800; &#9999999;"


def test_missing_type_is_discovery_and_unknown_type_is_kept_lowercased() -> None:
    [obs] = parse_response("<observation><title>t</title></observation>").observations
    assert obs.type == "discovery"
    [obs] = parse_response(
        "<observation><type> Security_Alert </type><title>t</title></observation>"
    ).observations
    assert obs.type == "security_alert"
    long_type = "X" * 100
    [obs] = parse_response(
        f"<observation><type>{long_type}</type><title>t</title></observation>"
    ).observations
    assert obs.type == "x" * 32
    [obs] = parse_response("<observation><type></type><title>t</title></observation>").observations
    assert obs.type == "discovery"


def test_concepts_are_normalised() -> None:
    text = (
        "<observation><type>gotcha</type><title>t</title><concepts>"
        "<concept>How-It-Works: the loop</concept><concept> gotcha </concept><concept>:x</concept>"
        "<concept>how-it-works</concept><concept>  </concept><concept>Trade-Off</concept>"
        "</concepts></observation>"
    )
    [obs] = parse_response(text).observations
    assert obs.concepts == ["how-it-works", "trade-off"]


def test_fact_tags_do_not_match_facts_prefix() -> None:
    text = (
        "<observation><title>t</title><facts><fact>one</fact>"
        "<facts_extra>no</facts_extra></facts></observation>"
    )
    assert parse_response(text).observations[0].facts == ["one"]


def test_attributes_and_self_closing_tags() -> None:
    text = (
        '<observation id="1"><title lang="en">T</title><subtitle/><facts>'
        '<fact/><fact kind="x">F</fact></facts></observation>'
    )
    [obs] = parse_response(text).observations
    assert (obs.title, obs.subtitle, obs.facts) == ("T", "", ["F"])


@pytest.mark.parametrize(
    "body",
    [
        "<subtitle>only a subtitle</subtitle>",
        "<files_read><file>a.py</file></files_read>",
        "<concepts><concept>bugfix</concept></concepts><type>bugfix</type>",
        "",
    ],
)
def test_observation_without_substance_is_dropped(body: str) -> None:
    parsed = parse_response(f"<observation>{body}</observation>")
    assert parsed.kind == "observations"
    assert parsed.observations == []


@pytest.mark.parametrize(
    "body",
    [
        "<title>t</title>",
        "<narrative>n</narrative>",
        "<facts><fact>f</fact></facts>",
        "<concepts><concept>pattern</concept></concepts>",
    ],
)
def test_any_one_substantive_field_keeps_it(body: str) -> None:
    assert len(parse_response(f"<observation>{body}</observation>").observations) == 1


def test_summary_fields() -> None:
    text = """<summary>
      <request>Speed up the importer</request>
      <investigated>profiled &amp; read loader.py</investigated>
      <learned>JSON parsing dominated</learned>
      <completed>Switched to msgspec</completed>
      <next_steps>Benchmark big files</next_steps>
      <notes/>
    </summary>"""
    parsed = parse_response(text)
    assert parsed.kind == "summary"
    assert parsed.summary is not None
    assert parsed.summary.request == "Speed up the importer"
    assert parsed.summary.investigated == "profiled & read loader.py"
    assert parsed.summary.next_steps == "Benchmark big files"
    assert parsed.summary.notes == ""


def test_summary_with_only_notes_is_invalid() -> None:
    parsed = parse_response("<summary><notes>n</notes><request> </request></summary>")
    assert parsed.kind == "summary"
    assert parsed.summary is None


def test_unclosed_summary_is_read_to_the_end() -> None:
    parsed = parse_response("<summary><request>r</request><learned>cut off her")
    assert parsed.summary is not None
    assert parsed.summary.request == "r"
    assert parsed.summary.learned == ""


def test_skip_summary_reason() -> None:
    parsed = parse_response('<skip_summary reason="nothing &amp; done"/>')
    assert (parsed.kind, parsed.skip_reason, parsed.summary) == (
        "skip_summary",
        "nothing & done",
        None,
    )
    assert parse_response("<skip_summary reason='x'>").skip_reason == "x"
    assert parse_response("<skip_summary/>").skip_reason == ""


@pytest.mark.parametrize("text", ["", "   \n\t", None, 42])
def test_blank_or_non_text_is_empty(text: object) -> None:
    parsed = parse_response(text)
    assert parsed.kind == "empty"
    assert parsed.observations == []


def test_bytes_are_decoded() -> None:
    assert parse_response(GOOD.encode()).observations[0].type == "bugfix"


@pytest.mark.parametrize("text", ["<skip/>", "  <skip />\n", "<SKIP/>"])
def test_skip(text: str) -> None:
    assert parse_response(text).kind == "skip"


@pytest.mark.parametrize(
    "text",
    [
        "Nothing to record here, the agent only listed a folder.",
        "<foo>bar</foo>",
        "Skipping.",
        "<observations_list>no</observations_list>",
    ],
)
def test_prose(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.kind == "prose"
    assert parsed.observations == []
    assert parsed.error is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Claude AI usage limit reached|1767225600", "quota"),
        ("Your credit balance is too low to access the Anthropic API.", "quota"),
        ("You exceeded your current quota, please check your plan and billing details.", "quota"),
        ("API Error: 401 Unauthorized", "auth"),
        ("Invalid API key · Please run /login", "auth"),
        ("Failed to authenticate. API Error: 401", "auth"),
        ("OAuth token has expired", "auth"),
        ("API Error: 429 Too Many Requests", "rate_limit"),
    ],
)
def test_failure_prose_is_classified(text: str, kind: str) -> None:
    parsed = parse_response(text)
    assert parsed.kind == "prose"
    assert parsed.error is not None
    assert parsed.error.kind == kind


def test_long_prose_is_never_an_error() -> None:
    text = "The agent fixed the Invalid API key error in the client. " * 40
    assert prose_error(text) is None
    assert parse_response(text).error is None


def test_malformed_replies_are_best_effort() -> None:
    cases = [
        "<observation><title>unclosed title",
        "<observation><title>kept</title><facts><fact>a</fact><fact>cut",
        "<observation>< title>x</title></observation>",
        "<<<<>>>></observation><observation",
        "<observation><title>t</titl></observation>",
        "\x00\xff<observation>\ud800<title>t</title>",
        "</observation></observation><observation attr",
    ]
    for text in cases:
        parsed = parse_response(text)
        assert parsed.kind in ("observations", "prose")
    [obs] = parse_response(cases[1]).observations
    assert (obs.title, obs.facts) == ("kept", ["a"])
    assert parse_response(cases[0]).observations == []


def test_trailing_unclosed_observation_is_read() -> None:
    parsed = parse_response(GOOD + "\n<observation><title>truncated one</title><narrative>cut")
    assert [o.title for o in parsed.observations] == [
        "Fixed the token refresh race",
        "truncated one",
    ]


def entities(n: int) -> str:
    """5n bare ampersands, then a title of n escaped ones."""
    return "&" * (5 * n) + "<observation><title>" + "&amp;" * n + "</title></observation>"


def big_fields(n: int) -> str:
    """One observation whose title and narrative are n characters each."""
    return f"<observation><title>{'y' * n}</title><narrative>{'y' * n}</narrative></observation>"


# id, input of size n, n (1-10 MB)
HOSTILE: list[tuple[str, Callable[[int], str], int]] = [
    ("openers", repeat("<observation>"), 100_000),
    ("openers and titles", repeat("<observation><title>"), 100_000),
    ("openers without '>'", repeat("<observation "), 100_000),
    ("summary of requests", repeat("<request>", prefix="<summary>"), 100_000),
    ("10 MB of text", repeat("x"), 10_000_000),
    ("unclosed facts", repeat("<fact>", prefix="<observation><facts>"), 500_000),
    ("many observations", repeat("<observation><title>t</title></observation>"), 200_000),
    ("ampersands", entities, 1_000_000),
    ("backticks", repeat("`", prefix="```\n"), 5_000_000),
    ("skip reasons", repeat('reason="', prefix='<skip_summary reason="'), 500_000),
]


@pytest.mark.parametrize(("make", "n"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE])
def test_hostile_input_is_linear(make: Callable[[int], str], n: int) -> None:
    assert_linear(parse_response, make, n, runs=2)


def test_ten_megabytes_of_observations_are_capped() -> None:
    block = GOOD + "\n"
    parsed = assert_linear(parse_response, repeat(block), 10_000_000 // len(block), runs=2)
    assert len(parsed.observations) == MAX_OBSERVATIONS


def test_ten_megabyte_fields() -> None:
    parsed = assert_linear(parse_response, big_fields, 10_000_000, runs=2)
    [obs] = parsed.observations
    assert len(obs.title) == len(obs.narrative) == 10_000_000


def covering(calls: str) -> str:
    return f"<observation><tool_calls>{calls}</tool_calls><title>t</title></observation>"


@pytest.mark.parametrize(
    ("calls", "ids"),
    [
        ("1, 3", [10, 30]),
        ("2-4", [20, 30, 40]),
        ("4, 1..2, 1", [10, 20, 40]),
        ("call 3 and call 2", [20, 30]),
        ("", [10, 20, 30, 40]),  # none named: the whole batch
        ("7, 0", [10, 20, 30, 40]),  # none that exist
        ("2, 9", [20]),
        ("1-99999999", [10, 20, 30, 40]),  # a range no batch has
    ],
)
def test_tool_call_numbers_map_to_row_ids(calls: str, ids: list[int]) -> None:
    [draft] = parse_response(covering(calls), [10, 20, 30, 40]).observations
    assert draft.source_event_ids == ids


def test_each_observation_keeps_its_own_calls() -> None:
    reply = covering("1, 2") + covering("3") + "<observation><title>chat</title></observation>"
    drafts = parse_response(reply, [5, 6, 7]).observations
    assert [d.source_event_ids for d in drafts] == [[5, 6], [7], [5, 6, 7]]
    assert [d.source_event_ids for d in parse_response(reply).observations] == [[], [], []]
    assert "tool_calls" not in drafts[0].title
