"""Rules for a URL a person types to start a crawl (seed 003, "Starting URL")."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from trawl.errors import ConfigError, InvalidUrl
from trawl.urls.identity import forms, normalise

_HAS_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
_SCHEME_LIKE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$", re.DOTALL)
_PORT_THEN_REST = re.compile(r"^\d+([/?#]|$)")
# Typed without "//", these are schemes, not host names.
# After IDNA: ASCII letters, digits, hyphen and underscore labels (a trailing dot allowed).
_DNS_HOST = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?")
_OTHER_SCHEMES = frozenset({"mailto", "javascript", "tel", "data", "file", "ftp", "about", "blob"})


def parse_start_url(text: str) -> str:
    """Normalised start URL: ``https://`` added when no scheme is given.

    Raises InvalidUrl as ``start_request`` does.
    """
    return normalise(start_request(text))


def start_request(text: str) -> str:
    """The start URL to request: as typed (seed 003, query order and escapes kept, read
    as ``identity.forms`` reads a link), ``https://`` added when no scheme is given.

    Raises InvalidUrl (or its subclass CredentialsInUrl) with a message fit
    to show a person as it is.
    """
    text = text.strip()
    if not text:
        raise InvalidUrl("empty start URL")
    # A browser reads "//example.com" and "http:///x" as naming a host; typed
    # by a person they are more likely a slip, and the crawl must not start
    # on a host nobody meant.
    scheme_match = _HAS_SCHEME.match(text)
    rest = text[scheme_match.end() :] if scheme_match else text
    web = scheme_match is None or scheme_match.group(1).lower() in ("http", "https")
    if web and rest.startswith(("/", "\\")):
        raise InvalidUrl(f"no host in the start URL {text[:80]!r}")
    if not scheme_match:
        if _is_other_scheme(text):
            raise InvalidUrl(f"only http and https URLs can be crawled, not {text[:80]!r}")
        text = "https://" + text
    url, request = forms(text)
    host = urlsplit(url).hostname or ""
    # Browsers accept ' " { } + and more in a host name; DNS names never hold them, and
    # a host is shown on the admin pages and written into links and attributes.
    if not (_DNS_HOST.fullmatch(host) or _is_ip(host)):
        raise InvalidUrl(
            "a host name holds only letters, digits, hyphens, underscores and dots,"
            f" not {host[:80]!r}"
        )
    return request or url


def start_forms(start_urls: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The start URLs' identities, once each, and the URL to request for those typed
    otherwise (seed 003: the first form written is what is sent)."""
    identities: dict[str, None] = {}
    requests: dict[str, str] = {}
    for url in start_urls:
        identity, request = forms(url)
        identities[identity] = None
        if request is not None:
            requests.setdefault(identity, request)
    return list(identities), requests


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_other_scheme(text: str) -> bool:
    """ "mailto:x" is a scheme; "example.com:8080/x" and "user:pw@host" are not."""
    match = _SCHEME_LIKE.match(text)
    if match is None:
        return False
    prefix, rest = match.groups()
    if prefix.lower() in _OTHER_SCHEMES:
        return True
    has_userinfo = "@" in text.split("/", 1)[0]
    return not _PORT_THEN_REST.match(rest) and not has_userinfo


def parse_host_aliases(text: str) -> dict[str, tuple[str, int]]:
    """``"sumo.dlr.de=127.0.0.1:8765, b.example=10.0.0.2:80"`` as {host: (host, port)}:
    the crawl names pages by the first host and sends their requests to the second."""
    aliases: dict[str, tuple[str, int]] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        name, sep, target = pair.partition("=")
        host, colon, port = target.strip().rpartition(":")
        name = name.strip().lower().rstrip(".")
        if not sep or not name or not colon or not host or not _ascii_digits(port):
            raise ConfigError(f"an alias is HOST=TARGET_HOST:PORT, not {pair!r}")
        if not 0 < int(port) < 65536:
            raise ConfigError(f"alias {pair!r}: port out of range")
        host = host.strip().strip("[]").lower()
        for part in (name, host):
            # Such a name is no URL's host and no address: the alias would never apply.
            if any(c.isspace() or c in "/?#@\\" for c in part):
                raise ConfigError(f"alias {pair!r}: {part!r} is not a host name")
        name = _alias_host(name, pair)
        if name in aliases:
            # Two targets for one site: whichever came last would win without a word.
            raise ConfigError(f"alias {pair!r}: {name} is aliased twice")
        aliases[name] = (host, int(port))
    return aliases


def _ascii_digits(text: str) -> bool:
    # str.isdigit also takes "²" (which int() refuses) and other scripts' digits.
    return text.isascii() and text.isdigit()


def _alias_host(name: str, pair: str) -> str:
    """An alias's host as a URL's identity names it (an IDN by its punycode): the
    fetcher looks aliases up by that host, so any other spelling never applied."""
    try:
        url = normalise(f"http://{name}/")
    except InvalidUrl as e:
        raise ConfigError(f"alias {pair!r}: {name!r} is not a host name ({e})") from None
    parts = urlsplit(url)
    if parts.port is not None or parts.hostname is None:
        raise ConfigError(f"alias {pair!r}: the alias is a host name, not a host:port")
    return parts.hostname
