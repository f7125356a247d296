"""robots.txt parsing and matching, after RFC 9309 and Google's reference parser.

Pure: bytes in, decisions out. Where the RFC leaves room, the behaviour is
that of Google's reference parser (github.com/google/robotstxt, robots.cc),
because that is what site owners test their files against; the tests run
Google's own cases. Matching never backtracks: a pattern is cut at its
``*``s and each literal run is searched once, from where the previous one
ended, so a hostile pattern costs one left-to-right pass over the path.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

# RFC 9309 2.5: crawlers must parse at least 500 KiB; past that a site cannot
# make us spend more memory or time.
MAX_BODY_BYTES = 500 * 1024
# Google's line buffer (kMaxLineLen = 2083 * 8, less its NUL): longer lines are
# cut there, not dropped, so a rule stays in force however long it is.
MAX_LINE_BYTES = 2083 * 8 - 1

# Work per file (seed 003's bound): rules kept, and rules compared for one path.
# The largest real file in the top-sites set has 31,843 rules; none comes near.
MAX_RULES = 40_000
MAX_COMPARISONS = 10_000
_KEY = 8  # characters of a rule's literal head that index it

_BOM = b"\xef\xbb\xbf"
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_BLANKS = re.compile(rb"[ \t]+")
_AGENT_NAME = re.compile(rb"[A-Za-z_-]*")
_ESCAPE = re.compile(rb"%[0-9A-Fa-f]{2}|[\x80-\xff]")
_PATH_START = re.compile(r"[/?;]")
_ANY_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

# Google accepts these spellings (kAllowFrequentTypos); all are key prefixes.
_AGENT_KEYS = (b"user-agent", b"useragent", b"user agent")
_DISALLOW_KEYS = (b"disallow", b"dissallow", b"dissalow", b"disalow", b"diasllow", b"disallaw")
_SITEMAP_KEYS = (b"sitemap", b"site-map")


@dataclass(frozen=True, slots=True)
class _Rule:
    """One Allow or Disallow pattern, cut at its ``*``s."""

    allow: bool
    priority: int  # the pattern's length: the longest match wins (RFC 9309 2.2.2)
    head: str  # must start the path
    runs: tuple[str, ...]  # found in order after the head, anything in between
    starred: bool
    end: str | None  # with "$": what the path must end with (after the runs)

    @classmethod
    def of(cls, pattern: str, *, allow: bool) -> _Rule:
        anchored = pattern.endswith("$")
        body = pattern[:-1] if anchored else pattern
        head, *rest = body.split("*")
        runs = [r for r in rest if r]
        end: str | None = None
        if anchored:
            if not rest:
                end = ""  # no star: the path must be exactly the head
            elif not body.endswith("*"):
                end = runs.pop()
        return cls(allow, len(pattern), head, tuple(runs), bool(rest), end)

    def matches(self, path: str) -> bool:
        if not path.startswith(self.head):
            return False
        if not self.starred:
            return self.end is None or len(path) == len(self.head)
        pos = len(self.head)
        for run in self.runs:
            # The leftmost occurrence leaves the most room for what follows, so
            # one greedy pass decides and nothing is ever retried.
            pos = path.find(run, pos)
            if pos < 0:
                return False
            pos += len(run)
        return self.end is None or (path.endswith(self.end) and len(path) - len(self.end) >= pos)


@dataclass(slots=True)
class _Group:
    agents: set[str] = field(default_factory=set)  # lower-cased product tokens
    is_global: bool = False
    rules: list[_Rule] = field(default_factory=list)
    crawl_delay: float | None = None


class RobotsRules:
    """A parsed robots.txt: which paths a product token may fetch, its delay, sitemaps.

    The work is bounded per file: at most ``MAX_RULES`` rules are kept (``dropped``
    counts the rest), and one decision compares a path with at most
    ``MAX_COMPARISONS`` rules; past that the path is refused (``over_budget``
    counts such decisions). Rules are indexed by the first ``_KEY`` characters of
    their literal head, so a decision only looks at rules that could match: on
    docs.oracle.com's 19,125 rules that is at most 2,902, not all of them.
    """

    __slots__ = ("_chosen", "_groups", "dropped", "over_budget", "sitemaps")

    def __init__(self, groups: list[_Group], sitemaps: list[str], dropped: int = 0) -> None:
        self._groups = groups
        self.sitemaps: tuple[str, ...] = tuple(sitemaps)
        self.dropped = dropped
        self.over_budget = 0
        # A crawl asks about one product token thousands of times; group
        # selection, sorting and indexing are done once per token.
        self._chosen: dict[str, tuple[list[_Group], dict[str, list[_Rule]]]] = {}

    def allowed(self, url: str, product_token: str) -> bool:
        """May ``product_token`` fetch ``url`` (a full URL or a path)?

        The token is compared as given; reducing a User-Agent header to its
        token is the caller's job (``policy.product_token``).
        """
        return self.verdict(url, product_token)[0]

    def verdict(self, url: str, product_token: str) -> tuple[bool, bool]:
        """(allowed, decided by the work bound): a path that needs more than
        ``MAX_COMPARISONS`` rule comparisons is refused, and says so."""
        path = unescape_unreserved(path_params_query(url))
        index = self._choose(product_token)[1]
        best: _Rule | None = None
        budget = MAX_COMPARISONS
        for k in range(min(len(path), _KEY) + 1):
            # Each list holds the rules whose head starts with path[:k] (k < _KEY: is
            # exactly that), longest first, Allow first on a tie.
            for rule in index.get(path[:k], ()):
                if best is not None and (rule.priority, rule.allow) <= (best.priority, best.allow):
                    break  # nothing further down this list can beat it
                budget -= 1
                if budget < 0:
                    self.over_budget += 1
                    return False, True
                if rule.matches(path):
                    best = rule
                    break
        return (True if best is None else best.allow), False

    def crawl_delay(self, product_token: str) -> float | None:
        for group in self._choose(product_token)[0]:
            if group.crawl_delay is not None:
                return group.crawl_delay
        return None

    def _choose(self, product_token: str) -> tuple[list[_Group], dict[str, list[_Rule]]]:
        token = product_token.lower()
        chosen = self._chosen.get(token)
        if chosen is None:
            # Every group naming us counts, merged; "*" only when none does
            # (RFC 9309 2.2.1). Longest first, Allow first on a tie: the first
            # rule that matches in a list is that list's best.
            groups = [g for g in self._groups if token and token in g.agents] or [
                g for g in self._groups if g.is_global
            ]
            rules = sorted(
                (r for g in groups for r in g.rules), key=lambda r: (-r.priority, not r.allow)
            )
            index: dict[str, list[_Rule]] = {}
            for rule in rules:
                index.setdefault(rule.head[:_KEY], []).append(rule)
            chosen = self._chosen[token] = (groups, index)
        return chosen


def parse_robots(body: bytes) -> RobotsRules:
    """Parse a robots.txt body; never raises, whatever the bytes."""
    groups: list[_Group] = []
    sitemaps: list[str] = []
    group: _Group | None = None
    in_rules = False  # a rule after user-agent lines: the next user-agent starts a group
    kept = dropped = 0
    for line in _lines(body):
        key_value = _key_value(line)
        if key_value is None:
            continue
        key, value = key_value
        if key.startswith(_AGENT_KEYS):
            if group is None or in_rules:
                group = _Group()
                groups.append(group)
                in_rules = False
            # Google: "*" followed by anything after a blank is still the global group.
            if value[:1] == b"*" and (len(value) == 1 or value[1:2].isspace()):
                group.is_global = True
            else:
                name = _AGENT_NAME.match(value)
                if name and name.group():
                    group.agents.add(name.group().decode("ascii").lower())
        elif key.startswith(b"allow") or key.startswith(_DISALLOW_KEYS):
            if group is None:
                continue  # rules before any user-agent line apply to nobody
            in_rules = True
            # An empty pattern matches nothing more than no rule does (priority 0).
            if pattern := unescape_unreserved(escape_pattern(value)):
                if kept >= MAX_RULES:
                    dropped += 1
                    continue
                allow = key.startswith(b"allow")
                group.rules.append(_Rule.of(pattern, allow=allow))
                kept += 1
                if allow and (index := _index_page_pattern(pattern)):
                    group.rules.append(_Rule.of(index, allow=True))
                    kept += 1
        elif key.startswith(_SITEMAP_KEYS):
            if value:
                sitemaps.append(value.decode("utf-8", errors="replace"))
        # Crawl-delay is not in RFC 9309 nor in Google's parser, but widely used;
        # like any other line it does not end a group.
        elif key == b"crawl-delay" and group is not None and group.crawl_delay is None:
            group.crawl_delay = _delay(value)
    return RobotsRules(groups, sitemaps, dropped)


def _lines(body: bytes) -> list[bytes]:
    if len(body) > MAX_BODY_BYTES:
        body = body[:MAX_BODY_BYTES]
        # A line cut in half could turn "Allow: /a/b" into "Allow: /" and open
        # the whole site: drop it.
        body = body[: max(body.rfind(b"\n"), body.rfind(b"\r")) + 1]
    # Google skips any prefix of a UTF-8 BOM, even a partial one.
    skip = 0
    while skip < len(_BOM) and body[skip : skip + 1] == _BOM[skip : skip + 1]:
        skip += 1
    return [line[:MAX_LINE_BYTES] for line in _LINE_BREAK.split(body[skip:])]


def _key_value(line: bytes) -> tuple[bytes, bytes] | None:
    """The lower-cased key and the value of a line, Google's way; None if it has none."""
    # Google's C strings end at a NUL; "#" starts a comment anywhere.
    line = line.split(b"\0", 1)[0].split(b"#", 1)[0].strip()
    key, colon, value = line.partition(b":")
    if not colon:
        # Google accepts a missing colon when exactly two words remain ("Disallow /x").
        blanks = _BLANKS.search(line)
        if blanks is None:
            return None
        key, value = line[: blanks.start()], line[blanks.end() :]
        if _BLANKS.search(value):
            return None
    key = key.strip()
    return (key.lower(), value.strip()) if key else None


