"""Snippets as safe HTML (trawl.search.snippets)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from trawl.search.snippets import fold_same_length, lead, mark, snippet, strip_marks, window


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


# The window, its ends and its alignment (trawl.search.snippets.snippet and window).


def _plain_stem(word: str) -> str:
    return word[:-1] if word.endswith("s") else word


def test_window_is_the_one_holding_the_most_distinct_terms() -> None:
    # "alpha" alone at the start; "alpha" and "beta" together far later: the later window wins.
    text = "alpha " + "filler " * 40 + "then alpha and beta together " + "filler " * 40
    fragment, ranges, start = window(text, frozenset({"alpha", "beta"}), _plain_stem, 60)
    assert start > 0
    marked = {fragment[s:e] for s, e in ranges}
    assert marked == {"alpha", "beta"}


def test_windows_sharing_what_they_learnt_stem_each_word_once() -> None:
    # A results page's snippets look for the same terms: a word met in one hit is not
    # stemmed again for the next, and each window marks what it would alone.
    stemmed: list[str] = []

    def stem(word: str) -> str:
        stemmed.append(word)
        return _plain_stem(word)

    terms = frozenset({"alpha", "beta"})
    texts = ["alphas and betas and alphabet", "betas then alphas, alphabet soup"]
    known: dict[str, str | None] = {}
    shared = [window(text, terms, stem, 60, known) for text in texts]
    assert sorted(stemmed) == ["alphabet", "alphas", "betas"]
    assert shared == [window(text, terms, _plain_stem, 60) for text in texts]


def test_highlights_stay_aligned_after_a_character_whose_lower_case_is_longer() -> None:
    # "İ".lower() is two characters: folding the lowered text shifted every later offset.
    text = "İİİİ İstanbul and the vacuum command"
    html = snippet(text, frozenset({"vacuum"}), _plain_stem, 200)
    assert "<mark>vacuum</mark>" in html
    html = snippet("İzmir İzmir vacuum", frozenset({"izmir", "vacuum"}), _plain_stem, 200)
    assert html == "<mark>İzmir</mark> <mark>İzmir</mark> <mark>vacuum</mark>"


def test_fold_same_length_keeps_every_offset() -> None:
    for text in ("İstanbul", "Straße ﬁle Æther", "naïve café", "ǅemal", "plain"):
        assert len(fold_same_length(text)) == len(text)
    assert fold_same_length("Naïve CAFÉ") == "naive cafe"


@given(st.text(max_size=80))
def test_fold_same_length_never_changes_the_length(text: str) -> None:
    assert len(fold_same_length(text)) == len(text)


def test_a_cut_snippet_begins_and_ends_with_an_ellipsis() -> None:
    text = "filler " * 50 + "the vacuum command reclaims storage " + "filler " * 50
    html = snippet(text, frozenset({"vacuum"}), _plain_stem, 60)
    assert html.startswith("… ")
    assert html.endswith(" …")
    whole = snippet("the vacuum command", frozenset({"vacuum"}), _plain_stem, 60)
    assert whole == "the <mark>vacuum</mark> command"


def test_a_snippet_never_repeats_the_title() -> None:
    text = "VACUUM VACUUM — garbage-collect and optionally analyze a database"
    html = snippet(text, frozenset({"garbag"}), _plain_stem, 200, skip="VACUUM")
    assert strip_marks(html).startswith("VACUUM — garbage-collect")
    assert not strip_marks(html).startswith("VACUUM VACUUM")
    # A longer word beginning with the title is not the title.
    assert snippet("VACUUMING daily", frozenset(), _plain_stem, 200, skip="VACUUM") == (
        "VACUUMING daily"
    )


def test_the_lead_of_a_page_without_matches_skips_the_title() -> None:
    assert snippet(
        "Joins Joins combine rows", frozenset({"zzz"}), _plain_stem, 200, skip="Joins"
    ) == ("Joins combine rows")


def test_matches_inside_words_are_not_marked() -> None:
    html = snippet("subtable table tables", frozenset({"table"}), _plain_stem, 200)
    assert html == "subtable <mark>table</mark> <mark>tables</mark>"


def _matches_by_bare_prefix(text: str, terms: frozenset[str]) -> list[tuple[int, int, str]]:
    """The matches ``window`` found before it looked at word starts only: each term's first
    four letters found anywhere, kept where no word character comes before (the reference
    its faster search must agree with)."""
    folded = fold_same_length(text)
    found: list[tuple[int, int, str]] = []
    for prefix in sorted({t[:4] for t in terms}):
        at = folded.find(prefix)
        while at != -1 and len(found) < 200:
            if at and (folded[at - 1].isalnum() or folded[at - 1] == "_"):
                at = folded.find(prefix, at + 1)
                continue
            end = re.compile(r"\w*").match(folded, at + len(prefix)).end()  # type: ignore[union-attr]
            word = folded[at:end]
            stemmed = _plain_stem(word)
            term = stemmed if stemmed in terms else word if word in terms else None
            if term is not None:
                found.append((at, end, term))
            at = folded.find(prefix, end)
    return sorted({f[0]: f for f in found}.values())[:200]


# Letters, digits and "_" (word characters), ASCII and other punctuation, word characters
# beyond ASCII (and "İ", two characters lower-cased), characters folded to several.
_MIXED = st.text(alphabet="ab tx_1.-()/'é \u03b1İ\u2013·½℃ß\n", max_size=120)


@given(
    _MIXED,
    st.lists(
        st.sampled_from(
            ["a", "ab", "tab", "tabs", "x1", "é", "1\u20442", "°c", "ss", "\u03b1", "_a", "ta_b"]
        ),
        max_size=5,
    ),
)
def test_window_finds_what_the_bare_prefix_search_found(text: str, chosen: list[str]) -> None:
    terms = frozenset(chosen)
    _, ranges, start = window(text, terms, _plain_stem, 10_000)
    expected = _matches_by_bare_prefix(text, terms)
    assert [(s + start, e + start) for s, e in ranges] == [(s, e) for s, e, _ in expected]


def test_a_one_letter_term_is_found_at_word_starts_only() -> None:
    # "t" (of a T cell) is in most words; only the word "t" and words stemming to it count.
    html = snippet("that tt t-cells (t) _t", frozenset({"t"}), _plain_stem, 200)
    assert html == "that tt <mark>t</mark>-cells (<mark>t</mark>) _t"
