"""Robots directives from meta tags and X-Robots-Tag headers (trawl.understand.directives)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trawl.understand.directives import Directives, parse_directives, robots_directives

TOKEN = "trawlbot"


def meta(*pairs: tuple[str, str]) -> Directives:
    return robots_directives(pairs, (), TOKEN)


def header(*values: str) -> Directives:
    return robots_directives((), [("X-Robots-Tag", v) for v in values], TOKEN)


def flags(d: Directives) -> tuple[bool, bool]:
    return d.noindex, d.nofollow


# (content, noindex, nofollow): values seen in the wild, in a <meta name="robots">.
CONTENT_CASES = [
    ("noindex", True, False),
    ("nofollow", False, True),
    ("noindex,follow", True, False),
    ("noindex, nofollow", True, True),
    ("NOINDEX, NOFOLLOW", True, True),
    ("NoIndex,NoFollow", True, True),
    ("noindex nofollow", True, True),  # whitespace separates as a comma does
    ("noindex;nofollow", True, True),
    ("  noindex  ,  ,nofollow ,", True, True),
    ("none", True, True),
    ("NONE", True, True),
    ("index, follow", False, False),
    ("index,follow", False, False),
    ("all", False, False),
    ("noarchive", False, False),
    ("nosnippet, noimageindex, notranslate", False, False),
    ("max-snippet:-1, max-image-preview:large, max-video-preview:-1", False, False),
    ("max-image-preview:none", False, False),
    ("max-image-preview: none", False, False),  # the value stays attached to its name
    ("max-image-preview : none", False, False),
    ("max-snippet: 0", False, False),
    ("unavailable_after: 25 Jun 2010 15:00:00 PST", False, False),
    ("unavailable_after: 2010-06-25T15:00:00Z, noindex", True, False),
    ("noindexing", False, False),  # whole tokens only
    ("no-index", False, False),
    ("nofollowers", False, False),
    ("nonesuch", False, False),
    ("index noindex", True, False),  # the restriction wins
    ("", False, False),
    ("   ", False, False),
    (",,,", False, False),
]


@pytest.mark.parametrize(("content", "noindex", "nofollow"), CONTENT_CASES)
def test_meta_robots_content(content: str, noindex: bool, nofollow: bool) -> None:
    assert flags(meta(("robots", content))) == (noindex, nofollow)


@pytest.mark.parametrize(("content", "noindex", "nofollow"), CONTENT_CASES)
def test_x_robots_tag_reads_the_same_values(content: str, noindex: bool, nofollow: bool) -> None:
    assert flags(header(content)) == (noindex, nofollow)


@pytest.mark.parametrize(
    ("name", "applies"),
    [
        ("robots", True),
        ("ROBOTS", True),
        (" Robots ", True),
        ("googlebot", True),
        ("Googlebot", True),
        ("trawlbot", True),  # our own product token
        ("TrawlBot", True),
        ("bingbot", False),
        ("googlebot-news", False),
        ("otherbot", False),
        ("description", False),
        ("", False),
    ],
)
def test_which_meta_names_apply(name: str, applies: bool) -> None:
    assert flags(meta((name, "noindex, nofollow"))) == (applies, applies)


def test_product_token_is_matched_case_insensitively_whatever_its_spelling() -> None:
    assert robots_directives([("trawlbot", "noindex")], (), "TrawlBot").noindex
    assert robots_directives([("TRAWLBOT", "noindex")], (), " trawlbot ").noindex


def test_empty_product_token_names_no_meta() -> None:
    assert not robots_directives([("", "noindex")], (), "").noindex


@pytest.mark.parametrize(
    ("value", "noindex", "nofollow"),
    [
        ("googlebot: noindex", True, False),
        ("googlebot:noindex", True, False),
        ("GOOGLEBOT: NOINDEX", True, False),
        ("trawlbot: noindex, nofollow", True, True),  # the prefix covers the whole list
        ("TrawlBot: none", True, True),
        ("otherbot: noindex", False, False),
        ("bingbot: noindex", False, False),
        ("otherbot: noindex, nofollow", False, False),
        ("googlebot-news: noindex", False, False),
        ("bingbot: noindex, googlebot: nofollow", False, True),  # each prefix to the next
        ("googlebot: noindex, bingbot: nofollow", True, False),
        ("nofollow, otherbot: noindex", False, True),
        ("noindex googlebot: nofollow", True, True),
        ("otherbot: noindex trawlbot: nofollow", False, True),
        ("googlebot: unavailable_after: 25 Jun 2010 15:00:00 PST", False, False),
        ("googlebot: max-image-preview: none", False, False),
        ("otherbot: max-snippet: 5, noindex", False, False),
        ("robots: noindex", True, False),
    ],
)
def test_bot_prefixed_x_robots_tag(value: str, noindex: bool, nofollow: bool) -> None:
    assert flags(header(value)) == (noindex, nofollow)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "unavailable_after: 25 Jun 2010 15:00:00 PST",
            ["unavailable_after:25 jun 2010 15:00:00 pst"],
        ),
        (
            "unavailable_after: 2010-06-25T15:00:00+01:00, noindex",
            ["unavailable_after:2010-06-25t15:00:00+01:00", "noindex"],
        ),
        (
            # An RFC 850 date has a comma of its own: it must not end the date.
            "unavailable_after: Friday, 25-Jun-10 15:00:00 GMT, nofollow",
            ["unavailable_after:friday, 25-jun-10 15:00:00 gmt", "nofollow"],
        ),
        (
            "noimageindex, unavailable_after: Fri, 25 Jun 2010 15:00:00 GMT",
            ["noimageindex", "unavailable_after:fri, 25 jun 2010 15:00:00 gmt"],
        ),
        ("max-snippet:-1, max-image-preview:large", ["max-snippet:-1", "max-image-preview:large"]),
        ("max-image-preview: none noindex", ["max-image-preview:none", "noindex"]),
        ("Max-Image-Preview:NONE", ["max-image-preview:none"]),
        ("noindex, NoIndex", ["noindex", "noindex"]),
        ("noindex, <junk>!, follow", ["noindex", "follow"]),
    ],
)
def test_values_are_parsed_with_their_names(value: str, expected: list[str]) -> None:
    assert [d for _, d in parse_directives(value)] == expected


def test_unavailable_after_with_colons_does_not_start_a_bot_scope() -> None:
    parsed = parse_directives("unavailable_after: 25 Jun 2010 15:00:00 PST, noindex")
    assert parsed[-1] == (None, "noindex")
    assert header("unavailable_after: 25 Jun 2010 15:00:00 PST, noindex").noindex


def test_each_header_starts_unscoped() -> None:
    # A bot prefix in one header does not reach into the next.
    assert header("otherbot: nofollow", "noindex").noindex


@pytest.mark.parametrize(
    ("headers", "noindex", "nofollow"),
    [
        (["index", "noindex"], True, False),
        (["noindex", "index, follow"], True, False),
        (["nofollow", "noarchive"], False, True),
        (["max-image-preview:none", "max-snippet:-1"], False, False),
        (["otherbot: noindex", "googlebot: nofollow"], False, True),
        (["all", "none"], True, True),
    ],
)
def test_repeated_x_robots_tag_headers_are_combined(
    headers: list[str], noindex: bool, nofollow: bool
) -> None:
    assert flags(header(*headers)) == (noindex, nofollow)


@pytest.mark.parametrize("name", ["X-Robots-Tag", "x-robots-tag", "X-ROBOTS-TAG", " x-robots-tag"])
def test_header_name_is_case_insensitive(name: str) -> None:
    assert robots_directives((), [(name, "noindex")], TOKEN).noindex


@pytest.mark.parametrize("name", ["X-Robots", "Robots", "X-Robots-Tags", "Content-Type"])
def test_other_headers_are_ignored(name: str) -> None:
    assert not robots_directives((), [(name, "noindex")], TOKEN).noindex


def test_repeated_meta_tags_are_combined_and_the_restriction_wins() -> None:
    d = meta(("robots", "index, follow"), ("robots", "noindex"))
    assert flags(d) == (True, False)
    d = meta(("robots", "noindex"), ("googlebot", "index"))
    assert flags(d) == (True, False)


def test_meta_and_header_are_combined() -> None:
    d = robots_directives(
        [("robots", "nofollow")],
        [("Content-Type", "text/html"), ("X-Robots-Tag", "noindex")],
        TOKEN,
    )
    assert flags(d) == (True, True)
    assert d.values == ("nofollow", "noindex")
    assert d.sources == ("meta robots", "X-Robots-Tag")


def test_values_are_every_applied_directive_once_in_order() -> None:
    d = robots_directives(
        [("robots", "index, max-image-preview: none"), ("bingbot", "noarchive")],
        [("X-Robots-Tag", "NOINDEX, index"), ("X-Robots-Tag", "otherbot: nosnippet")],
        TOKEN,
    )
    assert d.values == ("index", "max-image-preview:none", "noindex")


def test_sources_name_only_where_restrictions_came_from() -> None:
    d = robots_directives(
        [("robots", "index, follow"), ("googlebot", "none"), ("TrawlBot", "nofollow")],
        [("X-Robots-Tag", "max-snippet:-1"), ("X-Robots-Tag", "noarchive")],
        TOKEN,
    )
    assert d.sources == ("meta googlebot", "meta trawlbot")


def test_no_directives_at_all() -> None:
    assert robots_directives((), (), TOKEN) == Directives(
        noindex=False, nofollow=False, values=(), sources=()
    )


def test_max_image_preview_none_everywhere_is_still_indexable() -> None:
    d = robots_directives(
        [("robots", "max-image-preview:none")],
        [
            ("X-Robots-Tag", "max-image-preview: none"),
            ("X-Robots-Tag", "googlebot: max-video-preview: none"),
        ],
        TOKEN,
    )
    assert flags(d) == (False, False)
    assert d.sources == ()
    assert d.values == ("max-image-preview:none", "max-video-preview:none")


@given(
    st.lists(st.tuples(st.text(max_size=20), st.text(max_size=80)), max_size=4),
    st.lists(
        st.tuples(st.sampled_from(["X-Robots-Tag", "x-robots-tag", "Other"]), st.text()), max_size=4
    ),
    st.text(max_size=20),
)
def test_never_raises_on_arbitrary_text(
    meta_pairs: list[tuple[str, str]], headers: list[tuple[str, str]], token: str
) -> None:
    d = robots_directives(meta_pairs, headers, token)
    assert d.noindex == any(v in {"noindex", "none"} for v in d.values)
    assert d.nofollow == any(v in {"nofollow", "none"} for v in d.values)


ALPHABET = st.sampled_from(
    [
        "noindex",
        "none",
        "nofollow",
        "index",
        ":",
        ",",
        ";",
        " ",
        "\t",
        "googlebot",
        "otherbot",
        "max-image-preview",
        "unavailable_after",
        "friday",
        "25",
        "-",
        "x",
    ]
)


@given(st.lists(ALPHABET, max_size=30).map("".join))
def test_never_raises_on_directive_like_text(value: str) -> None:
    robots_directives([("robots", value)], [("X-Robots-Tag", value)], TOKEN)
    for _, directive in parse_directives(value):
        assert directive == directive.strip().lower()
        assert directive
