"""What a response means for the index (trawl.understand.response)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from trawl.records import CrawlUrl, FetchResult, Link, ParsedPage
from trawl.understand.response import understand_page, understand_response

ITEM = CrawlUrl("https://example.com/docs/page.html", depth=3, source="https://example.com/")


def result(status: int, *headers: tuple[str, str]) -> FetchResult:
    return FetchResult(url=ITEM.url, status=status, headers=headers, fetched_at=1_700_000_000.0)


HTML = ("Content-Type", "text/html; charset=utf-8")


def test_200_html_is_indexable() -> None:
    record, follow = understand_response(ITEM, result(200, HTML))
    assert record.indexable is True
    assert record.error is None
    assert record.redirect_to is None
    assert follow == []


def test_record_carries_what_the_fetch_said() -> None:
    record, _ = understand_response(ITEM, result(200, HTML))
    assert record.url == ITEM.url
    assert record.host == "example.com"
    assert record.status == 200
    assert record.depth == 3
    assert record.fetched_at == 1_700_000_000.0
    assert record.content_type == "text/html"


@pytest.mark.parametrize(
    "content_type", ["text/html", "TEXT/HTML; charset=latin-1", "application/xhtml+xml"]
)
def test_html_media_types_are_indexable(content_type: str) -> None:
    record, _ = understand_response(ITEM, result(200, ("content-type", content_type)))
    assert record.indexable is True


@pytest.mark.parametrize(
    "content_type", ["application/pdf", "image/png", "text/plain", "application/json", ""]
)
def test_non_html_200_is_not_indexable(content_type: str) -> None:
    headers = (("Content-Type", content_type),) if content_type else ()
    record, follow = understand_response(ITEM, result(200, *headers))
    assert record.indexable is False
    assert record.error is None
    assert follow == []


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_with_relative_location(status: int) -> None:
    record, follow = understand_response(
        ITEM, result(status, ("Location", "../guide/?utm_source=x&b=2&a=1#top"))
    )
    target = "https://example.com/guide/?a=1&b=2"
    assert record.redirect_to == target
    assert [h.url for h in follow] == [target]
    assert record.indexable is False
    assert record.error is None


def test_redirect_with_absolute_location_is_normalised() -> None:
    record, follow = understand_response(ITEM, result(301, ("location", "HTTPS://Example.COM:443")))
    assert record.redirect_to == "https://example.com/"
    assert [h.url for h in follow] == ["https://example.com/"]


def test_redirect_to_another_host_is_reported_too() -> None:
    # Scope is the crawler's business; understanding only resolves the target.
    _, follow = understand_response(ITEM, result(302, ("Location", "//other.org/x")))
    assert [h.url for h in follow] == ["https://other.org/x"]


@pytest.mark.parametrize(
    "location",
    [
        "mailto:webmaster@example.com",
        "javascript:alert(1)",
        "ftp://example.com/file",
        "https://user:secret@example.com/",
        "http://example.com:99999/",
        "http://[::1/",
    ],
)
def test_unusable_location(location: str) -> None:
    record, follow = understand_response(ITEM, result(302, ("Location", location)))
    assert follow == []
    assert record.redirect_to is None
    assert record.indexable is False
    assert record.error is not None
    assert record.error.startswith("unusable redirect")


def test_credentials_in_location_are_not_leaked_into_the_error() -> None:
    record, _ = understand_response(
        ITEM, result(302, ("Location", "https://user:hunter2@example.com/"))
    )
    assert record.error is not None
    assert "hunter2" not in record.error


def test_location_outside_3xx_is_ignored() -> None:
    record, follow = understand_response(ITEM, result(200, HTML, ("Location", "/elsewhere")))
    assert record.redirect_to is None
    assert record.indexable is True
    assert follow == []


def test_3xx_without_location_is_not_indexable() -> None:
    record, follow = understand_response(ITEM, result(301, HTML))
    assert record.indexable is False
    assert record.redirect_to is None
    assert follow == []


@pytest.mark.parametrize("status", [400, 403, 404, 410, 429, 500, 502, 503])
def test_error_statuses_are_not_indexable(status: int) -> None:
    record, follow = understand_response(ITEM, result(status, HTML))
    assert record.indexable is False
    assert record.error == f"HTTP {status}"
    assert follow == []


def parsed_page(**changes: Any) -> ParsedPage:
    page = ParsedPage(
        title="T",
        description="D",
        h1=("H1",),
        h2=("H2a", "H2b"),
        text="some words here",
        lang="en",
        word_count=3,
        links=(Link("https://example.com/a?page=2", "next"), Link("https://example.com/b", "b")),
    )
    return replace(page, **changes)


def test_understand_page_copies_the_parsed_page() -> None:
    record, _ = understand_response(ITEM, result(200, HTML))
    parsed = parsed_page(quality=0.42)  # scored by the parse stage
    full, follow = understand_page(record, parsed, result(200, HTML), "trawlbot")
    assert (full.title, full.description, full.text, full.lang, full.word_count) == (
        "T",
        "D",
        "some words here",
        "en",
        3,
    )
    assert full.quality == 0.42
    assert full.headings == ("H1", "H2a", "H2b")
    assert (full.indexable, full.indexability) == (True, "Indexable")
    assert full.url == record.url
    assert [h.url for h in follow] == ["https://example.com/a?page=2", "https://example.com/b"]


@pytest.mark.parametrize(
    ("meta", "headers", "label", "follows"),
    [
        ((("robots", "noindex"),), (), "Noindex", True),
        ((("TrawlBot", "noindex, nofollow"),), (), "Noindex", False),
        ((("robots", "none"),), (), "Noindex", False),
        ((("robots", "max-image-preview:none"),), (), "Indexable", True),
        ((), (("X-Robots-Tag", "trawlbot: noindex"),), "Noindex", True),
        ((), (("X-Robots-Tag", "bingbot: noindex"),), "Indexable", True),
    ],
)
def test_directives_decide(
    meta: tuple[tuple[str, str], ...],
    headers: tuple[tuple[str, str], ...],
    label: str,
    follows: bool,
) -> None:
    response = replace(result(200, HTML), headers=(*result(200, HTML).headers, *headers))
    record, _ = understand_response(ITEM, response)
    full, follow = understand_page(record, parsed_page(meta=meta), response, "trawlbot")
    assert full.indexability == label
    assert full.indexable is (label == "Indexable")
    assert bool(follow) is follows


def test_short_meta_refresh_is_a_redirect_and_a_long_one_is_not() -> None:
    record, _ = understand_response(ITEM, result(200, HTML))
    quick, follow = understand_page(
        record, parsed_page(refresh="0; url=/moved"), result(200, HTML), "trawlbot"
    )
    slow, _ = understand_page(
        record, parsed_page(refresh="30; url=/moved"), result(200, HTML), "trawlbot"
    )
    assert (quick.indexability, quick.redirect_to) == ("Redirected", "https://example.com/moved")
    assert [h.url for h in follow] == ["https://example.com/moved"]
    assert (slow.indexability, slow.redirect_to) == ("Indexable", None)


def test_canonical_elsewhere_is_followed_and_its_query_variants_are_not() -> None:
    record, _ = understand_response(ITEM, result(200, HTML))
    page = parsed_page(canonical="https://example.com/a")
    full, follow = understand_page(record, page, result(200, HTML), "trawlbot")
    assert (full.indexability, full.indexable) == ("Canonicalised", False)
    assert [h.url for h in follow] == ["https://example.com/a", "https://example.com/b"]


def test_canonical_naming_the_page_itself_is_indexable() -> None:
    record, _ = understand_response(ITEM, result(200, HTML))
    full, _ = understand_page(record, parsed_page(canonical=ITEM.url), result(200, HTML), "x")
    assert full.indexability == "Indexable"


def test_a_url_with_no_response_is_labelled_error() -> None:
    from trawl.understand.response import blocked_page, failed_page

    failed = failed_page(ITEM, 1.0, "timed out after 20.0s")
    assert (failed.indexability, failed.error, failed.indexable) == (
        "Error",
        "timed out after 20.0s",
        False,
    )
    assert blocked_page(ITEM, 1.0).indexability == "Blocked (robots)"


def test_a_page_is_copied_once_on_each_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PageRecord has some forty fields and each copy costs as much as building one:
    on a many-host crawl the copies were a tenth of the event loop's work outside the
    parse (bench/RESULTS.md, "Many hosts: CPU a page on the loop")."""
    from trawl.understand import response

    copies: list[str] = []

    def counted(obj: Any, /, **changes: Any) -> Any:
        copies.append(type(obj).__name__)
        return replace(obj, **changes)

    monkeypatch.setattr(response, "replace", counted)
    record, _ = understand_response(ITEM, result(200, HTML, ("ETag", '"v1"')))
    assert copies == []  # built indexable, with its validators, at once
    assert (record.indexable, record.etag) == (True, '"v1"')
    page = parsed_page(canonical="https://example.com/other")
    record, follow = understand_page(record, page, result(200, HTML), "trawl")
    assert copies == ["PageRecord"]
    assert record.indexability == "Canonicalised" and not record.indexable
    assert follow[0].url == "https://example.com/other"
    copies.clear()
    record, _ = understand_response(ITEM, result(404, HTML))
    assert copies == ["PageRecord"] and record.error == "HTTP 404"
