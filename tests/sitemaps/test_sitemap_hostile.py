"""trawl.sitemaps against hostile and broken input: it raises SitemapError or stays safe."""

from __future__ import annotations

import contextlib
import gzip
import struct
import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from trawl.errors import SitemapError
from trawl.sitemaps import Sitemap, decompress, parse_sitemap, xmlreader

SITEMAP = "https://example.com/sitemap.xml"
SECRET = "TRAWL-SECRET-7f3a9c"
MiB = 1024 * 1024


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET + "\n")
    return path


@pytest.fixture
def external_loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every URL the parser asks its resolver for; it must stay empty."""
    asked: list[str] = []
    refuse = xmlreader.RefuseExternal.resolve

    def record(
        self: xmlreader.RefuseExternal, url: str | None, public_id: str | None, context: object
    ) -> None:
        asked.append(str(url))
        refuse(self, url, public_id, context)

    monkeypatch.setattr(xmlreader.RefuseExternal, "resolve", record)
    yield asked


def urls_of(sitemap: Sitemap) -> list[str]:
    return [e.url for e in sitemap.entries] + list(sitemap.children)


# -- entities -----------------------------------------------------------------


def billion_laughs() -> bytes:
    levels = ['<!ENTITY lol0 "lol">']
    levels += [f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)]
    declarations = "\n".join(levels)
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE urlset [\n{declarations}\n]>\n'
        "<urlset><url><loc>https://example.com/&lol9;</loc></url></urlset>"
    ).encode()


def test_billion_laughs_is_refused() -> None:
    with pytest.raises(SitemapError):
        parse_sitemap(billion_laughs(), SITEMAP)


def test_quadratic_blowup_is_refused() -> None:
    big = "A" * 50_000
    body = (
        f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "{big}">]>'
        f"<urlset><url><loc>https://example.com/{'&a;' * 20_000}</loc></url></urlset>"
    ).encode()
    with pytest.raises(SitemapError):
        parse_sitemap(body, SITEMAP)


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE urlset [<!ENTITY xxe SYSTEM "{file}">]>',
        '<!DOCTYPE urlset [<!ENTITY % pe SYSTEM "{file}"> %pe;]>',
        '<!DOCTYPE urlset [<!ENTITY xxe SYSTEM "http://127.0.0.1:9/secret">]>',
        '<!DOCTYPE urlset [<!ENTITY % pe SYSTEM "http://127.0.0.1:9/x.dtd"> %pe;]>',
    ],
    ids=["file-entity", "file-parameter-entity", "http-entity", "http-parameter-entity"],
)
def test_external_entities_are_refused_and_never_loaded(
    doctype: str, secret_file: Path, external_loads: list[str]
) -> None:
    body = (
        '<?xml version="1.0"?>'
        + doctype.format(file=secret_file.as_uri())
        + "<urlset><url><loc>https://example.com/visit-here</loc></url>"
        + "<url><loc>https://example.com/&xxe;</loc></url></urlset>"
    ).encode()
    with pytest.raises(SitemapError) as caught:
        parse_sitemap(body, SITEMAP)
    assert SECRET not in str(caught.value)
    assert external_loads == []  # refused before anything was even asked for


def test_external_dtd_is_never_loaded(secret_file: Path, external_loads: list[str]) -> None:
    # A DOCTYPE with only an external DTD is legal (old RSS feeds have one); it is not read.
    body = (
        f'<?xml version="1.0"?><!DOCTYPE urlset SYSTEM "{secret_file.as_uri()}">'
        "<urlset><url><loc>https://example.com/&undeclared;</loc></url>"
        "<url><loc>https://example.com/visit-here</loc></url></urlset>"
    ).encode()
    sitemap = parse_sitemap(body, SITEMAP)
    assert urls_of(sitemap) == ["https://example.com/visit-here"]
    assert sitemap.skipped == 1  # the <loc> holding an unexpanded entity
    assert SECRET not in repr(sitemap)
    assert external_loads == []


def test_xinclude_is_not_processed(secret_file: Path, external_loads: list[str]) -> None:
    body = (
        '<urlset xmlns:xi="http://www.w3.org/2001/XInclude">'
        f'<url><loc><xi:include href="{secret_file.as_uri()}" parse="text"/></loc></url>'
        "<url><loc>https://example.com/visit-here</loc></url></urlset>"
    ).encode()
    sitemap = parse_sitemap(body, SITEMAP)
    assert urls_of(sitemap) == ["https://example.com/visit-here"]
    assert SECRET not in repr(sitemap)
    assert external_loads == []


def test_the_resolver_refuses_even_a_parser_told_to_load_dtds(secret_file: Path) -> None:
    # The guard under the flags: lxml has loaded external DTDs despite load_dtd=False
    # (with collect_ids=False); here loading is switched on outright.
    parser = etree.XMLPullParser(load_dtd=True, no_network=True)
    parser.resolvers.add(xmlreader.RefuseExternal())
    body = f'<!DOCTYPE urlset SYSTEM "{secret_file.as_uri()}"><urlset/>'.encode()
    with pytest.raises(SitemapError, match="refused"):
        parser.feed(body)
        parser.close()


# -- gzip ---------------------------------------------------------------------


def gzip_of_zeros(total: int, block: int = MiB) -> bytes:
    """A single-member gzip of ``total`` zero bytes, built without holding them.

    Each block is deflated with a full flush, which resets the compressor, so
    every block compresses to the same bytes and can simply be repeated.
    """
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    zeros = bytes(block)
    segment = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    end = deflate.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(total // block):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc, total & 0xFFFFFFFF)
    return header + segment * (total // block) + end + trailer


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    bomb = gzip_of_zeros(1024 * MiB)  # 1 GiB of zeros
    assert len(bomb) < 2 * MiB
    return bomb


def test_gzip_bomb_stops_at_the_cap_with_bounded_memory(gzip_bomb: bytes) -> None:
    cap = 20 * MiB
    tracemalloc.start()
    try:
        with pytest.raises(SitemapError, match="decompresses past"):
            decompress(gzip_bomb, cap)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < cap + 4 * MiB  # never much more than the cap, never the gigabyte


def test_gzip_bomb_through_parse_sitemap(gzip_bomb: bytes) -> None:
    with pytest.raises(SitemapError):
        parse_sitemap(gzip_bomb, SITEMAP + ".gz", max_bytes=10 * MiB)


def test_the_bomb_builder_makes_real_gzip() -> None:
    small = gzip_of_zeros(4 * MiB)
    assert gzip.decompress(small) == bytes(4 * MiB)


def test_gzip_inside_gzip_is_capped_too() -> None:
    double = gzip.compress(gzip_of_zeros(8 * MiB))
    with pytest.raises(SitemapError):
        parse_sitemap(double, SITEMAP, max_bytes=4 * MiB)


def test_gzip_three_layers_deep_is_refused() -> None:
    body = b"https://example.com/a\n"
    for _ in range(3):
        body = gzip.compress(body)
    with pytest.raises(SitemapError, match="nested"):
        parse_sitemap(body, SITEMAP)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (gzip.compress(b"https://example.com/a\n")[:-12], "ends early"),
        (b"\x1f\x8b\x08\x00garbage-that-is-not-deflate", "corrupt gzip"),
        (b"\x1f\x8b", "ends early"),
    ],
    ids=["truncated", "corrupt", "magic-only"],
)
def test_broken_gzip(body: bytes, message: str) -> None:
    with pytest.raises(SitemapError, match=message):
        decompress(body, MiB)


# -- not a sitemap, or too much of one ---------------------------------------

SOFT_404 = b"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Page not found</title></head>
<body><h1>404</h1><p>Try <a href="/">the home page</a>.</p></body></html>
"""


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b" \r\n\t ",
        b"\xef\xbb\xbf",
        bytes(range(256)) * 8,
        b"\x00" * 1000,
        SOFT_404,
        b'<html xmlns="http://www.w3.org/1999/xhtml"><body><p>gone</p></body></html>',
        b"this is a bogus sitemap",
        b'{"urls": ["https://example.com/"]}',
        b"<?xml version='1.0'?><urlset><url><loc>https://example.com/</loc></url>",
        b"<urlset><url><loc>https://example.com/a&b</loc></url></urlset>",
        b'<?xml version="1.0" encoding="no-such-charset"?><urlset/>',
        b"<?xml version='1.0'?>" + b"<a>" * 300 + b"</a>" * 300,
    ],
    ids=[
        "empty",
        "white-space",
        "bom-only",
        "binary",
        "nul-bytes",
        "html-soft-404",
        "xhtml",
        "prose",
        "json",
        "truncated-xml",
        "unescaped-ampersand",
        "unknown-encoding",
        "nested-too-deep",
    ],
)
def test_not_a_sitemap(body: bytes) -> None:
    with pytest.raises(SitemapError):
        parse_sitemap(body, SITEMAP)


