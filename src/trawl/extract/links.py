"""Every link and resource a page points to, as occurrences with their context.

An occurrence keeps where it was found: the element and attribute, the anchor
or alt text, the rel values and the nearest heading before it (seed 003). Only
``<a href>`` and ``<area href>`` are links to follow; images, scripts,
stylesheets, frames and media are resources, recorded for the report. A page
yields at most ``MAX_OCCURRENCES``; the rest are counted, not kept, so one
link farm cannot flood the store.
"""

from __future__ import annotations

import functools
import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

from trawl.errors import InvalidUrl
from trawl.records import Href, Link
from trawl.urls.identity import MAX_URL_LENGTH, forms

MAX_OCCURRENCES = 10_000
MAX_TEXT_CHARS = 300

# Element -> the attributes holding URLs. srcset holds several, split below.
_URL_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "a": ("href",),
    "area": ("href",),
    "img": ("src", "srcset"),
    "script": ("src",),
    "link": ("href",),
    "iframe": ("src",),
    "frame": ("src",),
    "source": ("src", "srcset"),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "embed": ("src",),
    "object": ("data",),
}
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# One selector list: lexbor returns the matches in document order, which is
# what "the nearest heading before it" needs, in a single pass.
_SELECTOR = ", ".join(
    [
        *sorted(_HEADINGS),
        *(f"{tag}[{attr}]" for tag, attrs in _URL_ATTRIBUTES.items() for attr in attrs),
    ]
)
FOLLOWED = frozenset({"a", "area"})


def occurrences(tree: LexborHTMLParser, base: str) -> tuple[tuple[Link, ...], int]:
    """The page's link and resource occurrences, and how many were dropped over the cap."""
    found: list[Link] = []
    dropped = 0
    heading = ""
    base_dir = base.split("?", 1)[0].rsplit("/", 1)[0] + "/"
    for node in tree.css(_SELECTOR):
        tag = node.tag or ""
        if tag in _HEADINGS:
            heading = _collapse(node.text(separator=""))[:MAX_TEXT_CHARS]
            continue
        # Each read of ``node.attributes`` builds a new dict: once a node.
        attributes = node.attributes
        for attribute in _URL_ATTRIBUTES.get(tag, ()):
            raw = attributes.get(attribute)
            if not raw:
                continue
            for href in _split_srcset(raw) if attribute == "srcset" else [raw.strip()]:
                if not href or href.startswith("#"):
                    continue
                # A query-only link depends on the whole base URL; any other only on
                # the base's folder, which every page of a flat site shares.
                resolved = _resolve(href, base if href.startswith("?") else base_dir)
                if resolved is None:
                    continue  # mailto:, javascript:, malformed: nothing to fetch
                if len(found) >= MAX_OCCURRENCES:
                    dropped += 1
                    continue
                rel = " ".join((attributes.get("rel") or "").lower().split())
                found.append(
                    Link(
                        url=resolved[0],
                        anchor=_anchor(node, tag),
                        nofollow="nofollow" in rel.split(),
                        element=tag,
                        attribute=attribute,
                        rel=rel,
                        heading=heading,
                        request=resolved[1],
                    )
                )
    return tuple(found), dropped


def followed(links: tuple[Link, ...]) -> list[Href]:
    """Targets the crawler should follow: anchors without rel=nofollow, as written."""
    return [
        Href(link.url, link.request)
        for link in links
        if link.element in FOLLOWED and not link.nofollow
    ]


def _anchor(node: LexborNode, tag: str) -> str:
    if tag in FOLLOWED:
        text = _collapse(node.text(separator=""))
        if not text:
            img = node.css_first("img[alt]")
            text = _collapse(img.attributes.get("alt") or "") if img is not None else ""
        if not text and tag == "area":
            text = _collapse(node.attributes.get("alt") or "")
        return text[:MAX_TEXT_CHARS]
    return _collapse(node.attributes.get("alt") or node.attributes.get("title") or "")[
        :MAX_TEXT_CHARS
    ]


def _split_srcset(value: str) -> list[str]:
    # "a.jpg 1x, b.jpg 2x": URLs are the first word of each candidate.
    return [part.split()[0] for part in value.split(",") if part.split()]


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _resolve(href: str, base: str) -> tuple[str, str | None] | None:
    if href[:1] == "/" and href[1:2] != "/" and _SAFE_HREF.fullmatch(href):
        # A path-absolute link keeps only the base's scheme and host: its answer is
        # the base's origin before the link's own part, each worked out once (a
        # crawl of many hosts has the same few paths on every host's home page).
        origin = _origin(base)
        if origin is not None:
            tail = _tail(origin[: origin.index(":")], href)
            if tail is not None:
                identity = origin + tail[0]
                request = None if tail[1] is None else origin + tail[1]
                if len(identity) <= MAX_URL_LENGTH and (
                    request is None or len(request) <= MAX_URL_LENGTH
                ):
                    return identity, request
    return _resolve_whole(href, base)


# Only these hrefs reach the splice: nothing that the WHATWG pre-parse would strip
# or rewrite (see identity._ALREADY_SAFE), so the href is read as written.
_SAFE_HREF = re.compile(r"[A-Za-z0-9\-._~:/?#@!$&()*+,;=%]*")
# A host name nobody owns: it stands in for the base's host while a tail is read.
_STAND_IN = "a"


@functools.lru_cache(maxsize=4096)
def _origin(base: str) -> str | None:
    """``scheme://host[:port]`` of every identity resolved against ``base``; None
    when the base cannot resolve a link (the whole resolution says why)."""
    try:
        identity, _ = forms("/", base=base)
    except InvalidUrl:
        return None
    return identity[:-1]


@functools.lru_cache(maxsize=32_768)
def _tail(scheme: str, href: str) -> tuple[str, str | None] | None:
    """The identity and request of path-absolute ``href`` after the origin.

    Nothing after the origin depends on the base's host: urljoin keeps only the
    base's scheme and netloc for such a link, and the path and query are
    normalised on their own.
    """
    stand_in = f"{scheme}://{_STAND_IN}"
    try:
        identity, request = forms(href, base=stand_in + "/")
    except InvalidUrl:
        return None
    cut = len(stand_in)
    return identity[cut:], None if request is None else request[cut:]


@functools.lru_cache(maxsize=32_768)
def _resolve_whole(href: str, base: str) -> tuple[str, str | None] | None:
    # Sites repeat the same links (navigation, footers) on every page, and
    # normalising is the costliest step of link extraction: remember answers.
    try:
        return forms(href, base=base)
    except InvalidUrl:
        return None
