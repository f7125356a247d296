"""URL identity: two links that name the same resource get the same string.

The rules (seed 003): resolve against the page, keep only http and https,
drop the fragment, drop ``utm_*`` and known click-tracking parameters, sort
the remaining query. On top of that the ordinary RFC 3986 normalisations:
lower-case scheme and host, IDNA host, no default port, dot segments removed,
an empty path written as ``/``, unsafe characters percent-encoded (w3lib),
percent-escapes of unreserved characters decoded and the others written in
upper case (``%7e`` -> ``~``, ``%c3%a9`` -> ``%C3%A9``).

The input is read the way a browser reads an ``href`` (the WHATWG URL
standard), so that a link leads where a person clicking it would land:
surrounding C0 controls and spaces are stripped, tabs and newlines dropped,
``\\`` counts as ``/`` before the query, ``http:example.com`` and
``///example.com`` find their host, and the host goes through the WHATWG host
parser (percent-decoding, UTS 46 IDNA, IPv4 in any of its decimal, octal or
hex spellings written as a dotted quad, IPv6 compressed). Where we part from
the standard on purpose: the trailing dot of a host is dropped, empty
credentials (``http://@host``) are dropped and any others refused, port 0 is
refused, and invalid percent-escapes (``%zz``) are kept as browsers send them.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from urllib.parse import SplitResult, unquote_plus, unquote_to_bytes, urljoin, urlsplit

import idna
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
# They also hold nothing the WHATWG pre-parse would strip or rewrite (no
# control, space, tab, newline or backslash), so that step is skipped too.
_ALREADY_SAFE = re.compile(r"[A-Za-z0-9\-._~:/?#@!$&()*+,;=%]*")

_C0_CONTROL_OR_SPACE = "".join(chr(i) for i in range(0x21))
_TAB_OR_NEWLINE = str.maketrans("", "", "\t\n\r")
# "http:" or "https:" and the slashes after it, once "\" has become "/".
_SPECIAL_SCHEME = re.compile(r"(https?):(/*)", re.IGNORECASE)
# WHATWG "forbidden domain code point": never valid in a host name.
_FORBIDDEN_IN_DOMAIN = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def normalise(url: str, base: str | None = None) -> str:
    """The identity of ``url`` (resolved against ``base``), or raise InvalidUrl."""
    return _identity(_resolved(url, base))


def forms(url: str, base: str | None = None) -> tuple[str, str | None]:
    """The identity of ``url`` and the URL to request for it, None when that is the
    identity; raise InvalidUrl as ``normalise`` does.

    The identity decides whether a URL was seen; the request is the link as written
    (seed 003: the first exact URL is what is sent), read as a browser reads it (host
    canonical, default port and fragment dropped, dot segments removed, unsafe
    characters percent-encoded) with its query order, repeated and tracking fields and
    percent-escapes kept: a server may sign its query or tell ``%7E`` from ``~``.
    """
    parts = _resolved(url, base)
    identity = _identity(parts)
    path = parts.path or "/"
    if "/." in path:
        path = remove_dot_segments(path)
    request = f"{parts.scheme}://{_netloc(parts)}{path}"
    if parts.query:
        request += "?" + parts.query
    if request == identity or len(request) > MAX_URL_LENGTH:
        return identity, None
    return identity, request


def _resolved(url: str, base: str | None) -> SplitResult:
    """``url`` resolved against ``base`` and split, before any normalisation."""
    if not _ALREADY_SAFE.fullmatch(url):
        url = _clean(url)
    if len(url) > MAX_URL_LENGTH:
        raise InvalidUrl(f"URL longer than {MAX_URL_LENGTH} characters")
    url = _authority_first(url, base)
    # An absolute http(s) URL needs no base (and urljoin would reject some
    # authorities that _split refuses with a better reason, credentials first).
    if base is not None and not url.startswith(("http://", "https://")):
        try:
            url = urljoin(base, url)
        except ValueError as e:
            raise InvalidUrl(f"cannot resolve {url!r}: {e}") from e
    return _split(url)


def _identity(parts: SplitResult) -> str:
    path = parts.path or "/"
    if "%" in path:
        # Before dot segments: "%2e%2e" is "..", and must be removed like it.
        path = _normalise_escapes(path)
    if "/." in path:
        path = remove_dot_segments(path)
    query = parts.query
    if "%" in query:
        query = _normalise_escapes(query)  # before sorting: "%61=1" sorts as "a=1"
    query = _clean_query(query)
    identity = f"{parts.scheme}://{_netloc(parts)}{path}"
    if query:
        identity += "?" + query
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
    """Parse an absolute http(s) URL, percent-encoding what browsers would.

    The netloc is the canonical host (WHATWG host parser) and the port as a
    number; the default port is kept, as the URL gave it.
    """
    if not _ALREADY_SAFE.fullmatch(url):
        url = _clean(url)
    return _split(_authority_first(url, None))


def host_port(url: str) -> tuple[str, int]:
    """Host and effective port of an identity URL."""
    parts = split(url)
    assert parts.hostname is not None  # split() guarantees it
    return parts.hostname, parts.port or DEFAULT_PORTS[parts.scheme]


def politeness_host(url: str) -> str:
    """The key politeness is kept by: one server, whatever the scheme or port ("" for
    none). Loose on purpose: any URL, identity or not, gives the host it would reach."""
    if url.startswith(("http://", "https://")) and url.isascii():
        # The frontier asks this of every link it admits: the host depends on the
        # scheme and netloc only, so it is read once per origin. (The tabs and
        # newlines urlsplit drops first move no "/", "?" or "#".)
        start = url.index("/") + 2
        end = len(url)
        for mark in "/?#":
            at = url.find(mark, start)
            if at != -1 and at < end:
                end = at
        return _politeness_host(url[:end])
    return urlsplit(url).hostname or ""


@functools.lru_cache(maxsize=8192)
def _politeness_host(origin: str) -> str:
    return urlsplit(origin).hostname or ""


def origin(url: str) -> str:
    """``scheme://host[:port]`` of an identity URL: the key for robots.txt and politeness."""
    parts = split(url)
    return f"{parts.scheme}://{_netloc(parts)}"


