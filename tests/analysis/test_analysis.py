"""Text -> terms per language (trawl.analysis): Snowball, Icelandic, folding, URL forms."""

from __future__ import annotations

import pytest

from trawl.analysis.icelandic import stem_icelandic
from trawl.analysis.lookup import concatenations
from trawl.analysis.stopwords import is_stop_word, stop_words
from trawl.analysis.text import (
    fold,
    language_code,
    stem_words,
    terms,
    terms_with_variants,
    variant_words,
    word_stemmer,
)


@pytest.mark.parametrize(
    ("lang", "forms"),
    [
        ("da", ["bilen", "bilerne", "biler", "bil"]),
        ("sv", ["hunden", "hundarna", "hundar", "hund"]),
        ("nb", ["boken", "bøkene", "bok"]),
        ("fi", ["talossa", "taloissa", "talo"]),
        ("en", ["running", "runs", "run"]),
        ("is", ["hestur", "hesti", "hestinum", "hestar"]),
    ],
)
def test_inflected_forms_share_a_term(lang: str, forms: list[str]) -> None:
    assert len({terms(f, lang)[0] for f in forms}) == 1, [terms(f, lang) for f in forms]


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("bókin", "bók"),
        ("bókinni", "bók"),
        ("kona", "kon"),
        ("konu", "kon"),
        ("hús", "hús"),  # too short to lose anything
        ("barn", "barn"),
    ],
)
def test_icelandic_stemmer(word: str, stem: str) -> None:
    assert stem_icelandic(word) == stem


def test_case_and_accents_fold_after_stemming() -> None:
    assert terms("Kärlek KÄRLEK karlek", "sv") == ["karlek"] * 3
    assert fold("æblegrød") == "aeblegrod"
    assert terms("Café", "fr") == terms("cafe", "fr")


@pytest.mark.parametrize("lang", ["en", "de-DE", "is", "xx", None])
def test_a_word_stemmer_stems_as_stem_words(lang: str | None) -> None:
    # Snippets stem one word at a time through it: the same terms the index holds.
    stem = word_stemmer(lang)
    for word in ["Running", "Häuser", "hestarnir", "Ærøskøbing", "x1"]:
        assert stem(word) == stem_words([word], lang)[0]


def test_languages_without_a_stemmer_are_only_folded() -> None:
    assert terms("Ελληνικά Straße 日本語", "ja") == ["ελληνικα", "strasse", "日本語"]


@pytest.mark.parametrize(("tag", "code"), [("da-DK", "da"), ("EN_us", "en"), ("", ""), (None, "")])
def test_language_code(tag: str | None, code: str) -> None:
    assert language_code(tag) == code


def test_concatenations_join_adjacent_words() -> None:
    forms = concatenations(["anne", "hathaway", "archive"])
    for expected in ("annehathaway", "anne-hathaway", "hathawayarchive", "annehathawayarchive"):
        assert expected in forms
    assert "annearchive" not in forms  # only neighbours are joined
    assert concatenations(["one"]) == []


@pytest.mark.parametrize(
    ("text", "variants"),
    [
        ("IL-6 receptor", ["il6"]),
        ("IL6 receptor", ["il", "6"]),
        ("the H1N1 virus", ["h", "1", "n", "1"]),
        ("covid-19", ["covid19"]),
        ("plain words only, 2024", []),
    ],
)
def test_compounds_get_their_other_spellings(text: str, variants: list[str]) -> None:
    assert variant_words(text) == variants


def test_a_hyphenated_and_a_joined_spelling_share_a_term() -> None:
    # What a page writes one way, a query may write another: each holds the other's term.
    assert set(terms("il6", "en")) <= set(terms_with_variants("IL-6 levels", "en"))
    assert set(terms("il 6", "en")) <= set(terms_with_variants("IL6 levels", "en"))


def test_stop_words_by_language() -> None:
    assert is_stop_word("The", ["en"])
    assert is_stop_word("och", ["en", "sv"])
    assert not is_stop_word("och", ["en"])
    assert not is_stop_word("curcumin", ["en", "da", "sv", "no", "fi"])
    assert stop_words("fi") == frozenset()  # no list: the index's counts decide alone
    assert not is_stop_word("the", [None])


@pytest.mark.parametrize(
    ("word", "lang"),
    [("could", "en"), ("might", "en"), ("whether", "en"), ("warum", "de"), ("pourquoi", "fr")],
)
def test_question_words_and_auxiliaries_are_stop_words(word: str, lang: str) -> None:
    # Snowball's lists leave them out; a question is about what follows them.
    assert is_stop_word(word, [lang])
    assert not is_stop_word("hedgehog", [lang])
