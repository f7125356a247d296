"""Which discovered URLs belong to a crawl.

Three scopes, chosen by name with ``make_scope``:

``host`` (``HostScope``, the default of seed 003)
    Exact host and port. A different subdomain, port or www/no-www alias is
    external. The one tolerated difference is an http -> https upgrade on
    the standard ports of the same host; a downgrade is refused.
``site`` (``SiteScope``)
    Every host under the start URL's registrable domain ("eTLD+1"):
    www.example.com, example.com and docs.example.com are one site,
    example.co.uk and example.com are two. Scheme and port are not part of
    a site, so either scheme on any port is inside. The Public Suffix List's
    private section counts (alice.github.io and bob.github.io are two
    sites: they have two owners). A start host with no registrable domain
    (an IP address, ``localhost``, a name under a suffix the list does not
    know, or a public suffix itself) is a site of exactly that host.
``web`` (``WebScope``)
    Every http and https URL. Per-host limits are the frontier's business.

``contains`` is given identities (``normalise``'s output) and does not
re-check them. The suffix list is the snapshot bundled with tldextract: it is
never fetched and never cached on disk, so a crawl's scope does not change
with the day it starts or the network it runs on.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from trawl.errors import InvalidUrl
from trawl.urls.identity import SCHEMES, split

if TYPE_CHECKING:
    import tldextract

SCOPE_KINDS = ("host", "site", "web")


class Scope(Protocol):
    def contains(self, url: str) -> bool:
        """Whether the identity ``url`` belongs to the crawl."""
        ...


def make_scope(kind: str, start_url: str) -> Scope:
    """The scope called ``kind`` ("host", "site" or "web") around ``start_url``.

    Raises InvalidUrl for an unknown kind or an unusable start URL.
    """
    if kind == "host":
        return HostScope.of(start_url)
    if kind == "site":
        return SiteScope.of(start_url)
    if kind == "web":
        return WebScope.of(start_url)
    raise InvalidUrl(f"unknown crawl scope {kind!r}: use one of {', '.join(SCOPE_KINDS)}")


class CrawlScope:
    """The union of the ``kind`` scopes around each of a crawl's start URLs, answered by
    one set lookup whatever their number.

    Asking each start URL's scope in turn cost a crawl of 1,000 hosts 500,000 calls
    before its first request, and as many again for every thousand links it found.
    """

    def __init__(self, kind: str, start_urls: Iterable[str]) -> None:
        scopes = [make_scope(kind, u) for u in start_urls]
        self._web = any(isinstance(s, WebScope) for s in scopes)
        self._origins = frozenset(
            origin
            for s in scopes
            if isinstance(s, HostScope)
            for origin in _origins(s.scheme, s.host, s.port)
        )
        sites = [s for s in scopes if isinstance(s, SiteScope)]
        self._domains = frozenset(s.domain for s in sites if s.domain is not None)
        self._site_hosts = frozenset(s.host for s in sites if s.domain is None)

    def contains(self, url: str) -> bool:
        """``url`` must be an identity (``normalise``'s output): it is not re-checked here."""
        if self._web:
            return urlsplit(url).scheme in SCHEMES
        if self._origins and _origin(url) in self._origins:
            return True
        if not (self._domains or self._site_hosts):
            return False
        parts = urlsplit(url)
        if parts.scheme not in SCHEMES:
            return False
        host = parts.hostname or ""
        return host in self._site_hosts or registrable_domain(host) in self._domains


def _origin(url: str) -> str:
    """An identity's "scheme://netloc/": what ``HostScope`` compares as a prefix."""
    end = url.find("/", url.find("://") + 3)
    return url[: end + 1] if end != -1 else ""


@dataclass(frozen=True, slots=True)
class HostScope:
    scheme: str
    host: str
    port: int | None  # None: the scheme's default port

    @classmethod
    def of(cls, start_url: str) -> HostScope:
        parts = split(start_url)
        return cls(parts.scheme, parts.hostname or "", _explicit_port(parts.scheme, parts.port))

    def contains(self, url: str) -> bool:
        """``url`` must be an identity (``normalise``'s output): it is not re-checked here.

        An identity spells its origin one way only (lower-case host, no default
        port, a path from "/"), so a prefix test is exact; it runs for every
        link on every page.
        """
        return url.startswith(_origins(self.scheme, self.host, self.port))


@functools.lru_cache(maxsize=1024)
def _origins(scheme: str, host: str, port: int | None) -> tuple[str, ...]:
    """The origin prefixes of identity URLs in a host scope."""
    bracketed = f"[{host}]" if ":" in host else host
    netloc = bracketed if port is None else f"{bracketed}:{port}"
    own = f"{scheme}://{netloc}/"
    # Only the upgrade http -> https on default ports is the same site.
    if scheme == "http" and port is None:
        return (own, f"https://{netloc}/")
    return (own,)


@dataclass(frozen=True, slots=True)
class SiteScope:
    domain: str | None  # registrable domain; None: only ``host`` itself
    host: str

    @classmethod
    def of(cls, start_url: str) -> SiteScope:
        host = split(start_url).hostname or ""
        return cls(registrable_domain(host), host)

    def contains(self, url: str) -> bool:
        """``url`` must be an identity (``normalise``'s output): it is not re-checked here."""
        parts = urlsplit(url)
        if parts.scheme not in SCHEMES:
            return False
        host = parts.hostname or ""
        if self.domain is None:
            return host == self.host
        # Cheap refusal first: a host outside the domain cannot end with it.
        if host != self.domain and not host.endswith("." + self.domain):
            return False
        return registrable_domain(host) == self.domain


@dataclass(frozen=True, slots=True)
class WebScope:
    @classmethod
    def of(cls, start_url: str) -> WebScope:
        split(start_url)  # refuse an unusable start URL here too
        return cls()

    def contains(self, url: str) -> bool:
        """``url`` must be an identity (``normalise``'s output): it is not re-checked here."""
        return urlsplit(url).scheme in SCHEMES


@functools.lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str | None:
    """The registrable domain (eTLD+1) of a lower-case host, or None when it has none.

    None for IP literals, single labels such as ``localhost``, hosts under a
    suffix the Public Suffix List does not know, and public suffixes
    themselves (``co.uk``, ``github.io``).
    """
    if not host or host.startswith("[") or ":" in host:
        return None
    found = _extractor()(host)
    if not found.suffix or not found.domain:
        return None  # an IP address, or not under a known public suffix
    return found.top_domain_under_public_suffix


@functools.cache
def _extractor() -> tldextract.TLDExtract:
    # Imported here: tldextract pulls in requests (a sixth of a second),
    # which a host-scope crawl never needs.
    import tldextract  # noqa: PLC0415

    # No suffix list URLs and no cache directory: tldextract falls back to the
    # snapshot inside the package, with no network request and no file written.
    return tldextract.TLDExtract(
        suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True
    )


def _explicit_port(scheme: str, port: int | None) -> int | None:
    default = {"http": 80, "https": 443}[scheme]
    return None if port in (None, default) else port
