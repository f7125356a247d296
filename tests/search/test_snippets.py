"""Snippets as safe HTML (trawl.search.snippets)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trawl.search.snippets import lead, mark, strip_marks


def test_mark_wraps_ranges() -> None:
    assert mark("hello big world", ((0, 5), (10, 15))) == (
        "<mark>hello</mark> big <mark>world</mark>"
    )


def test_mark_sorts_ranges() -> None:
    assert mark("hello world", ((6, 11), (0, 5))) == "<mark>hello</mark> <mark>world</mark>"


def test_mark_escapes_html_inside_and_outside_marks() -> None:
    assert mark("<b>x</b> & \"y\" 'z'", ((0, 3), (9, 10))) == (
        "<mark>&lt;b&gt;</mark>x&lt;/b&gt; <mark>&amp;</mark> &quot;y&quot; &#x27;z&#x27;"
    )


def test_mark_without_ranges_only_escapes() -> None:
    assert mark("a < b", ()) == "a &lt; b"


def test_overlapping_ranges_keep_the_first() -> None:
    assert mark("hello world", ((0, 5), (3, 8))) == "<mark>hello</mark> world"


def test_ranges_with_the_same_start_keep_the_shorter() -> None:
    # Sorted, (0, 3) comes before (0, 5); the overlapping one is dropped.
    assert mark("hello world", ((0, 5), (0, 3))) == "<mark>hel</mark>lo world"


def test_adjacent_ranges_are_both_marked() -> None:
    assert mark("abcd", ((0, 2), (2, 4))) == "<mark>ab</mark><mark>cd</mark>"


def test_marks_never_nest() -> None:
    html = mark("one two three", ((0, 7), (4, 13), (2, 5)))
    assert html.count("<mark>") == html.count("</mark>") == 1


def test_script_cannot_escape_a_snippet() -> None:
    html = mark("<script>alert(1)</script>", ((8, 13),))
    assert "<script>" not in html
    assert html == "&lt;script&gt;<mark>alert</mark>(1)&lt;/script&gt;"


@st.composite
def fragment_and_ranges(draw: st.DrawFn) -> tuple[str, tuple[tuple[int, int], ...]]:
    text = draw(st.text(max_size=60))
    n = len(text)
    pairs = draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=6))
    return text, tuple((min(a, b), max(a, b)) for a, b in pairs)


@given(fragment_and_ranges())
def test_mark_loses_no_text(case: tuple[str, tuple[tuple[int, int], ...]]) -> None:
    text, ranges = case
    html = mark(text, ranges)
    assert strip_marks(html) == text
    stripped = html.replace("<mark>", "").replace("</mark>", "")
    assert "<" not in stripped
    assert ">" not in stripped


def test_strip_marks() -> None:
    assert strip_marks("<mark>a</mark> &lt;b&gt; &amp; c") == "a <b> & c"


def test_lead_returns_short_text_whole() -> None:
    assert lead("short text", 20) == "short text"
    assert lead("exactly ten", 11) == "exactly ten"


def test_lead_cuts_at_a_word_boundary() -> None:
    assert lead("hello wonderful world", 12) == "hello …"
    assert lead("hello wonderful world", 17) == "hello wonderful …"


def test_lead_escapes() -> None:
    assert lead("a <b> c & d", 100) == "a &lt;b&gt; c &amp; d"
    assert lead("<a> <b> <c>", 8) == "&lt;a&gt; &lt;b&gt; …"


def test_lead_of_one_long_word_cuts_inside_it() -> None:
    assert lead("abcdefghij", 4) == "abcd …"


def test_lead_keeps_a_word_that_ends_exactly_at_the_limit() -> None:
    assert lead("hello world again", 11) == "hello world …"


@given(st.text(alphabet="ab <&>", max_size=80), st.integers(1, 100))
def test_lead_never_grows_past_limit_plus_ellipsis(text: str, limit: int) -> None:
    out = strip_marks(lead(text, limit))  # unescape
    if len(text) <= limit:
        assert out == text
    else:
        assert out.endswith(" …")
        kept = out[: -len(" …")]
        assert text.startswith(kept)
        assert len(kept) <= limit
