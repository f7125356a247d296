"""From typed text to the words the index is asked for (trawl.search.query)."""

from __future__ import annotations

import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from trawl.errors import QueryError
from trawl.search import query as query_module
from trawl.search.query import MAX_DEPTH, MAX_QUERY_CHARS, MAX_WORDS, Or, parse_query


def test_words_are_lower_cased() -> None:
    assert parse_query("Hello WORLD").words == ("hello", "world")


def test_text_is_kept_as_typed_but_trimmed() -> None:
    query = parse_query("  Hello WORLD \n")
    assert query.text == "Hello WORLD"


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("AND OR NOT", ("and", "or", "not")),
        # OR and AND are operators, -minus an exclusion: not words to look for
        ('title:"exact phrase" -minus +plus', ("title", "exact", "phrase", "plus")),
        (
            "(a OR b) AND [c TO d] {e} ^2 ~3 * ? \\ / :",
            ("a", "b", "c", "to", "d", "e", "2", "3"),
        ),
        ("C++ and C#", ("c", "and", "c")),
        ("snake_case", ("snake", "case")),
        ("e-mail o'clock 3.14", ("e", "mail", "o", "clock", "3", "14")),
        ("<script>alert(1)</script>", ("script", "alert", "1", "script")),
    ],
)
def test_punctuation_and_operators_only_separate_words(typed: str, words: tuple[str, ...]) -> None:
    assert parse_query(typed).words == words


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("Æblegrød PÅ Ærø", ("æblegrød", "på", "ærø")),
        ("Straße", ("straße",)),
        ("日本語 テスト", ("日本語", "テスト")),
        ("a1 B2 3c", ("a1", "b2", "3c")),
    ],
)
def test_unicode_letters_and_digits_make_words(typed: str, words: tuple[str, ...]) -> None:
    assert parse_query(typed).words == words


@pytest.mark.parametrize("typed", ["", "   ", "!!! ??? ---", '"" () :'])
def test_queries_without_words_are_empty(typed: str) -> None:
    query = parse_query(typed)
    assert query.words == ()
    assert query.empty


def test_a_query_with_words_is_not_empty() -> None:
    assert not parse_query("x").empty


def test_at_most_max_words_are_kept() -> None:
    words = [f"w{i}" for i in range(MAX_WORDS + 10)]
    query = parse_query(" ".join(words))
    assert query.words == tuple(words[:MAX_WORDS])


def test_query_at_the_length_limit_is_accepted() -> None:
    assert parse_query("x" * MAX_QUERY_CHARS).words == ("x" * MAX_QUERY_CHARS,)


def test_over_long_query_raises_query_error() -> None:
    with pytest.raises(QueryError, match=str(MAX_QUERY_CHARS)):
        parse_query("x" * (MAX_QUERY_CHARS + 1))


@pytest.mark.parametrize(
    "typed",
    [
        "(" * (MAX_DEPTH + 1) + "heron" + ")" * (MAX_DEPTH + 1),
        "(" * 330 + "heron" + ")" * 330,
        "(" * 995 + "heron",
        "(-" * 330 + "heron",
    ],
)
def test_groups_nested_too_deep_are_read_as_words(typed: str) -> None:
    query = parse_query(typed)
    assert query.fallback and query.words == ("heron",)


def test_groups_nested_up_to_the_cap_keep_their_operators() -> None:
    query = parse_query("(" * MAX_DEPTH + "heron OR egret" + ")" * MAX_DEPTH)
    assert not query.fallback and isinstance(query.expr, Or)


@given(st.text(max_size=MAX_QUERY_CHARS))
def test_no_input_within_the_limit_is_an_error(typed: str) -> None:
    query = parse_query(typed)
    assert len(query.words) <= MAX_WORDS
    for word in query.words:
        assert word
        assert word == word.lower()
        assert not any(ch.isspace() or ch in string.punctuation for ch in word)


def test_compound_words_bring_their_other_spellings() -> None:
    for syntax in (True, False):
        parsed = parse_query("IL-6 and TNF2 levels", syntax=syntax)
        assert parsed.words == ("il", "6", "and", "tnf2", "levels")
        assert parsed.variants == ("il6", "tnf", "2")


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("--cap-lints", ("cap", "lints")),  # a long flag
        ("rustc --cap-lints warn", ("rustc", "cap", "lints", "warn")),
        ("than make -j allows", ("than", "make", "j", "allows")),  # a one-letter flag
        ("below -1 degrees", ("below", "1", "degrees")),  # a negative number
        ("-java -python", ("java", "python")),  # exclusions alone: nothing to exclude from
        ("cap-lints x86_64-unknown", ("cap", "lints", "x86", "64", "unknown")),
    ],
)
def test_flags_and_lone_exclusions_are_words(typed: str, words: tuple[str, ...]) -> None:
    query = parse_query(typed)
    assert query.words == words
    assert query.plain  # the cascade relaxes them like any word query


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("coffee -java", ("coffee",)),
        ('coffee -"java beans"', ("coffee",)),
        ("coffee -java-script", ("coffee",)),
        ("site:a.org -java", ()),  # a filter to exclude from: still an exclusion
    ],
)
def test_a_minus_before_a_word_still_excludes(typed: str, words: tuple[str, ...]) -> None:
    query = parse_query(typed)
    assert query.words == words
    assert query.expr is not None and not query.plain


def test_excluded_and_quoted_words_bring_no_spellings() -> None:
    assert parse_query('"IL-6 receptor" -covid-19 h1n1').variants == ("h", "1", "n", "1")


# Words, compounds, the operators' own characters and the whitespace the parser splits on.
_QUERYISH = st.lists(
    st.sampled_from(
        [
            *("il-6", "IL6", "covid-19", "Kärlek", "word", "AND", "OR", "and", "-", "--x"),
            *('"', "(", ")", ":", "site:a.org", "lang:da", "a/b", "x_y", "+", "3.14"),
            *(" ", "\t", "\u00a0"),
        ]
    ),
    max_size=12,
).map("".join)


@given(st.one_of(_QUERYISH, st.text(max_size=60)))
@example("IL6 levels in il-6 knockout mice")  # a split spelling before a joined one
def test_plain_words_read_without_the_parser_as_the_parser_reads_them(typed: str) -> None:
    # parse_query skips the parser when nothing in the text could be an operator.
    assert parse_query(typed) == query_module._parse_operators(typed)


def test_plain_word_shortcut_is_taken_only_without_operators() -> None:
    assert query_module._SYNTAX.search("dna repair in il-6 cells") is None
    for typed in ('"dna repair"', "dna -repair", "dna OR rna", "(dna)", "site:a.org dna"):
        assert query_module._SYNTAX.search(typed) is not None
