"""Read the entries of an XML sitemap, sitemap index, RSS or Atom feed, safely.

A sitemap is untrusted input from any site on the web, so the parser is set up
so that nothing in the document can make it read a file, open a connection or
grow memory beyond the document itself:

- lxml's ``resolve_entities=False``, ``load_dtd=False`` and ``no_network=True``:
  no entity is expanded and no external DTD or entity is loaded (checked under
  strace: no file or socket is opened for SYSTEM entities, external parameter
  entities or an external DTD).
- Those flags are not enough on their own: with lxml 6.1 / libxml2 2.14,
  ``collect_ids=False`` quietly makes the parser load external DTDs and
  parameter entities from file:// URLs. So every parser also carries a
  resolver that refuses any external load, whatever the flags say.
- A document whose DTD declares any entity is refused as soon as its root
  element starts: no sitemap needs one, and every entity attack (billion
  laughs, XXE) needs one. libxml2 2.14 also stops entity amplification itself.
- ``huge_tree=False`` keeps libxml2's limits on depth (256) and text node size.
- The tree is pulled in 64 KiB chunks and each element is cleared, with its
  earlier siblings, once read: the tree never holds more than one chunk's
  elements, whatever the number of URLs (measured on a 49 MB urlset: a whole
  tree costs 260 MB; pulled, peak memory does not rise at all).

Namespaces are handled leniently, like crawler-commons' default mode: the root
is recognised by its local name alone, so a sitemap with the wrong namespace
still yields its URLs. A child counts only in its entry's own namespace, the
sitemaps.org one or none, which keeps extension elements such as
``<image:loc>`` and ``<xhtml:link>`` out of the page URLs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from lxml import etree

from trawl.errors import SitemapError

Kind: TypeAlias = Literal["urlset", "index", "text", "feed"]
# Called once per entry with its raw location and raw date (None when missing).
AddEntry: TypeAlias = Callable[[str | None, str | None], None]

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
DUBLIN_CORE_NS = "http://purl.org/dc/elements/1.1/"
CHUNK = 64 * 1024

# Root local name -> (kind, local name of one entry). "RDF" is RSS 1.0.
_ROOTS: dict[str, tuple[Kind, str]] = {
    "urlset": ("urlset", "url"),
    "sitemapindex": ("index", "sitemap"),
    "rss": ("feed", "item"),
    "RDF": ("feed", "item"),
    "feed": ("feed", "entry"),
}


@dataclass(slots=True)
class _Entry:
    """What has been read so far of one <url>, <sitemap>, <item> or <entry>."""

    namespace: str
    depth: int
    locs: list[str | None] = field(default_factory=list)
    date: str | None = None
    guid: str | None = None


@dataclass(slots=True)
class _Reader:
    add: AddEntry
    kind: Kind | None = None
    entry_name: str = ""
    depth: int = 0
    entry: _Entry | None = None

    def start(self, element: etree._Element) -> None:
        self.depth += 1
        namespace, name = _split(element)
        if self.depth == 1:
            self._root(element, name)
        elif self.entry is None and name == self.entry_name:
            self.entry = _Entry(namespace, self.depth)

    def end(self, element: etree._Element) -> None:
        entry = self.entry
        if entry is not None:
            if self.depth == entry.depth + 1:
                self._child(entry, element)
            elif self.depth == entry.depth:
                self._finish(entry, element)
                self.entry = None
        if self.depth >= 2:
            # Read already: free it and the siblings before it (lxml's iterparse idiom).
            element.clear(keep_tail=True)
            parent = element.getparent()
            while parent is not None and element.getprevious() is not None:
                del parent[0]
        self.depth -= 1

    def _root(self, root: etree._Element, name: str) -> None:
        docinfo = root.getroottree().docinfo
        for dtd in (docinfo.internalDTD, docinfo.externalDTD):
            if dtd is not None and any(True for _ in dtd.iterentities()):
                raise SitemapError("sitemap declares XML entities: refused (entity attack)")
        if name not in _ROOTS:
            raise SitemapError(f"not a sitemap or feed: the root element is <{name[:40]}>")
        self.kind, self.entry_name = _ROOTS[name]

    def _child(self, entry: _Entry, child: etree._Element) -> None:
        namespace, name = _split(child)
        if namespace not in (entry.namespace, SITEMAP_NS, ""):
            if name == "date" and namespace == DUBLIN_CORE_NS and entry.date is None:
                entry.date = _text(child)  # RSS 1.0 dates items with <dc:date>
            return
        if self.kind in ("urlset", "index"):
            if name == "loc":
                entry.locs.append(_text(child))
            elif name == "lastmod" and entry.date is None:
                entry.date = _text(child)
        elif self.entry_name == "item":
            if name == "link" and not entry.locs:
                entry.locs.append(_text(child))
            elif name == "guid" and entry.guid is None:
                entry.guid = _text(child)
            elif name == "pubDate" and entry.date is None:
                entry.date = _text(child)
        elif name == "link" and not entry.locs:  # Atom: the first alternate link
            href = child.get("href")
            if href and child.get("rel", "alternate").strip() == "alternate":
                entry.locs.append(href)
        elif name == "updated" and entry.date is None:
            entry.date = _text(child)

    def _finish(self, entry: _Entry, element: etree._Element) -> None:
        locs = entry.locs
        if not locs and self.kind in ("urlset", "index"):
            # crawler-commons' fixture index puts the URL straight into <sitemap>.
            locs = [(element.text or "").strip() or None]
        elif not any(locs) and entry.guid and entry.guid.lower().startswith(("http:", "https:")):
            locs = [entry.guid]  # RSS: an item with no <link> but a URL as its guid
        if not locs:
            locs = [None]
        # Several <loc> in one <url> (an unclosed element): whose date it is is unknown.
        date = entry.date if len(locs) == 1 else None
        for loc in locs:
            self.add(loc, date)


class RefuseExternal(etree.Resolver):
    """Answers every request for an external DTD, entity or XInclude with an error."""

    def resolve(self, system_url: str | None, public_id: str | None, context: object) -> None:
        raise SitemapError(f"sitemap asks to load {str(system_url)[:80]!r}: refused")


def new_parser() -> etree.XMLPullParser:
    """A pull parser that expands no entity and loads nothing from outside."""
    parser = etree.XMLPullParser(
        events=("start", "end"),
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,  # so "<loc>a<!-- -->b</loc>" reads as "ab"
        remove_pis=True,
        # collect_ids stays at its default: False makes lxml load external DTDs.
    )
    parser.resolvers.add(RefuseExternal())
    return parser


def read_xml(body: bytes, start: int, add: AddEntry) -> Kind:
    """Feed ``body[start:]`` through the safe parser, calling ``add`` for each entry.

    Returns the kind of document; raises SitemapError when it is not
    well-formed, declares entities, asks for anything external, or is not a
    sitemap, index or feed.
    """
    parser = new_parser()
    reader = _Reader(add)
    try:
        for offset in range(start, len(body), CHUNK):
            parser.feed(body[offset : offset + CHUNK])
            _drain(parser, reader)
        parser.close()
        _drain(parser, reader)
    except etree.LxmlError as e:
        raise SitemapError(f"not well-formed XML: {str(e)[:200]}") from e
    if reader.kind is None:
        raise SitemapError("no XML root element")
    return reader.kind


def _drain(parser: etree.XMLPullParser, reader: _Reader) -> None:
    for event, element in parser.read_events():
        if event == "start":
            reader.start(element)
        else:
            reader.end(element)


def _split(element: etree._Element) -> tuple[str, str]:
    """(namespace, local name) of an element, from lxml's "{namespace}name" tag."""
    tag = element.tag
    if not isinstance(tag, str):  # parsed elements always have str tags; for the type checker
        return "", ""
    if tag.startswith("{"):
        namespace, _, name = tag[1:].partition("}")
        return namespace, name
    return "", tag


def _text(element: etree._Element) -> str | None:
    """An element's text, or None when it holds elements or unexpanded entities.

    A <loc> holding an XInclude or an entity reference must not become a URL
    made of what is left around it.
    """
    if len(element):
        return None
    return (element.text or "").strip() or None
