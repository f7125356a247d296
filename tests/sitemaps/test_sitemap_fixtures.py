"""trawl.sitemaps on real files: crawler-commons' fixtures and sitemaps from real sites.

Expected counts come from crawler-commons' SiteMapParserTest and
SiteMapParserExtensionTest (lenient mode) and from ../shared/data/README.md 6b;
each was also checked by counting <loc> elements by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import unquote, urlsplit

import pytest

from fixture_sites import shared_data
from trawl.sitemaps import Sitemap, parse_sitemap

CC = "crawler-commons-fixtures/sitemaps"
RSS = "crawler-commons-fixtures/rss"
EXT = f"{CC}/extension"
REAL = "sitemaps-real"


@dataclass(frozen=True)
class Case:
    path: str  # under ../shared/data
    url: str  # where the file would have been fetched from
    kind: str
    count: int  # entries, or children for an index
    dated: int = 0  # entries keeping a lastmod
    trusted: bool = True


CASES = [
    Case(f"{CC}/sitemap.index.xml", "http://www.example.com/sitemap.index.xml", "index", 15),
    Case(f"{CC}/sitemap.ns.xml", "http://www.example.com/sitemap.ns.xml", "urlset", 2),
    # Wrong namespace: refused by crawler-commons' strict mode, 2 URLs when lenient.
    Case(f"{CC}/sitemap.badns.xml", "http://www.example.com/sitemap.badns.xml", "urlset", 2),
    Case(f"{CC}/xmlSitemap.gz", "http://www.example.com/sitemap.xml.gz", "urlset", 5, dated=4),
    Case(f"{CC}/sitemap.txt.gz", "http://www.example.com/sitemap.txt.gz", "text", 5),
    Case(f"{CC}/sitemap.txt", "http://www.domain.com/sitemap.txt", "text", 2),
    Case(f"{CC}/sitemap-with-bom.txt", "http://www.domain.com/sitemap.txt", "text", 2),
    # One dated entry is "more than half of the dated URLs": dropped (see test below).
    Case(f"{CC}/atom.xml", "http://example.org/atom.xml", "feed", 1, trusted=False),
    Case(f"{RSS}/feed.rss", "https://www.example.com/index.php?feed/rss", "feed", 4, trusted=False),
    Case(f"{RSS}/xmlRss_pubDate.xml", "http://www.example.com/rss.xml", "feed", 7, dated=4),
    Case(
        f"{EXT}/hebdenbridgetimes-articles-sitemap.xml",
        "http://www.hebdenbridgetimes.co.uk/s.xml",
        "urlset",
        74,
        dated=74,
    ),
    Case(f"{EXT}/pagemaps-sitemap.xml", "http://www.example.com/s.xml", "urlset", 2),
    Case(
        f"{EXT}/shinpaideshou-news-sitemap.xml",
        "https://shinpaideshou.wordpress.com/news.xml",
        "urlset",
        3,
    ),
    Case(f"{EXT}/sitemap-images.xml", "http://www.example.com/s.xml", "urlset", 1),
    Case(f"{EXT}/sitemap-links.xml", "http://www.example.com/s.xml", "urlset", 3),
    Case(f"{EXT}/sitemap-mobile.xml", "http://www.example.org/s.xml", "urlset", 3),
    Case(f"{EXT}/sitemap-news.xml", "http://www.example.org/s.xml", "urlset", 2),
    Case(f"{EXT}/sitemap-videos-tvshow.xml", "https://example.org/sitemap.xml", "urlset", 1),
    Case(f"{EXT}/sitemap-videos.xml", "http://www.example.com/s.xml", "urlset", 3),
    # Hugo: git dates, 10 of 23 share one commit's time: under half, so kept.
    Case(
        f"{REAL}/sumo-hugo-root/sitemap.xml",
        "https://eclipse.dev/sumo/sitemap.xml",
        "urlset",
        23,
        dated=23,
    ),
    # MkDocs stamps every URL with the build date.
    Case(
        f"{REAL}/openj9-docs-mkdocs/sitemap.xml",
        "https://eclipse.dev/openj9/docs/sitemap.xml",
        "urlset",
        361,
        trusted=False,
    ),
    Case(
        f"{REAL}/wordpress-yoast-static-export/sitemap_index.xml",
        "https://adcert.local/sitemap_index.xml",
        "index",
        4,
    ),
    Case(
        f"{REAL}/wordpress-yoast-static-export/category-sitemap.xml",
        "https://adcert.local/category-sitemap.xml",
        "urlset",
        1,
        trusted=False,
    ),
    Case(
        "site-sumo-docs/docs/sitemap.xml",
        "https://sumo.dlr.de/docs/sitemap.xml",
        "urlset",
        401,
        trusted=False,
    ),
    Case(
        "site-sumo-docs/docs/sitemap.xml.gz",
        "https://sumo.dlr.de/docs/sitemap.xml.gz",
        "urlset",
        401,
        trusted=False,
    ),
]


def parse_file(path: str, url: str) -> Sitemap:
    return parse_sitemap(shared_data(path).read_bytes(), url)


@pytest.mark.parametrize("case", CASES, ids=[c.path.rsplit("/", 2)[-1] for c in CASES])
def test_real_file_counts(case: Case) -> None:
    sitemap = parse_file(case.path, case.url)
    assert sitemap.kind == case.kind
    if case.kind == "index":
        assert len(sitemap.children) == case.count
        assert sitemap.entries == ()
    else:
        assert len(sitemap.entries) == case.count
        assert sitemap.children == ()
    assert sum(e.lastmod is not None for e in sitemap.entries) == case.dated
    assert sitemap.lastmod_trusted is case.trusted
    assert sitemap.skipped == 0
    assert sitemap.truncated is False
    for entry in sitemap.entries:
        assert entry.lastmod is None or entry.lastmod.tzinfo is UTC


def test_index_without_loc_elements_takes_the_text_of_sitemap() -> None:
    index = parse_file(f"{CC}/sitemap.index.xml", "http://www.example.com/sitemap.index.xml")
    # &amp; decoded, then the query sorted by normalise().
    assert index.children[0] == "https://example.com/sitemap.jss?lang=en&portalCode=10260"
    assert len(set(index.children)) == 15


def test_xml_sitemap_urls_and_dates() -> None:
    sitemap = parse_file(f"{CC}/xmlSitemap.gz", "http://www.example.com/sitemap.xml.gz")
    assert [(e.url, e.lastmod) for e in sitemap.entries] == [
        ("http://www.example.com/", datetime(2005, 1, 1, tzinfo=UTC)),
        ("http://www.example.com/catalog?desc=vacation_hawaii&item=12", None),
        (
            "http://www.example.com/catalog?desc=vacation_new_zealand&item=73",
            datetime(2004, 12, 23, tzinfo=UTC),
        ),
        (
            "http://www.example.com/catalog?desc=vacation_newfoundland&item=74",
            datetime(2004, 12, 23, 18, 0, 15, tzinfo=UTC),
        ),
        (
            "http://www.example.com/catalog?desc=vacation_usa&item=83",
            datetime(2004, 11, 23, tzinfo=UTC),
        ),
    ]


def test_text_and_gzipped_text_give_the_same_urls() -> None:
    plain = parse_file(f"{CC}/sitemap.txt", "http://www.domain.com/sitemap.txt")
    bom = parse_file(f"{CC}/sitemap-with-bom.txt", "http://www.domain.com/sitemap.txt")
    assert plain.entries == bom.entries
    assert [e.url for e in bom.entries] == [
        "http://www.domain.com/page1.html",
        "http://www.domain.com/page2.html",
    ]


def test_atom_takes_the_first_alternate_link() -> None:
    feed = parse_file(f"{CC}/atom.xml", "http://example.org/atom.xml")
    assert [e.url for e in feed.entries] == ["http://example.org/2003/12/13/atom03"]


def test_rss_links_guid_entities_and_cdata() -> None:
    feed = parse_file(f"{RSS}/feed.rss", "https://www.example.com/index.php?feed/rss")
    assert [e.url for e in feed.entries] == [
        "https://www.example.com/blog/post/1",
        "https://www.example.com/guid.html",  # no <link>: the guid is a URL
        "https://www.example.com/foo?l=en&q=a",  # &amp; in the text
        "https://www.example.com/foo?l=fr&q=a",  # CDATA section inside <link>
    ]


def test_rss_pub_dates_as_crawler_commons_reads_them() -> None:
    feed = parse_file(f"{RSS}/xmlRss_pubDate.xml", "http://www.example.com/rss.xml")
    base = datetime(2017, 1, 5, 12, 34, 50, tzinfo=UTC)
    assert [(urlsplit(e.url).path, e.lastmod) for e in feed.entries] == [
        ("/article_1", base.replace(second=51)),  # "+0100"
        ("/article_2", base.replace(second=52)),  # two-digit year
        ("/article_3", base.replace(second=53)),  # no weekday
        ("/article_4", base.replace(second=54)),  # neither
        ("/article_5", None),  # no zone: not guessed
        ("/article_6", None),  # empty
        ("/article_7", None),  # missing
    ]


def test_extension_urls_never_become_pages() -> None:
    pages = {
        e.url
        for name in ("sitemap-images.xml", "sitemap-videos.xml", "sitemap-links.xml")
        for e in parse_file(f"{EXT}/{name}", "http://www.example.com/s.xml").entries
    }
    assert pages == {
        "http://www.example.com/images/some_image_landing_page.html",
        "http://www.example.com/videos/some_video_landing_page.html",
        "http://www.example.com/videos/some_video_landing_page-2.html",
        "http://www.example.com/videos/some_video_landing_page-3.html",
        "http://www.example.com/english/",
        "http://www.example.com/deutsch/",
        "http://www.example.com/schweiz-deutsch/",
    }


def test_hugo_single_line_sitemap_dates_in_utc() -> None:
    sitemap = parse_file(
        f"{REAL}/sumo-hugo-root/sitemap.xml", "https://eclipse.dev/sumo/sitemap.xml"
    )
    first = sitemap.entries[0]
    assert first.url == "https://eclipse.dev/sumo/about/"
    assert first.lastmod == datetime(2026, 1, 30, 14, 40, 13, tzinfo=UTC)  # 15:40:13+01:00


def test_yoast_index_relative_locs_and_comment_before_the_declaration() -> None:
    index = parse_file(
        f"{REAL}/wordpress-yoast-static-export/sitemap_index.xml",
        "https://adcert.local/sitemap_index.xml",
    )
    assert index.children == (
        "https://adcert.local/post-sitemap.xml",
        "https://adcert.local/page-sitemap.xml",
        "https://adcert.local/category-sitemap.xml",
        "https://adcert.local/author-sitemap.xml",
    )


def test_sumo_docs_dates_all_1970_are_dropped_and_every_url_is_in_the_mirror() -> None:
    sitemap = parse_file("site-sumo-docs/docs/sitemap.xml", "https://sumo.dlr.de/docs/sitemap.xml")
    assert sitemap.lastmod_trusted is False
    assert all(e.lastmod is None for e in sitemap.entries)
    mirror = shared_data("site-sumo-docs")
    missing = [
        e.url for e in sitemap.entries if not (mirror / unquote(urlsplit(e.url).path[1:])).is_file()
    ]
    assert missing == []
