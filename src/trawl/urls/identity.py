"""URL identity: two links that name the same resource get the same string.

The rules (seed 003): resolve against the page, keep only http and https,
drop the fragment, drop ``utm_*`` and known click-tracking parameters, sort
the remaining query. On top of that the ordinary RFC 3986 normalisations:
lower-case scheme and host, IDNA host, no default port, dot segments removed,
an empty path written as ``/``, unsafe characters percent-encoded (w3lib).
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, unquote_plus, urljoin, urlsplit, urlunsplit

from w3lib.url import safe_url_string

from trawl.errors import CredentialsInUrl, InvalidUrl

SCHEMES = frozenset({"http", "https"})
DEFAULT_PORTS = {"http": 80, "https": 443}
TRACKING_PARAMS = frozenset(
    {
        "dclid",
        "fbclid",
        "gclid",
        "gbraid",
        "mc_cid",
        "mc_eid",
        "msclkid",
        "twclid",
        "wbraid",
    }
)
MAX_URL_LENGTH = 16_384
# URLs made only of these characters come out of w3lib's safe_url_string
# unchanged, so the (costly) call is skipped for them: most links on most pages.
_ALREADY_SAFE = re.compile(r"[A-Za-z0-9\-._~:/?#@!$&()*+,;=%]*")


def normalise(url: str, base: str | None = None) -> str:
    """The identity of ``url`` (resolved against ``base``), or raise InvalidUrl."""
    url = url.strip()
    if len(url) > MAX_URL_LENGTH:
        raise InvalidUrl(f"URL longer than {MAX_URL_LENGTH} characters")
    if base is not None:
        try:
            url = urljoin(base, url)
        except ValueError as e:
            raise InvalidUrl(f"cannot resolve {url!r}: {e}") from e
    parts = split(url)
    path = parts.path or "/"
    if "/." in path:
        path = remove_dot_segments(path)
    identity = urlunsplit((parts.scheme, _netloc(parts), path, _clean_query(parts.query), ""))
    if len(identity) > MAX_URL_LENGTH:  # resolving and percent-encoding can lengthen a URL
        raise InvalidUrl(f"URL longer than {MAX_URL_LENGTH} characters once resolved")
    return identity


def remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 for an absolute path.

    Written out because urljoin, the standard library's only route to it,
    reads a path starting with "//" as a host name.
    """
    output: list[str] = []
    segments = path.split("/")[1:]
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if output:
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/" + "/".join(output)


def split(url: str) -> SplitResult:
    """Parse an absolute http(s) URL, percent-encoding what browsers would."""
    try:
        parts = urlsplit(url if _ALREADY_SAFE.fullmatch(url) else safe_url_string(url))
        scheme = parts.scheme.lower()
        if scheme not in SCHEMES:
            raise InvalidUrl(f"only http and https URLs can be crawled, not {url[:80]!r}")
        if parts.username is not None or parts.password is not None:
            raise CredentialsInUrl("URLs with user:password are refused")
        if not parts.hostname:
            raise InvalidUrl(f"URL has no host: {url[:80]!r}")
        if parts.port == 0:  # parts.port also raises ValueError on a malformed port
            raise InvalidUrl(f"port 0 cannot be fetched: {url[:80]!r}")
    except ValueError as e:  # urlsplit, IDNA and port errors
        raise InvalidUrl(f"malformed URL {url[:80]!r}: {e}") from e
    return parts._replace(scheme=scheme)


def host_port(url: str) -> tuple[str, int]:
    """Host and effective port of an identity URL."""
    parts = split(url)
    assert parts.hostname is not None  # split() guarantees it
    return parts.hostname, parts.port or DEFAULT_PORTS[parts.scheme]


def origin(url: str) -> str:
    """``scheme://host[:port]`` of an identity URL: the key for robots.txt and politeness."""
    parts = split(url)
    return f"{parts.scheme}://{_netloc(parts)}"


def _netloc(parts: SplitResult) -> str:
    host = (parts.hostname or "").rstrip(".")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    port = parts.port
    if port is not None and port != DEFAULT_PORTS[parts.scheme]:
        return f"{host}:{port}"
    return host


def _clean_query(query: str) -> str:
    kept = []
    for pair in query.split("&"):
        if not pair:
            continue
        name = unquote_plus(pair.split("=", 1)[0]).lower()
        if name.startswith("utm_") or name in TRACKING_PARAMS:
            continue
        kept.append(pair)
    return "&".join(sorted(kept))
