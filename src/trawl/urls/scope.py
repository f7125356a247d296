"""Which discovered URLs belong to a crawl: exact host and port (seed 003).

A different subdomain, port or www/no-www alias is external. The one
tolerated difference is an http -> https upgrade on the standard ports of the
same host; a downgrade is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from trawl.urls.identity import split


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
        """``url`` must be an identity (``normalise``'s output): it is not re-checked here."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return False
        if (parts.hostname or "").rstrip(".") != self.host.rstrip("."):
            return False
        port = _explicit_port(parts.scheme, parts.port)
        if parts.scheme == self.scheme:
            return port == self.port
        # Only the upgrade http -> https on default ports is the same site.
        return (
            (self.scheme, parts.scheme) == ("http", "https") and port is None and self.port is None
        )


def _explicit_port(scheme: str, port: int | None) -> int | None:
    default = {"http": 80, "https": 443}[scheme]
    return None if port in (None, default) else port
