"""The network's one interface: ``Transport.fetch(FetchRequest) -> FetchResult``.

Every request Trawl makes goes through it: the crawl's pages, robots.txt and
sitemaps, a rendered page's subrequests and the header checks (HEAD). An
implementation makes one hop (no redirect is followed: callers see each
Location and judge it), applies the address policy once, inside, to the
address it connects to (no second lookup can answer differently), and raises
only ``trawl.errors.FetchError``s. ``trawl.net.fetcher.Fetcher`` is the one
implementation, over aiohttp; callers are typed against this protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from trawl.records import FetchResult

Method = Literal["GET", "HEAD"]
# What the crawler reads as HTML (FetchResult.is_html): XHTML's body is wanted too.
HTML_TYPES: frozenset[str] = frozenset({"text/html", "application/xhtml+xml"})
ANY_TYPE: frozenset[str] = frozenset({"*"})


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """One request, one hop.

    The body is read (up to ``max_bytes``, decompressed) only when the answer's
    media type is in ``read_types`` or ``read_types`` holds ``"*"``; a body whose
    Content-Length already says it is larger is refused unread, unless
    ``cut_declared`` asks for its first ``max_bytes`` (robots.txt: RFC 9309 2.5
    parses the first 500 KiB of a longer file). A HEAD reads no body.
    ``headers`` are added to the transport's own (a conditional request's).
    """

    url: str
    method: Method = "GET"
    max_bytes: int = 0
    read_types: frozenset[str] = HTML_TYPES
    headers: tuple[tuple[str, str], ...] = ()
    cut_declared: bool = False


class Transport(Protocol):
    async def fetch(self, request: FetchRequest) -> FetchResult:
        """The answer to ``request``; FetchError when no usable HTTP answer arrived."""
        ...