def escape_pattern(value: bytes) -> str:
    """Google's MaybeEscapePattern: %-encode non-ASCII bytes, upper-case existing escapes.

    Paths are compared in their percent-encoded form, the form the crawler's
    normalised URLs are in.
    """
    escaped = _ESCAPE.sub(
        lambda m: m[0].upper() if m[0][:1] == b"%" else b"%%%02X" % m[0][0], value
    )
    return escaped.decode("ascii")


def unescape_unreserved(text: str) -> str:
    """RFC 9309 2.2.2: an escaped unreserved character (RFC 3986 2.3) is compared as the
    character itself, other escapes upper-cased: ``/%7Efoo`` and ``/~foo`` are one path,
    as are ``/b%61r`` and ``/bar``. Applied to rules and to paths alike (Google's parser
    does neither, and so lets ``/bar`` through ``Disallow: /b%61r``)."""
    if "%" not in text:
        return text
    return _ANY_ESCAPE.sub(_unescape_one, text)


def _unescape_one(match: re.Match[str]) -> str:
    char = chr(int(match[0][1:], 16))
    return char if char in _UNRESERVED else match[0].upper()


def _index_page_pattern(pattern: str) -> str | None:
    # Google: allowing ".../index.htm(l)" also allows the directory ".../", exactly.
    slash = pattern.rfind("/")
    if slash >= 0 and pattern.startswith("/index.htm", slash):
        return pattern[: slash + 1] + "$"
    return None


def _delay(value: bytes) -> float | None:
    try:
        delay = float(value)
    except ValueError:
        return None
    # "nan", "inf" and negative numbers parse, but mean nothing as a delay.
    return delay if math.isfinite(delay) and delay >= 0 else None


def path_params_query(url: str) -> str:
    """What robots.txt rules are matched against: path, params and query (Google's
    GetPathParamsQuery). ``url`` may be a full URL or a bare path."""
    start = 2 if url.startswith("//") else 0
    early_path = _find_path_start(url, start)
    protocol_end = url.find("://", start)
    if protocol_end < 0 or (0 <= early_path < protocol_end):
        # "/a?b=http://c" has no scheme: the "://" sits in the query.
        protocol_end = start
    else:
        protocol_end += 3
    path_start = _find_path_start(url, protocol_end)
    if path_start < 0:
        return "/"
    hash_pos = url.find("#", start)
    if 0 <= hash_pos < path_start:
        return "/"
    path = url[path_start : hash_pos if hash_pos >= 0 else len(url)]
    return path if path.startswith("/") else "/" + path


def _find_path_start(url: str, start: int) -> int:
    found = _PATH_START.search(url, start)
    return found.start() if found else -1
