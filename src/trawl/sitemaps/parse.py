"""A fetched sitemap's bytes in, its URLs out.

The crawler fetches; this module only reads. Formats are told apart by their
content, never by the URL (sitemaps are served under every name and media
type): gzip by its magic bytes, XML by its first character, anything else as a
plain-text list of URLs. The Content-Type only serves to refuse an HTML page.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from trawl.errors import InvalidUrl, SitemapError
from trawl.sitemaps.dates import dates_trusted, parse_date
from trawl.urls.identity import forms, normalise

if TYPE_CHECKING:
    from trawl.sitemaps.xmlreader import Kind

# sitemaps.org: at most 50,000 URLs and 50 MB (uncompressed) per file.
MAX_BYTES = 50 * 1024 * 1024
MAX_URLS = 50_000
# Sitemap indexes are followed this deep; the crawler counts, using kind == "index".
MAX_INDEX_DEPTH = 3
# Where sites put a sitemap when robots.txt names none (seed 000). One guess: each
# costs every host a request, and a site with /sitemap_index.xml names it in
# robots.txt (WordPress and Yoast do) or answers /sitemap.xml too.
FALLBACK_PATHS = ("/sitemap.xml",)

GZIP_MAGIC = b"\x1f\x8b"
_GUNZIP_CHUNK = 256 * 1024
# A server that gzips an already gzipped file: one more layer is read, no more.
_MAX_GZIP_LAYERS = 2
_UTF8_BOM = b"\xef\xbb\xbf"
_XML_SPACE = re.compile(rb"[ \t\r\n]*")
# UTF-16 XML (with a BOM, or "<" as a 16-bit unit) goes to the XML parser whole.
_UTF16_STARTS = (b"\xff\xfe", b"\xfe\xff", b"<\x00", b"\x00<")
_TEXT_LINE = re.compile(r"[^\r\n]+")
_ABSOLUTE_URL = re.compile(r"https?://", re.IGNORECASE)
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    """One page URL listed by a sitemap or feed."""

    url: str  # normalised (trawl.urls.identity), resolved against the sitemap URL
    lastmod: datetime | None  # aware UTC; None when absent, unreadable or untrusted
    request: str | None = None  # the URL as written, when not ``url`` (it is requested)


@dataclass(frozen=True, slots=True)
class Sitemap:
    """What one fetched sitemap document says."""

    url: str
    kind: Kind  # "urlset", "index", "text" or "feed" (RSS or Atom)
    entries: tuple[SitemapEntry, ...]  # page URLs (urlset, text, feed)
    children: tuple[str, ...]  # child sitemap URLs (index), normalised
    # False when one lastmod covers more than half of the dated URLs (for an index,
    # of its children's dates, which are not returned).
    lastmod_trusted: bool
    skipped: int  # entries dropped: no usable URL, duplicate, or over max_urls
    truncated: bool  # more than max_urls entries: only the first max_urls are kept


@dataclass(slots=True)
class _Collector:
    """Normalises, de-duplicates and caps entries as the reader finds them."""

    base: str
    max_urls: int
    found: dict[str, datetime | None] = field(default_factory=dict)  # keeps document order
    written: dict[str, str] = field(default_factory=dict)  # identity -> as written, if not it
    skipped: int = 0
    truncated: bool = False

    def add(self, location: str | None, date: str | None) -> None:
        if len(self.found) >= self.max_urls:
            # Past the cap nothing is normalised: a huge file costs only its parsing.
            self.truncated = True
            self.skipped += 1
            return
        if location is None:
            self.skipped += 1
            return
        try:
            url, request = forms(location, self.base)
        except InvalidUrl:
            self.skipped += 1
            return
        if url in self.found:
            self.skipped += 1
            return
        self.found[url] = parse_date(date)
        if request is not None:
            self.written[url] = request


def parse_sitemap(
    body: bytes,
    url: str,
    *,
    content_type: str | None = None,
    max_bytes: int = MAX_BYTES,
    max_urls: int = MAX_URLS,
) -> Sitemap:
    """Read a fetched sitemap, sitemap index, text sitemap, RSS or Atom feed.

    ``url`` is where the body came from: relative locations resolve against it.
    ``content_type`` is only used to refuse an HTML page (a soft 404) that would
    otherwise be read as a list of URLs. Raises SitemapError for anything
    malformed, hostile or over ``max_bytes``.
    """
    data = body
    for _ in range(_MAX_GZIP_LAYERS):
        data = decompress(data, max_bytes)
        if not data.startswith(GZIP_MAGIC):
            break
    else:
        raise SitemapError("gzip nested more than twice")
    collector = _Collector(url, max_urls)
    start = _xml_start(data)
    if start is not None:
        # lxml (4 MB resident) loads with the first XML sitemap, not with every crawl.
        from trawl.sitemaps.xmlreader import read_xml  # noqa: PLC0415

        kind: Kind = read_xml(data, start, collector.add)
    else:
        _read_text(data, content_type, collector)
        kind = "text"
    trusted = dates_trusted(d for d in collector.found.values() if d is not None)
    if kind == "index":
        entries: tuple[SitemapEntry, ...] = ()
        children = tuple(collector.found)
    else:
        entries = tuple(
            SitemapEntry(page, lastmod if trusted else None, collector.written.get(page))
            for page, lastmod in collector.found.items()
        )
        children = ()
    return Sitemap(
        url=url,
        kind=kind,
        entries=entries,
        children=children,
        lastmod_trusted=trusted,
        skipped=collector.skipped,
        truncated=collector.truncated,
    )


def decompress(body: bytes, max_bytes: int) -> bytes:
    """Gunzip ``body`` if it is gzip (by its magic bytes), never past ``max_bytes``.

    Output is produced in bounded chunks and counted as it comes, so a gzip bomb
    (1 GB of zeros is 1 MB of gzip) stops at the cap instead of filling memory.
    A body that is not gzip is returned as it is, if it is within the cap.
    """
    if len(body) > max_bytes:
        raise SitemapError(f"sitemap larger than {max_bytes} bytes")
    if not body.startswith(GZIP_MAGIC):
        return body
    chunks: list[bytes] = []
    total = 0
    pending = body
    while True:  # one pass per gzip member: concatenated members are one file
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        while not inflater.eof:
            try:
                chunk = inflater.decompress(pending, _GUNZIP_CHUNK)
            except zlib.error as e:
                raise SitemapError(f"corrupt gzip: {e}") from e
            pending = inflater.unconsumed_tail
            if not chunk and not pending:
                raise SitemapError("gzip stream ends early")
            total += len(chunk)
            if total > max_bytes:
                raise SitemapError(f"gzip sitemap decompresses past {max_bytes} bytes")
            chunks.append(chunk)
        pending = inflater.unused_data
        if not pending.startswith(GZIP_MAGIC):
            break  # trailing padding after the last member is ignored, as gzip -d does
    return b"".join(chunks)


def candidate_urls(origin: str, robots_sitemaps: Sequence[str]) -> list[str]:
    """The sitemap URLs to fetch for a site: robots.txt's, else the usual places.

    ``origin`` is ``scheme://host[:port]``; relative ``Sitemap:`` values resolve
    against its robots.txt. Unusable values are dropped, duplicates kept once.
    Raises InvalidUrl if ``origin`` itself is not an http(s) origin.
    """
    robots_url = normalise("/robots.txt", origin)
    found: dict[str, None] = {}
    for value in robots_sitemaps:
        try:
            found[normalise(value, robots_url)] = None
        except InvalidUrl:
            continue
    if found:
        return list(found)
    return [normalise(path, origin) for path in FALLBACK_PATHS]


def _xml_start(data: bytes) -> int | None:
    """Where the XML parser should start reading, or None when the body is not XML.

    libxml2 refuses an XML declaration after anything at all, but real files
    put white space, a UTF-8 BOM, or (Yoast SEO's static export) a comment
    before it; those are skipped. What follows must be markup: "<".
    """
    if data.startswith(_UTF16_STARTS):
        return 0
    position = len(_UTF8_BOM) if data.startswith(_UTF8_BOM) else 0
    position = _skip_space(data, position)
    if not data.startswith(b"<", position):
        return None
    probe = position
    while data.startswith(b"<!--", probe):
        end = data.find(b"-->", probe + 4)
        if end < 0:
            break
        probe = _skip_space(data, end + 3)
    if data.startswith(b"<?xml", probe):
        return probe
    return position


def _skip_space(data: bytes, position: int) -> int:
    match = _XML_SPACE.match(data, position)
    return match.end() if match else position


def _read_text(data: bytes, content_type: str | None, collector: _Collector) -> None:
    """A text sitemap: one absolute URL per line, UTF-8 (sitemaps.org)."""
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if media_type in _HTML_TYPES:
        raise SitemapError("an HTML page, not a sitemap")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SitemapError("neither XML nor a UTF-8 list of URLs") from e
    urls = 0
    for match in _TEXT_LINE.finditer(text):
        line = match.group().strip()
        if not line:
            continue
        if _ABSOLUTE_URL.match(line):
            # Only absolute URLs: resolving a stray word against the sitemap URL
            # would invent a page.
            urls += 1
            collector.add(line, None)
        else:
            collector.add(None, None)
    if urls == 0:
        raise SitemapError("neither XML nor a list of URLs" if text.strip() else "empty sitemap")
