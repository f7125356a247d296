"""A page's language (trawl.extract.language, and through parse_html)."""

from __future__ import annotations

import pytest

from trawl.extract.html import parse_html
from trawl.extract.language import MIN_WORDS_TO_DETECT, detect_language, normalise_tag

PAGE = "https://example.com/"

ENGLISH = (
    "The quick brown fox jumps over the lazy dog while the farmer watches from the porch "
    "and drinks his morning coffee before the long day in the fields begins."
)
DANISH = (
    "Det er en smuk dag i København, og vi skal ud at cykle langs havnen sammen med vores "
    "venner og familie i eftermiddag, hvis det ikke begynder at regne igen."
)
GERMAN = (
    "Heute ist ein schöner Tag in Berlin, und wir fahren mit dem Fahrrad an der Spree "
    "entlang, zusammen mit unseren Freunden und der ganzen Familie."
)


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("da-DK", "da"),
        ("en_US", "en"),
        ("EN", "en"),
        ("de", "de"),
        ("  fr-CA  ", "fr"),
        ("zh-Hant-TW", "zh"),
        ("fil", "fil"),
        ("da, en;q=0.8", "da"),
        ("", None),
        (None, None),
        ("x-klingon", None),
        ("english", None),
        ("*", None),
        ("e", None),
    ],
)
def test_normalise_tag(tag: str | None, expected: str | None) -> None:
    assert normalise_tag(tag) == expected


def test_html_lang_wins() -> None:
    assert detect_language("da-DK", "de", ENGLISH) == "da"


def test_content_language_when_html_lang_is_missing_or_unusable() -> None:
    assert detect_language(None, "de-AT", ENGLISH) == "de"
    assert detect_language("", "de-AT", ENGLISH) == "de"
    assert detect_language("nonsense-value!", "de-AT", ENGLISH) == "de"


@pytest.mark.parametrize(("text", "expected"), [(ENGLISH, "en"), (DANISH, "da"), (GERMAN, "de")])
def test_detection_from_text(text: str, expected: str) -> None:
    assert detect_language(None, None, text) == expected


@pytest.mark.parametrize("text", ["", "Hello", "Hello world", "one two three four"])
def test_too_short_text_is_not_detected(text: str) -> None:
    assert len(text.split()) < MIN_WORDS_TO_DETECT
    assert detect_language(None, None, text) is None


def test_detection_starts_at_the_minimum_word_count() -> None:
    text = "the house is very big"
    assert len(text.split()) == MIN_WORDS_TO_DETECT
    assert detect_language(None, None, text) is not None


# -- through parse_html ---------------------------------------------------------------


def test_html_lang_attribute() -> None:
    page = parse_html(b"<html lang='da-DK'><body><p>hi</p></body></html>", PAGE)
    assert page.lang == "da"


def test_html_lang_with_underscore() -> None:
    page = parse_html(b"<html lang='en_US'><body><p>hi</p></body></html>", PAGE)
    assert page.lang == "en"


def test_html_lang_wins_over_the_header_and_the_text() -> None:
    body = f"<html lang='da'><body><p>{ENGLISH}</p></body></html>".encode()
    assert parse_html(body, PAGE, content_language="de").lang == "da"


def test_content_language_header() -> None:
    page = parse_html(b"<html><body><p>hi</p></body></html>", PAGE, content_language="de-DE")
    assert page.lang == "de"


@pytest.mark.parametrize(("text", "expected"), [(ENGLISH, "en"), (DANISH, "da"), (GERMAN, "de")])
def test_detected_from_the_page_text(text: str, expected: str) -> None:
    body = f"<html><head><title>x</title></head><body><p>{text}</p></body></html>".encode()
    assert parse_html(body, PAGE).lang == expected


def test_detection_ignores_script_text() -> None:
    body = (
        "<html><body><script>" + " ".join(["var"] * 50) + f"</script><p>{GERMAN}</p></body></html>"
    ).encode()
    assert parse_html(body, PAGE).lang == "de"


def test_too_short_page_has_no_language() -> None:
    assert parse_html(b"<html><body><p>Hi there</p></body></html>", PAGE).lang is None