def _clean(url: str) -> str:
    """The WHATWG pre-parse: what a browser ignores or rewrites before parsing."""
    url = url.strip(_C0_CONTROL_OR_SPACE)
    if "\t" in url or "\n" in url or "\r" in url:
        url = url.translate(_TAB_OR_NEWLINE)
    if "\\" in url:
        # In http(s) URLs "\" is "/" up to the query. Rewriting it for other
        # schemes too is harmless: we refuse them anyway.
        cut = len(url)
        for mark in "?#":
            at = url.find(mark)
            if at != -1:
                cut = min(cut, at)
        url = url[:cut].replace("\\", "/") + url[cut:]
    return url


def _authority_first(url: str, base: str | None) -> str:
    """Rewrite the forms where a browser finds a host that urljoin would miss.

    ``http:example.com`` and ``http:/example.com`` (no base, or a base with
    another scheme) and ``http:///example.com`` name the host example.com;
    so does ``///example.com`` against an http(s) base. urljoin would read
    all of them as paths.
    """
    if url.startswith("//"):
        if base is not None and url.startswith("///"):
            return "//" + url.lstrip("/")
        return url
    if url.startswith(("http://", "https://")) and not url.startswith(("http:///", "https:///")):
        return url
    match = _SPECIAL_SCHEME.match(url)
    if match is None:
        return url
    scheme, slashes = match.group(1).lower(), len(match.group(2))
    same_scheme = base is not None and base[: len(scheme) + 1].lower() == scheme + ":"
    if same_scheme and slashes < 2:
        return url  # relative to the base, which urljoin does right
    return f"{scheme}://{url[match.end() :]}"


