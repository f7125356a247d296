"""trawl.sitemaps, rule by rule: formats, namespaces, feeds, candidate URLs."""

from __future__ import annotations

import ast
import gzip
from datetime import UTC, datetime
from pathlib import Path

import pytest

from trawl.errors import InvalidUrl
from trawl.sitemaps import (
    MAX_INDEX_DEPTH,
    Sitemap,
    candidate_urls,
    decompress,
    parse_sitemap,
)

SITEMAP = "https://example.com/blog/sitemap.xml"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*urls: str, ns: str = NS) -> bytes:
    return f"<urlset {ns}>{''.join(urls)}</urlset>".encode()


def url(loc: str, lastmod: str | None = None) -> str:
    date = f"<lastmod>{lastmod}</lastmod>" if lastmod is not None else ""
    return f"<url><loc>{loc}</loc>{date}</url>"


def pages(sitemap: Sitemap) -> list[str]:
    return [e.url for e in sitemap.entries]


# -- detection by content --------------------------------------------------------


@pytest.mark.parametrize("name", ["sitemap.xml", "sitemap.txt", "feed", "sitemap.xml.gz"])
def test_the_url_does_not_decide_the_format(name: str) -> None:
    xml = urlset(url("https://example.com/a"))
    text = b"https://example.com/a\n"
    for body in (xml, text, gzip.compress(xml), gzip.compress(text)):
        assert pages(parse_sitemap(body, f"https://example.com/{name}")) == [
            "https://example.com/a"
        ]


def test_gzip_is_found_by_magic_bytes_whatever_the_content_type() -> None:
    body = gzip.compress(urlset(url("https://example.com/a")))
    sitemap = parse_sitemap(body, SITEMAP, content_type="text/xml")
    assert sitemap.kind == "urlset"


def test_decompress_leaves_plain_bodies_alone() -> None:
    assert decompress(b"<urlset/>", 100) == b"<urlset/>"


def test_decompress_reads_every_gzip_member() -> None:
    body = gzip.compress(b"https://example.com/a\n") + gzip.compress(b"https://example.com/b\n")
    assert decompress(body, 1000) == b"https://example.com/a\nhttps://example.com/b\n"


def test_decompress_ignores_padding_after_the_last_member() -> None:
    assert decompress(gzip.compress(b"abc") + b"\x00" * 8, 100) == b"abc"


@pytest.mark.parametrize(
    "prefix",
    [
        b"\xef\xbb\xbf",
        b"\n \t\r\n",
        b"\xef\xbb\xbf\n  ",
        b"<!-- generated -->",
        b"<!-- a -->\n<!-- b -->",
    ],
    ids=["bom", "white-space", "bom-and-space", "comment", "two-comments"],
)
def test_what_comes_before_the_xml_declaration_is_skipped(prefix: bytes) -> None:
    body = prefix + b'<?xml version="1.0" encoding="UTF-8"?>' + urlset(url("/a"))
    assert pages(parse_sitemap(body, SITEMAP)) == ["https://example.com/a"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "iso-8859-1"])
def test_declared_encodings(encoding: str) -> None:
    bom = "\ufeff" if encoding in ("utf-16-le", "utf-16-be") else ""
    declared = "utf-16" if encoding.startswith("utf-16") else encoding
    doc = f'{bom}<?xml version="1.0" encoding="{declared}"?>'
    doc += "<urlset><url><loc>/café</loc></url></urlset>"
    assert pages(parse_sitemap(doc.encode(encoding), SITEMAP)) == ["https://example.com/caf%C3%A9"]


def test_xsl_stylesheet_instruction_is_fine() -> None:
    body = b'<?xml version="1.0"?><?xml-stylesheet type="text/xsl" href="/s.xsl"?>' + urlset(
        url("https://example.com/a")
    )
    assert pages(parse_sitemap(body, SITEMAP)) == ["https://example.com/a"]


# -- urlset and index ---------------------------------------------------------------


def test_relative_locations_resolve_against_the_sitemap_url() -> None:
    body = urlset(
        url("page.html"), url("/root.html"), url("../up.html"), url("//cdn.example.org/x")
    )
    assert pages(parse_sitemap(body, SITEMAP)) == [
        "https://example.com/blog/page.html",
        "https://example.com/root.html",
        "https://example.com/up.html",
        "https://cdn.example.org/x",
    ]


