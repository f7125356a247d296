"""``host_aliases``: a site's requests sent to another host:port, the site named in Host.

A mirror, a staging copy or a site behind a proxy is crawled as itself: its URLs
keep the site's name, and each request goes over plain HTTP to the address the
user gave, with ``Host`` naming the site (what a virtual host or a proxy needs to
answer as it). The crawl's fetcher and the header checks both go through here, so
neither ever resolves an aliased name.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from trawl.net.addresses import Target


def aliased(url: str, target: Target) -> tuple[str, str]:
    """The URL to request for ``url`` at ``target`` instead, and the Host to send."""
    parts = urlsplit(url)
    host = f"[{target[0]}]" if ":" in target[0] else target[0]
    request_url = urlunsplit(("http", f"{host}:{target[1]}", parts.path, parts.query, ""))
    return request_url, parts.netloc


def unaliased(
    received: tuple[tuple[str, str], ...], url: str, target: Target
) -> tuple[tuple[str, str], ...]:
    """Response headers with a Location naming the target's own address turned back into
    the site's: the mirror redirecting to itself is the site redirecting."""
    host = f"[{target[0]}]" if ":" in target[0] else target[0]
    mirror = f"http://{host}:{target[1]}"
    parts = urlsplit(url)
    site = f"{parts.scheme}://{parts.netloc}"
    return tuple(
        (k, site + v[len(mirror) :])
        if k.lower() == "location"
        and v.startswith(mirror)
        and v[len(mirror) : len(mirror) + 1] in ("", "/", "?")
        else (k, v)
        for k, v in received
    )