def _split(url: str) -> SplitResult:
    """``split`` for a URL already through ``_clean`` and ``_authority_first``."""
    scheme, colon, rest = url.partition(":")
    scheme = scheme.lower()
    if not colon or scheme not in SCHEMES:
        raise InvalidUrl(f"only http and https URLs can be crawled, not {url[:80]!r}")
    if not rest.startswith("//"):
        raise InvalidUrl(f"URL has no host: {url[:80]!r}")
    end = len(rest)
    for mark in "/?#":
        at = rest.find(mark, 2)
        if at != -1:
            end = min(end, at)
    netloc = _canonical_netloc(rest[2:end], url)
    tail = rest[end:]
    if not _ALREADY_SAFE.fullmatch(tail):
        # The netloc is plain ASCII now, so w3lib only percent-encodes the tail.
        try:
            safe = safe_url_string(f"{scheme}://{netloc}{tail}")
        except ValueError as e:  # a lone surrogate cannot be encoded
            raise InvalidUrl(f"malformed URL {url[:80]!r}: {e}") from e
        end = len(safe)
        for mark in "/?#":
            at = safe.find(mark, len(scheme) + 3)
            if at != -1:
                end = min(end, at)
        tail = safe[end:]
    tail, _, fragment = tail.partition("#")
    path, _, query = tail.partition("?")
    return SplitResult(scheme, netloc, path, query, fragment)


def _canonical_netloc(authority: str, url: str) -> str:
    """``host[:port]`` of an authority; refuses credentials and bad hosts or ports."""
    userinfo, at, hostport = authority.rpartition("@")
    # "http://@host" and "http://:@host" name no user: nothing secret to refuse.
    if at and userinfo not in ("", ":"):
        raise CredentialsInUrl("URLs with user:password are refused")
    if hostport.startswith("["):
        close = hostport.find("]")
        if close == -1:
            raise InvalidUrl(f"malformed IPv6 host in {url[:80]!r}")
        host, after = hostport[: close + 1], hostport[close + 1 :]
        if after and not after.startswith(":"):
            raise InvalidUrl(f"malformed IPv6 host in {url[:80]!r}")
        port_text = after[1:]
    else:
        host, _, port_text = hostport.partition(":")
    if not host:
        raise InvalidUrl(f"URL has no host: {url[:80]!r}")
    host = _canonical_host(host)
    if not port_text:
        return host
    # Length first: int() refuses strings of over 4,300 digits with a ValueError.
    if (
        not (port_text.isascii() and port_text.isdigit())
        or len(port_text.lstrip("0")) > 5
        or int(port_text) > 65535
    ):
        raise InvalidUrl(f"malformed port in {url[:80]!r}")
    port = int(port_text)
    if port == 0:
        raise InvalidUrl(f"port 0 cannot be fetched: {url[:80]!r}")
    return f"{host}:{port}"


# The same few hosts recur on every page of a site: parse each once.
@functools.lru_cache(maxsize=4096)
def _canonical_host(raw: str) -> str:
    """The WHATWG host parser for http(s), or raise InvalidUrl."""
    if raw.startswith("["):
        if not raw.endswith("]"):
            raise InvalidUrl(f"malformed IPv6 host {raw[:80]!r}")
        return f"[{_ipv6(raw[1:-1])}]"
    text = raw
    if "%" in text:
        try:
            text = unquote_to_bytes(text).decode("utf-8")
        except UnicodeError as e:  # also a lone surrogate, which cannot be encoded
            raise InvalidUrl(f"host is not UTF-8 once decoded: {raw[:80]!r}") from e
    host = text.lower() if text.isascii() else _domain_to_ascii(text, raw)
    # Our one departure from the host parser: "example.com." is example.com.
    # Dropped before the IPv4 test, so "0x.." reads the same as "0x" would.
    host = host.rstrip(".")
    if not host or _FORBIDDEN_IN_DOMAIN.search(host):
        raise InvalidUrl(f"invalid host {raw[:80]!r}")
    if _ends_in_a_number(host):
        return _ipv4(host, raw)
    return host