@pytest.mark.parametrize(
    "ns",
    [
        NS,
        "",
        'xmlns="http://www.google.com/schemas/sitemap/0.9"',
        'xmlns="http://www.sitemaps.org/schemas/sitemap/0.84"',
    ],
    ids=["sitemaps.org", "none", "google", "old-0.84"],
)
def test_namespaces_are_lenient(ns: str) -> None:
    body = urlset(url("https://example.com/a", "2024-01-02"), url("https://example.com/b"), ns=ns)
    assert pages(parse_sitemap(body, SITEMAP)) == ["https://example.com/a", "https://example.com/b"]


def test_prefixed_sitemap_namespace() -> None:
    body = (
        b'<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<s:url><s:loc>https://example.com/a</s:loc></s:url></s:urlset>"
    )
    assert pages(parse_sitemap(body, SITEMAP)) == ["https://example.com/a"]


def test_extension_locations_are_not_pages() -> None:
    body = urlset(
        "<url><image:image xmlns:image='http://www.google.com/schemas/sitemap-image/1.1'>"
        "<image:loc>https://example.com/a.jpg</image:loc></image:image>"
        "<x:loc xmlns:x='urn:other'>https://example.com/other</x:loc>"
        "<loc>https://example.com/page</loc></url>"
    )
    assert pages(parse_sitemap(body, SITEMAP)) == ["https://example.com/page"]


def test_text_cdata_character_references_and_unicode_space() -> None:
    body = urlset(
        url("https://example.com/a?x=1&amp;y=2"),
        url("<![CDATA[https://example.com/b?x=1&y=2]]>"),
        url("\u00a0 https://example.com/c \u2000\n", "2004-10-01T18:23:17&#43;00:00"),
        url("https://example.com/<!-- note -->d"),
    )
    sitemap = parse_sitemap(body, SITEMAP)
    assert pages(sitemap) == [
        "https://example.com/a?x=1&y=2",
        "https://example.com/b?x=1&y=2",
        "https://example.com/c",
        "https://example.com/d",
    ]


def test_index_children_with_and_without_loc() -> None:
    body = (
        f"<sitemapindex {NS}>"
        "<sitemap><loc>/posts.xml</loc><lastmod>2024-01-01</lastmod></sitemap>"
        "<sitemap>\n  https://example.com/pages.xml\n</sitemap>"
        "<sitemap><loc>https://example.com/a.xml</loc><loc>https://example.com/b.xml</loc></sitemap>"
        "<sitemap><lastmod>2024-01-01</lastmod></sitemap>"
        "</sitemapindex>"
    ).encode()
    index = parse_sitemap(body, SITEMAP)
    assert index.kind == "index"
    assert index.children == (
        "https://example.com/posts.xml",
        "https://example.com/pages.xml",
        "https://example.com/a.xml",
        "https://example.com/b.xml",
    )
    assert index.entries == ()
    assert index.skipped == 1  # the <sitemap> with no location at all
    assert MAX_INDEX_DEPTH == 3


def test_bad_urls_and_duplicates_are_skipped_and_counted() -> None:
    body = urlset(
        url("https://example.com/a"),
        url("https://example.com/a#fragment"),  # the same page
        url("mailto:someone@example.com"),
        url("javascript:alert(1)"),
        url("https://user:pw@example.com/"),
        url(""),
        "<url><changefreq>daily</changefreq></url>",
        url("https://example.com/b"),
    )
    sitemap = parse_sitemap(body, SITEMAP)
    assert pages(sitemap) == ["https://example.com/a", "https://example.com/b"]
    assert sitemap.skipped == 6
    assert sitemap.truncated is False


def test_empty_urlset_is_a_sitemap_with_nothing_in_it() -> None:
    sitemap = parse_sitemap(urlset(), SITEMAP)
    assert (sitemap.kind, sitemap.entries, sitemap.skipped) == ("urlset", (), 0)


# -- text ------------------------------------------------------------------------


def test_text_sitemap_line_endings_and_stray_lines() -> None:
    body = b"https://example.com/a\r\nhttps://example.com/b\rnot a url\n\n"
    body += b"  HTTPS://example.com/c  \n/d\n"
    sitemap = parse_sitemap(body, "https://example.com/sitemap.txt")
    assert pages(sitemap) == [
        "https://example.com/a",
        "https://example.com/b",
        "https://example.com/c",
    ]
    assert sitemap.kind == "text"
    assert sitemap.skipped == 2  # relative lines are not resolved: a stray word is not a page


