"""URL identity: two links that name the same resource get the same string.

The rules (seed 003): resolve against the page, keep only http and https,
drop the fragment, drop ``utm_*`` and known click-tracking parameters, sort
the remaining query. On top of that the ordinary RFC 3986 normalisations:
lower-case scheme and host, IDNA host, no default port, dot segments removed,
an empty path written as ``/``, unsafe characters percent-encoded (w3lib).
"""

from __future__ import annotations

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
    netloc = _netloc(parts)
    # urljoin against the bare origin applies RFC 3986 remove_dot_segments.
    path = urlsplit(urljoin(f"{parts.scheme}://{netloc}/", parts.path or "/")).path
    return urlunsplit((parts.scheme, netloc, path, _clean_query(parts.query), ""))


def split(url: str) -> SplitResult:
    """Parse an absolute http(s) URL, percent-encoding what browsers would."""
    try:
        parts = urlsplit(safe_url_string(url))
        scheme = parts.scheme.lower()
        if scheme not in SCHEMES:
            raise InvalidUrl(f"only http and https URLs can be crawled, not {url[:80]!r}")
        if parts.username is not None or parts.password is not None:
            raise CredentialsInUrl("URLs with user:password are refused")
        if not parts.hostname:
            raise InvalidUrl(f"URL has no host: {url[:80]!r}")
        parts.port  # noqa: B018 - raises ValueError on a bad port
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