def test_html_content_type_stops_a_soft_404_being_read_as_text() -> None:
    body = b"Sorry, not found.\nhttps://example.com/\n"
    with pytest.raises(SitemapError, match="HTML"):
        parse_sitemap(body, SITEMAP, content_type="text/html; charset=utf-8")
    assert len(parse_sitemap(body, SITEMAP, content_type="text/plain").entries) == 1


def test_body_over_max_bytes_is_refused() -> None:
    with pytest.raises(SitemapError, match="larger than"):
        parse_sitemap(b"https://example.com/\n" * 100, SITEMAP, max_bytes=1000)


def test_max_urls_keeps_the_first_ones_and_counts_the_rest() -> None:
    body = "".join(f"<url><loc>/page-{i}</loc></url>" for i in range(120))
    sitemap = parse_sitemap(f"<urlset>{body}</urlset>".encode(), SITEMAP, max_urls=100)
    assert len(sitemap.entries) == 100
    assert sitemap.entries[-1].url == "https://example.com/page-99"
    assert sitemap.truncated is True
    assert sitemap.skipped == 20


def test_the_tree_is_freed_as_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # libxml2's nodes live outside tracemalloc's view, so the invariant is checked
    # instead: after each chunk the tree holds only the open elements and one finished
    # child of each, however many URLs or junk elements the file has. Within a chunk
    # it holds at most that chunk's elements (64 KiB of markup).
    roots: list[etree._Element] = []
    largest = 0
    start, drain = xmlreader._Reader.start, xmlreader._drain

    def start_watch(self: xmlreader._Reader, element: etree._Element) -> None:
        if self.depth == 0:
            roots.append(element)
        start(self, element)

    def drain_watch(parser: etree.XMLPullParser, reader: xmlreader._Reader) -> None:
        nonlocal largest
        drain(parser, reader)
        if roots:
            largest = max(largest, sum(1 for _ in roots[0].iter()))

    monkeypatch.setattr(xmlreader._Reader, "start", start_watch)
    monkeypatch.setattr(xmlreader, "_drain", drain_watch)
    junk = "<junk><deeper/></junk>" * 20
    urls = "".join(f"<url><loc>/p/{i}</loc>{junk}</url>{junk}" for i in range(3000))
    sitemap = parse_sitemap(f"<urlset>{urls}</urlset>".encode(), SITEMAP)
    assert len(sitemap.entries) == 3000
    assert 0 < largest <= 8  # of ~250,000 elements