# -- feeds ------------------------------------------------------------------------


def test_rss_item_links_in_their_own_namespace_only() -> None:
    body = b"""<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel>
      <link>https://example.com/</link>
      <atom:link href="https://example.com/feed" rel="self"/>
      <item><atom:link href="https://example.com/not-this"/><link>/post/1</link>
            <pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate></item>
      <item><guid isPermaLink="false">urn:uuid:1234</guid></item>
      <item><link>/post/2</link><pubDate>Wed, 11 Jun 2003 04:00:00 GMT</pubDate></item>
    </channel></rss>"""
    feed = parse_sitemap(body, "https://example.com/feed.xml")
    assert feed.kind == "feed"
    assert [(e.url, e.lastmod) for e in feed.entries] == [
        ("https://example.com/post/1", datetime(2003, 6, 10, 4, tzinfo=UTC)),
        ("https://example.com/post/2", datetime(2003, 6, 11, 4, tzinfo=UTC)),
    ]
    assert feed.skipped == 1  # a guid that is not a URL


def test_rss_1_0_items_sit_under_the_rdf_root() -> None:
    body = b"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
      <channel rdf:about="https://example.com/"><link>https://example.com/pub</link></channel>
      <item rdf:about="x"><link>https://example.com/pub/1.html</link><dc:date>2000-08-09</dc:date></item>
      <item rdf:about="y"><link>https://example.com/pub/2.html</link><dc:date>2000-08-10</dc:date></item>
    </rdf:RDF>"""
    feed = parse_sitemap(body, "https://example.com/index.rdf")
    assert [(e.url, e.lastmod) for e in feed.entries] == [
        ("https://example.com/pub/1.html", datetime(2000, 8, 9, tzinfo=UTC)),
        ("https://example.com/pub/2.html", datetime(2000, 8, 10, tzinfo=UTC)),
    ]


def test_atom_alternate_links_and_updated() -> None:
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom">
      <link href="https://example.com/" />
      <entry><link rel="edit" href="/edit/1"/><link rel="alternate" href="/post/1"/>
             <updated>2003-12-13T18:30:02Z</updated></entry>
      <entry><link href="/post/2"/><link rel="alternate" href="/post/2.html"/>
             <updated>2003-12-14T18:30:02+01:00</updated></entry>
      <entry><link rel="enclosure" href="/audio.mp3"/></entry>
    </feed>"""
    feed = parse_sitemap(body, "https://example.com/atom.xml")
    assert [(e.url, e.lastmod) for e in feed.entries] == [
        ("https://example.com/post/1", datetime(2003, 12, 13, 18, 30, 2, tzinfo=UTC)),
        ("https://example.com/post/2", datetime(2003, 12, 14, 17, 30, 2, tzinfo=UTC)),
    ]
    assert feed.skipped == 1


# -- candidates ------------------------------------------------------------------


def test_candidates_fall_back_to_the_usual_places() -> None:
    assert candidate_urls("https://Example.com", []) == ["https://example.com/sitemap.xml"]


def test_candidates_from_robots_txt_replace_the_fallbacks() -> None:
    robots = [
        "https://example.com/sitemap-news.xml",
        "/relative/sitemap.xml",
        "https://example.com/sitemap-news.xml#again",
        "ftp://example.com/sitemap.xml",
        "https://cdn.example.org/sitemap.xml.gz",
    ]
    assert candidate_urls("https://example.com:443", robots) == [
        "https://example.com/sitemap-news.xml",
        "https://example.com/relative/sitemap.xml",
        "https://cdn.example.org/sitemap.xml.gz",
    ]


def test_candidates_when_every_robots_line_is_unusable() -> None:
    assert candidate_urls("http://example.com:8080", ["mailto:x@example.com"]) == [
        "http://example.com:8080/sitemap.xml"
    ]


def test_candidates_need_a_real_origin() -> None:
    with pytest.raises(InvalidUrl):
        candidate_urls("file:///etc", [])


# -- purity -----------------------------------------------------------------------


def test_the_package_does_no_io() -> None:
    package = Path(__file__).resolve().parents[2] / "src" / "trawl" / "sitemaps"
    forbidden = ("socket", "aiohttp", "sqlite3", "urllib.request", "http", "requests", "trawl.net")
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith(forbidden), f"{path.name} imports {name}"
        assert "open(" not in path.read_text(), f"{path.name} opens files"
