"""One page never ends a crawl: hostile headers and a fault inside one page's processing,
against real loopback servers through the real pipeline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fixture_sites import Route, SiteServer, html_page
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]


async def run(tmp_path: Path, *urls: str, **settings: object) -> CrawlOutcome:
    config = Settings(data=tmp_path / "data", delay=0.0).replace(**settings)
    store = SQLiteStore(config.sqlite_path)
    try:
        return await crawl(list(urls), config, store)
    finally:
        store.close()


def links(*paths: str) -> str:
    return "".join(f'<a href="{p}">{p}</a>' for p in paths)


def stored(tmp_path: Path, url: str) -> object:
    store = SQLiteStore(tmp_path / "data" / "trawl.sqlite")
    try:
        return store.page(url)
    finally:
        store.close()


@pytest.mark.parametrize("value", ["²", "①", "-5", "Fri, 31 Dec 99999 23:59:59 GMT"])
async def test_a_hostile_retry_after_does_not_end_the_crawl(
    serve: Serve, tmp_path: Path, value: str
) -> None:
    busy = Route(b"busy", 503, {"Retry-After": value, "Content-Type": "text/plain"})
    answers = iter([busy])  # refused once, served after
    site = serve(
        {"/": html_page("Home", links("/busy", "/ok")), "/ok": html_page("Ok", "wombats")},
        dynamic=lambda path: next(answers, html_page("B", "b")) if path == "/busy" else None,
    )

    outcome = await run(tmp_path, site.url("/"), host_concurrency=1)

    assert outcome.outcome == "complete"
    assert outcome.internal_errors == 0
    assert site.page_paths().count("/busy") == 2  # retried, on our own back-off
    assert outcome.indexed == 3


async def test_a_latin1_header_keeps_the_page(serve: Serve, tmp_path: Path) -> None:
    # http.server writes header values as Latin-1: "é" goes out as the single byte 0xE9.
    odd = html_page("Résumé", "<p>Curriculum of a wombat.</p>")
    odd.headers["Content-Disposition"] = 'inline; filename="résumé.html"'
    site = serve({"/": html_page("Home", links("/cv")), "/cv": odd})

    outcome = await run(tmp_path, site.url("/"))

    assert (outcome.indexed, outcome.failed, outcome.internal_errors) == (2, 0, 0)
    page = stored(tmp_path, site.url("/cv"))
    assert page is not None and getattr(page, "error", None) is None
    assert ("Content-Disposition", 'inline; filename="résumé.html"') in page.headers  # type: ignore[attr-defined]


async def test_a_latin1_location_is_followed_as_its_bytes(serve: Serve, tmp_path: Path) -> None:
    # "/résumé" goes out as Latin-1 (0xE9). Browsers request the bytes as they came,
    # percent-encoded (WPT fetch/api/redirect/redirect-location-escape: \xff is %FF),
    # not the text re-encoded as UTF-8 (%C3%A9), which this server never meant.
    site = serve(
        {
            "/": html_page("Home", links("/cv")),
            "/cv": Route(b"", 301, {"Location": "/résumé"}),
            "/r%E9sum%E9": html_page("Résumé", "<p>Curriculum of a wombat.</p>"),
        }
    )

    outcome = await run(tmp_path, site.url("/"))

    assert "/r%E9sum%E9" in site.page_paths()
    assert "/r%C3%A9sum%C3%A9" not in site.page_paths()
    assert (outcome.indexed, outcome.failed, outcome.internal_errors) == (2, 0, 0)


async def test_a_fault_in_one_page_is_counted_and_the_crawl_goes_on(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    site = serve(
        {
            "/": html_page("Home", links("/a", "/doomed", "/b")),
            "/a": html_page("A", "<p>aardvark</p>"),
            "/doomed": html_page("D", "<p>doomed</p>"),
            "/b": html_page("B", "<p>badger</p>"),
        }
    )
    # A fault we cannot cause from outside: the store failing for one page, before
    # the request (its validators are read to make the request conditional).
    real = SQLiteStore.validators

    def validators(self: SQLiteStore, url: str) -> tuple[str | None, str | None]:
        if url.endswith("/doomed"):
            raise RuntimeError("injected fault")
        return real(self, url)

    monkeypatch.setattr(SQLiteStore, "validators", validators)

    outcome = await run(tmp_path, site.url("/"))

    assert outcome.indexed == 3
    assert outcome.internal_errors == 1
    assert outcome.skipped.get("internal error (see the log)") == 1
    assert any(site.url("/doomed") in r.getMessage() for r in caplog.records)
    page = stored(tmp_path, site.url("/doomed"))
    assert page is not None and "internal error" in (getattr(page, "error", "") or "")
