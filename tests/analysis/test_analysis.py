"""Text -> terms per language (trawl.analysis): Snowball, Icelandic, folding, URL forms."""

from __future__ import annotations

import pytest

from trawl.analysis.icelandic import stem_icelandic
from trawl.analysis.lookup import concatenations
from trawl.analysis.text import fold, language_code, terms


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
