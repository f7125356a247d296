"""The SEO report over a real crawl of a loopback site that has every issue the
overview lists: counts, filtered lists, columns, charts, the crawl comparison, on
SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import csv
import io
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from fixture_sites import Route, SiteServer
from trawl.pipeline.crawl_run import crawl
from trawl.pipeline.pages import PagePipeline
from trawl.records import CrawlUrl, Outcome
from trawl.server.app import create_app
from trawl.server.auth import create_key
from trawl.server.report import COLUMNS_LEFT, COLUMNS_RIGHT
from trawl.settings import Settings
from trawl.store import open_store
from trawl.store.base import Store
from trawl.store.issues import Issue
from trawl.understand.indexability import Indexability

Serve = Callable[..., SiteServer]

SLOW_DELAY = 1.0  # the slow page's answer; the threshold below sits well under it
SLOW_MS = 700


def _words(path: str, n: int) -> str:
    sentences = [
        f"The grey heron of {path} number {i} waits in the shallow water for a fish."
        for i in range(n // 15 + 1)
    ]
    return "".join(f"<p>{s}</p>" for s in sentences)


def _description(path: str) -> str:
    return f"All about the herons of {path}: where they feed, where they nest, and how they fish."


def page(
    path: str,
    title: str | None = None,
    *,
    h1: int = 1,
    words: int = 250,
    description: str | None = None,
    head: str = "",
    links: tuple[str, ...] = ("/",),
) -> Route:
    title = f"Herons and egrets of the marsh, page {path}" if title is None else title
    description = _description(path) if description is None else description
    meta = f'<meta name="description" content="{description}">' if description else ""
    h1s = "".join(f"<h1>Heading {i} of {path}</h1>" for i in range(h1))
    nav = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    doc = (
        f"<!doctype html><html lang=en><head><title>{title}</title>{meta}{head}</head>"
        f"<body><nav>{nav}</nav>{h1s}{_words(path, words)}</body></html>"
    )
    return Route(doc.encode())


def _redirect(status: int, to: str) -> Route:
    return Route(b"", status, {"Location": to, "Content-Type": "text/html"})


DUP_TITLE = "A duplicate title shared by two heron pages"
DUP_DESCRIPTION = "This description is shared by two heron pages, word for word, in the test."
LINKED = (
    "/no-title",
    "/dup-a",
    "/dup-b",
    "/long-title",
    "/short",
    "/two-h1",
    "/no-h1",
    "/no-desc",
    "/dup-desc-a",
    "/dup-desc-b",
    "/long-desc",
    "/short-desc",
    "/missing",
    "/broken",
    "/moved",
    "/temp",
    "/perm",
    "/loop-a",
    "/refresh",
    "/canon",
    "/private",
    "/secret",
    "/slow",
)


def problem_routes(base: str) -> dict[str, Route]:
    """A site with each issue of the overview, on pages of its own."""
    sitemap = "".join(f"<url><loc>{base}{p}</loc></url>" for p in ("/", "/private", "/orphan"))
    return {
        "/robots.txt": Route(
            b"User-agent: *\nDisallow: /secret\n", 200, {"Content-Type": "text/plain"}
        ),
        "/sitemap.xml": Route(
            f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"{sitemap}</urlset>".encode(),
            200,
            {"Content-Type": "application/xml"},
        ),
        "/": page("/", "Heron watching: a field guide to herons", links=LINKED),
        "/no-title": page("/no-title", ""),
        "/dup-a": page("/dup-a", DUP_TITLE),
        "/dup-b": page("/dup-b", DUP_TITLE),
        "/long-title": page("/long-title", "A very long title " * 5),
        "/short": page("/short", "Herons", words=20),
        "/two-h1": page("/two-h1", h1=2),
        "/no-h1": page("/no-h1", h1=0),
        "/no-desc": page("/no-desc", description=""),
        "/dup-desc-a": page("/dup-desc-a", description=DUP_DESCRIPTION),
        "/dup-desc-b": page("/dup-desc-b", description=DUP_DESCRIPTION),
        "/long-desc": page("/long-desc", description="A long description of herons. " * 8),
        "/short-desc": page("/short-desc", description="Herons."),
        "/broken": Route(b"not implemented", 501, {"Content-Type": "text/plain"}),
        "/moved": _redirect(301, "/hop"),
        "/hop": _redirect(302, "/dup-a"),
        "/temp": _redirect(307, "/"),
        "/perm": _redirect(308, "/"),
        "/loop-a": _redirect(302, "/loop-b"),
        "/loop-b": _redirect(302, "/loop-a"),
        "/refresh": page("/refresh", head='<meta http-equiv="refresh" content="0; url=/">'),
        "/canon": page("/canon", head=f'<link rel="canonical" href="{base}/dup-a">'),
        "/private": page("/private", head='<meta name="robots" content="noindex">'),
        "/secret": page("/secret"),
        "/orphan": page("/orphan"),
        "/slow": Route(page("/slow").body, delay=SLOW_DELAY),
    }


EXPECTED: dict[Issue, set[str]] = {
    Issue.TITLE_MISSING: {"/no-title"},
    Issue.TITLE_DUPLICATE: {"/dup-a", "/dup-b"},
    Issue.TITLE_TOO_LONG: {"/long-title"},
    Issue.TITLE_TOO_SHORT: {"/short"},
    Issue.DESCRIPTION_MISSING: {"/no-desc"},
    Issue.DESCRIPTION_DUPLICATE: {"/dup-desc-a", "/dup-desc-b"},
    Issue.DESCRIPTION_TOO_LONG: {"/long-desc"},
    Issue.DESCRIPTION_TOO_SHORT: {"/short-desc"},
    Issue.H1_MISSING: {"/no-h1"},
    Issue.H1_MULTIPLE: {"/two-h1"},
    Issue.THIN_CONTENT: {"/short"},
    Issue.CLIENT_ERROR: {"/missing"},
    Issue.SERVER_ERROR: {"/broken"},
    Issue.NO_RESPONSE: set(),
    Issue.REDIRECT_CHAIN: {"/moved", "/loop-a", "/loop-b"},
    Issue.REDIRECT_LOOP: {"/loop-a", "/loop-b"},
    Issue.REDIRECT_301: {"/moved"},
    Issue.REDIRECT_302: {"/hop", "/loop-a", "/loop-b"},
    Issue.REDIRECT_307: {"/temp"},
    Issue.REDIRECT_308: {"/perm"},
    Issue.META_REFRESH: {"/refresh"},
    Issue.CANONICALISED: {"/canon"},
    Issue.NOINDEX: {"/private"},
    Issue.BLOCKED: {"/secret"},
    Issue.SITEMAP_NON_INDEXABLE: {"/private"},
    Issue.ORPHAN: {"/orphan"},
    Issue.SLOW: {"/slow"},
}


@dataclass
class Report:
    client: TestClient
    key: str
    site: SiteServer
    settings: Settings

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(path, params=params, headers={"X-API-Key": self.key})

    def crawl(self) -> None:
        def run() -> None:
            store = open_store(self.settings)
            try:
                asyncio.run(crawl([self.site.url("/")], self.settings, store))
            finally:
                store.close()

        with ThreadPoolExecutor(1) as pool:
            pool.submit(run).result()

    def path(self, url: str) -> str:
        return url.removeprefix(self.site.base)


@pytest.fixture(params=["sqlite", "postgresql"])
def report(request: pytest.FixtureRequest, serve: Serve, tmp_path: Path) -> Iterator[Report]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgresql" else ""
    site = serve({})
    site.routes.update(problem_routes(site.base))
    settings = Settings(
        data=tmp_path, store=url, delay=0.0, parse_workers=0, report_slow_ms=SLOW_MS
    )
    store = open_store(settings)
    try:
        key = create_key(store, "tests")[1]
    finally:
        store.close()
    with TestClient(create_app(settings)) as client:
        made = Report(client, key, site, settings)
        made.crawl()
        yield made


def _listed(report: Report, **params: Any) -> set[str]:
    answer = report.get("/api/admin/report/pages", per_page=500, **params)
    assert answer.status_code == 200, answer.text
    return {report.path(r["url"]) for r in answer.json()["rows"]}


def test_every_issue_is_counted_and_listed(report: Report) -> None:
    overview = report.get("/api/admin/report/issues").json()
    counts = {row["issue"]: row["pages"] for row in overview}
    assert counts == {issue.slug: len(paths) for issue, paths in EXPECTED.items()}
    for issue, paths in EXPECTED.items():
        assert _listed(report, issue=issue.slug) == paths, issue


def test_the_report_page_links_each_issue_to_its_list(report: Report) -> None:
    assert 'href="/admin/report/issues"' in report.get("/admin/report").text
    page = report.get("/admin/report/issues").text
    for issue, paths in EXPECTED.items():
        row = re.search(rf'data-issue="{issue.slug}">(.*?)</tr>', page, re.S)
        assert row is not None, issue
        assert f'href="/admin/report?issue={issue.slug}"' in row.group(1)
        assert f'<td class="n">{len(paths)}</td>' in row.group(1)
    listed = report.get("/admin/report", issue="redirect_loop").text
    assert "/loop-a" in listed and "/loop-b" in listed and "/moved<" not in listed
    assert 'id="issue-filter"' in listed and "Redirect loop" in listed


@pytest.mark.parametrize(
    "params",
    [{"issue": "nope"}, {"indexability": "Blocked"}, {"issue": "title_missing'--"}],
)
def test_an_unknown_filter_answers_400(report: Report, params: dict[str, str]) -> None:
    assert report.get("/admin/report", **params).status_code == 400
    assert report.get("/api/admin/report/pages", **params).status_code == 400
    assert report.get("/api/admin/report/pages.csv", **params).status_code == 400


def test_the_blocked_filter_offers_the_stored_label(report: Report) -> None:
    page = report.get("/admin/report").text
    select = re.search(r'<select name="indexability">(.*?)</select>', page, re.S)
    assert select is not None
    offered = re.findall(r"<option[^>]*>([^<]+)</option>", select.group(1))
    assert offered == ["any", *(label.value for label in Indexability)]
    blocked = next(label for label in offered if label.startswith("Blocked"))
    assert _listed(report, indexability=blocked) == {"/secret"}
    assert "/secret" in report.get("/admin/report", indexability=blocked).text


def test_response_time_and_size_are_columns(report: Report) -> None:
    rows = {
        report.path(r["url"]): r
        for r in report.get("/api/admin/report/pages", per_page=500).json()["rows"]
    }
    assert rows["/slow"]["response_time"] >= SLOW_DELAY
    assert rows["/dup-a"]["response_time"] < SLOW_DELAY
    assert rows["/dup-a"]["size"] == len(report.site.routes["/dup-a"].body)
    assert rows["/secret"]["response_time"] is None  # never requested
    by_time = report.get("/api/admin/report/pages", sort="response_time", order="desc")
    assert report.path(by_time.json()["rows"][0]["url"]) == "/slow"
    page = report.get("/admin/report", q="/slow").text
    assert "Response (ms)" in page and "Size (KB)" in page
    details = report.get("/admin/report/url", url=report.site.url("/dup-a")).text
    assert f"{len(report.site.routes['/dup-a'].body)} bytes" in details


def test_every_column_heading_sorts_by_its_declared_name(report: Report) -> None:
    page = report.get("/admin/report", sort="nope").text  # an unknown sort: by URL
    for column, heading in (*COLUMNS_LEFT, *COLUMNS_RIGHT):
        order = "desc" if column == "url" else "asc"  # the current sort's link flips it
        assert f'href="?sort={column}&amp;order={order}">{heading}' in page, column


def test_the_csv_has_iso_dates_response_time_and_size(report: Report) -> None:
    answer = report.get("/api/admin/report/pages.csv")
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    slow = next(r for r in rows if r["url"].endswith("/slow"))
    assert datetime.fromisoformat(slow["fetched_at"]).tzinfo is not None
    assert float(slow["response_time"]) >= SLOW_DELAY
    assert int(slow["size"]) == len(report.site.routes["/slow"].body)


def test_charts_of_status_depth_and_response_time(report: Report) -> None:
    page = report.get("/admin/report").text
    for name in ("status", "depth", "response_time"):
        assert f'src="/admin/report/charts/{name}.svg"' in page
        answer = report.get(f"/admin/report/charts/{name}.svg")
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("image/svg+xml")
        assert answer.text.lstrip().startswith("<svg")
    statuses = report.get("/admin/report/charts/status.svg").text
    for label in ("200", "301", "404", "501"):
        assert f">{label}<" in statuses
    times = report.get("/admin/report/charts/response_time.svg").text
    assert "&gt; 5000 ms" in times or "> 5000 ms" in times
    assert report.get("/admin/report/charts/nope.svg").status_code == 404


def test_what_changed_since_the_previous_crawl(report: Report) -> None:
    first = report.get("/api/admin/report/changes").json()
    assert first["after"] is not None and first["before"] is None
    site = report.site
    site.routes["/dup-b"] = page("/dup-b", "A new title for the second duplicate page")
    site.routes["/short"] = Route(b"gone", 410, {"Content-Type": "text/plain"})
    del site.routes["/no-desc"]
    site.routes["/fresh"] = page("/fresh")
    site.routes["/canon"] = page("/canon")
    linked = tuple(p for p in (*LINKED, "/fresh") if p != "/no-desc")
    site.routes["/"] = page("/", "Heron watching: a field guide to herons", links=linked)
    report.crawl()

    answer = report.get("/api/admin/report/changes").json()
    assert answer["before"] < answer["after"]
    changes = {report.path(r["url"]): r["changes"] for r in answer["rows"]}
    assert changes == {
        "/dup-b": ["title"],
        "/short": ["status", "title", "indexability"],
        "/no-desc": ["gone"],
        "/fresh": ["new"],
        "/canon": ["indexability"],
    }
    assert answer["total"] == len(changes)

    exported = report.get("/api/admin/report/changes.csv")
    rows = {report.path(r["url"]): r for r in csv.DictReader(io.StringIO(exported.text))}
    assert set(rows) == set(changes)
    assert (rows["/short"]["status_before"], rows["/short"]["status_after"]) == ("200", "410")
    assert rows["/canon"]["indexability_before"] == Indexability.CANONICALISED.value
    assert rows["/canon"]["indexability_after"] == Indexability.INDEXABLE.value

    shown = report.get("/admin/report/changes").text
    assert 'id="compared"' in shown and "5 URLs changed" in shown
    assert "200 → 410" in shown and 'data-changes="gone"' in shown
    assert report.get("/admin/report/changes", host="elsewhere.example").status_code == 404

    # A third crawl is compared with the second, not the first.
    report.crawl()
    third = report.get("/api/admin/report/changes").json()
    assert third["before"] == answer["after"] and third["total"] == 0


def test_sitemap_membership_reaches_pages_saved_before_and_after(store: Store) -> None:
    crawl_id = store.begin_crawl(["https://a.example/"])
    pipeline = PagePipeline(store, None, crawl_id)
    early, late = "https://a.example/early", "https://a.example/late"
    pipeline.failed(CrawlUrl(early, 1), "connection refused")
    pipeline.listed([early, late, "https://a.example/never-fetched"])
    pipeline.failed(CrawlUrl(late, 1), "connection refused")
    pipeline.failed(CrawlUrl("https://a.example/unlisted", 1), "connection refused")
    assert [store.page(u).in_sitemap for u in (early, late)] == [True, True]  # type: ignore[union-attr]
    assert not store.page("https://a.example/unlisted").in_sitemap  # type: ignore[union-attr]


def test_deleting_a_site_forgets_its_crawl_snapshots(store: Store) -> None:
    store.add_site("https://a.example/")
    crawl_id = store.begin_crawl(["https://a.example/"])
    PagePipeline(store, None, crawl_id).failed(CrawlUrl("https://a.example/", 0), "refused")
    store.finish_crawl(crawl_id, pages_ok=0, pages_failed=1, outcome=Outcome.COMPLETE)
    assert store.history_hosts() == ["a.example"]
    store.delete_site("a.example")
    assert store.history_hosts() == []