def test_a_sitemap_past_the_protocol_limit() -> None:
    n = 60_000  # sitemaps.org allows 50,000
    urls = "".join(f"<url><loc>https://example.com/p/{i}</loc></url>\n" for i in range(n))
    sitemap = parse_sitemap(f'<?xml version="1.0"?><urlset>{urls}</urlset>'.encode(), SITEMAP)
    assert len(sitemap.entries) == 50_000
    assert sitemap.entries[-1].url == "https://example.com/p/49999"
    assert (sitemap.skipped, sitemap.truncated) == (10_000, True)


# -- arbitrary input ------------------------------------------------------------

PREFIXES = [
    b"",
    b"\x1f\x8b",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"<?xml version='1.0'?>",
    b"<urlset>",
    b"<sitemapindex><sitemap>",
    b"<rss><channel><item><link>",
    b"<feed><entry><link href='",
    b"<!DOCTYPE urlset [",
    b"https://example.com/",
]
PIECES = [
    b"<url>",
    b"</url>",
    b"<loc>",
    b"</loc>",
    b"<lastmod>",
    b"</lastmod>",
    b"2020-02-30T25:00+99:00",
    b"Mon, 01 Jan 2000 00:00:00 +9999",
    b"&amp;",
    b"&#0;",
    b"&a;",
    b"<!ENTITY a 'b'>",
    b"]>",
    b"<![CDATA[",
    b"]]>",
    b"<!--",
    b"-->",
    b"http://[::1",
    b"http://h:99999/",
    b"http://u:p@h/",
    b"\n",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(PREFIXES),
    st.lists(st.one_of(st.binary(max_size=16), st.sampled_from(PIECES)), max_size=24),
    st.booleans(),
)
def test_arbitrary_bytes_raise_nothing_but_sitemap_error(
    prefix: bytes, pieces: list[bytes], compress: bool
) -> None:
    body = prefix + b"".join(pieces)
    if compress:
        body = gzip.compress(body)
    try:
        sitemap = parse_sitemap(body, SITEMAP)
    except SitemapError:
        return
    assert sitemap.kind in ("urlset", "index", "text", "feed")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512))
def test_random_bytes_raise_nothing_but_sitemap_error(body: bytes) -> None:
    with contextlib.suppress(SitemapError):
        parse_sitemap(body, SITEMAP)