def _domain_to_ascii(text: str, raw: str) -> str:
    """UTS 46 processing as the URL standard asks (non-transitional, no STD3 rules)."""
    try:
        mapped = idna.uts46_remap(text, std3_rules=False, transitional=False)
        labels = []
        for label in mapped.split("."):
            if label.isascii():
                labels.append(label)
                continue
            # idna.alabel would add IDNA 2008's stricter code point rules,
            # which browsers do not apply (emoji hosts exist): check only
            # what UTS 46 checks, then encode.
            idna.check_nfc(label)
            idna.check_initial_combiner(label)
            idna.check_bidi(label)
            for pos, char in enumerate(label):
                if char in "\u200c\u200d" and not idna.valid_contextj(label, pos):
                    raise idna.IDNAError(f"joiner not allowed at {pos}")
            labels.append("xn--" + label.encode("punycode").decode("ascii"))
    except (idna.IDNAError, UnicodeError, ValueError) as e:
        raise InvalidUrl(f"invalid international host {raw[:80]!r}: {e}") from e
    return ".".join(labels)


def _ends_in_a_number(host: str) -> bool:
    last = host.rpartition(".")[2]  # the host has no trailing dot by now
    if last.isascii() and last.isdigit():
        return True
    return last[:2] == "0x" and all(c in "0123456789abcdef" for c in last[2:])


def _ipv4(host: str, raw: str) -> str:
    """The WHATWG IPv4 parser: 1 to 4 parts, each decimal, octal (0...) or hex (0x...)."""
    parts = host.split(".")
    if len(parts) > 4:
        raise InvalidUrl(f"invalid IPv4 host {raw[:80]!r}")
    numbers = [_ipv4_number(part, raw) for part in parts]
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise InvalidUrl(f"IPv4 host out of range: {raw[:80]!r}")
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n * 256 ** (3 - i)
    return str(ipaddress.IPv4Address(value))


def _ipv4_number(part: str, raw: str) -> int:
    radix = 10
    if part[:2] == "0x":
        part, radix = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        part, radix = part[1:], 8
    if not part:
        # "0x" alone is zero; an empty part ("1..2") is not a number at all.
        if radix == 16:
            return 0
        raise InvalidUrl(f"invalid IPv4 host {raw[:80]!r}")
    digits = "0123456789abcdef"[:radix]
    if not all(c in digits for c in part):
        raise InvalidUrl(f"invalid IPv4 host {raw[:80]!r}")
    # Anything past 2**32 fails anyway, and int() refuses over 4,300 digits.
    if len(part.lstrip("0")) > 12:
        raise InvalidUrl(f"IPv4 host out of range: {raw[:80]!r}")
    return int(part, radix)


def _ipv6(text: str) -> str:
    """An IPv6 literal as the URL standard writes it: lower case, longest zero run as ::."""
    # ipaddress accepts a "%zone" suffix, which the URL standard does not.
    if "%" in text:
        raise InvalidUrl(f"IPv6 zone identifiers cannot be crawled: [{text[:80]}]")
    try:
        packed = ipaddress.IPv6Address(text).packed
    except ValueError as e:
        raise InvalidUrl(f"malformed IPv6 host [{text[:80]}]: {e}") from e
    # Serialised by hand: ipaddress writes IPv4-mapped addresses differently
    # from one Python version to the next.
    pieces = [packed[i] << 8 | packed[i + 1] for i in range(0, 16, 2)]
    best_start, best_len, i = -1, 1, 0
    while i < 8:
        if pieces[i] == 0:
            j = i
            while j < 8 and pieces[j] == 0:
                j += 1
            if j - i > best_len:
                best_start, best_len = i, j - i
            i = j
        else:
            i += 1
    if best_start == -1:
        return ":".join(f"{p:x}" for p in pieces)
    head = ":".join(f"{p:x}" for p in pieces[:best_start])
    tail = ":".join(f"{p:x}" for p in pieces[best_start + best_len :])
    return f"{head}::{tail}"


def _normalise_escapes(text: str) -> str:
    if _STRAY_PERCENT.search(text):
        # Decoding next to a stray "%" can make a new escape ("%%41a" would
        # become "%Aa"), so the result would change on every pass: only the
        # case of the hex digits is normalised then.
        return _ESCAPE.sub(_upper_escape, text)
    return _ESCAPE.sub(_normalise_escape, text)


def _upper_escape(match: re.Match[str]) -> str:
    return "%" + match.group(1).upper()


def _normalise_escape(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else "%" + match.group(1).upper()


def _netloc(parts: SplitResult) -> str:
    host = parts.hostname or ""
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
