"""Every setting Trawl reads, declared once as data: name, default, help.

Sources, weakest first: the defaults below, a TOML file (``trawl.toml`` in
the working directory, or the file named by ``TRAWL_CONFIG``), environment
variables ``TRAWL_<NAME>``, then command-line flags. ``trawl settings`` prints
this table; the README's copy is checked against it by a test.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from trawl.errors import ConfigError

ENV_PREFIX = "TRAWL_"
SCOPES = ("host", "site", "web")
# Speed presets of the three politeness settings, for `trawl crawl --speed` and the
# admin page's crawl form alike.
SPEED_PRESETS: dict[str, dict[str, object]] = {
    "gentle": {"concurrency": 4, "host_concurrency": 1, "delay": 2.0},
    "balanced": {"concurrency": 8, "host_concurrency": 2, "delay": 0.5},
    "fast": {"concurrency": 32, "host_concurrency": 8, "delay": 0.1},
}
SPEED_HELP = (
    "A preset of concurrency, host_concurrency and delay; a delay or concurrency given too wins."
)
CONFIG_FILE = "trawl.toml"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _setting(
    default: Any,
    help: str,
    minimum: float | None = 0,
    maximum: float | None = None,
) -> Any:
    return field(default=default, metadata={"help": help, "minimum": minimum, "maximum": maximum})


@dataclass(frozen=True)
class Settings:
    data: Path = _setting(Path("trawl-data"), "Data folder: trawl.sqlite and index/ live here.")
    store: str = _setting(
        "",
        "Where pages and the crawl log live: empty for trawl.sqlite in the data folder, a"
        " SQLite file path, or a postgresql:// URL (workers on many machines share one).",
    )
    lease: float = _setting(
        120.0,
        "Seconds a frontier URL's lease lasts; a live worker renews it every third of that,"
        " a killed worker's URLs go to others when it runs out.",
        1,
    )
    user_agent: str = _setting(
        "TrawlBot/0.1 (+https://github.com/trawl-search/trawl)",
        "User-Agent sent with every request; its first word is the robots.txt token.",
    )
    concurrency: int = _setting(8, "Requests in flight at once, over all hosts.", 1, 1000)
    host_concurrency: int = _setting(2, "Requests in flight at once to one host.", 1, 100)
    delay: float = _setting(0.5, "Seconds between the starts of two requests to one host.")
    max_pages: int = _setting(
        10_000, "Stop a crawl after this many fetched URLs (over all its workers).", 1
    )
    max_depth: int = _setting(50, "Links further than this many hops from a start URL are ignored.")
    max_per_host: int = _setting(0, "URLs admitted per host in one crawl; 0: no limit.")
    host_aliases: str = _setting(
        "",
        "HOST=TARGET:PORT pairs, comma-separated: pages keep HOST in their URLs while"
        " requests go to TARGET over plain HTTP (a mirror, a staging copy, a site behind"
        " a proxy, crawled as itself); header and resource checks follow them too.",
    )
    max_pending: int = _setting(
        1_000_000, "URLs waiting in the frontier at most (bounds memory); more are dropped.", 1
    )
    max_host_queues: int = _setting(
        10_000,
        "Hosts whose URLs are held in memory at most; other hosts' URLs wait in the store.",
        1,
    )
    scope: str = _setting(
        "host", "Links followed: host (exact host and port), site (registrable domain), web."
    )
    max_error_rate: float = _setting(
        0.5, "Share of failed fetches above which a crawl is unhealthy and prunes nothing.", 0, 1
    )
    parse_workers: int = _setting(
        -1,
        "Processes that parse pages and build index documents; 0: none, -1: one per core"
        " (max 4), a crawl's started only once its event loop is busy.",
        -1,
        64,
    )
    parse_timeout: float = _setting(
        300.0,
        "Seconds one page's parse may take: past them a parse worker is killed and the page"
        " tried once more by another, and a parse in the crawl's own process (a large page,"
        " parse_workers 0) fails the page. Far above any parse measured (a hostile 4 MB"
        " page: 30 s); raise it with max_bytes.",
        1,
    )
    timeout: float = _setting(20.0, "Seconds allowed for one request, connect to last byte.", 0.1)
    max_bytes: int = _setting(
        5_000_000, "Bytes of one response body read at most; the rest is cut.", 1
    )
    robots_max_bytes: int = _setting(
        512_000, "Bytes of robots.txt read at most (RFC 9309: 500 KiB).", 1
    )
    title_boost: float = _setting(0.5, "BM25 weight of the title field.")
    headings_boost: float = _setting(2.0, "BM25 weight of headings and meta description.")
    body_boost: float = _setting(1.0, "BM25 weight of the main text.")
    anchor_boost: float = _setting(1.5, "BM25 weight of inbound anchor text.")
    aside_boost: float = _setting(
        0.2, "BM25 weight of visible words the main text left out (0: not searched)."
    )
    url_boost: float = _setting(1.5, "BM25 weight of URL path tokens.")
    host_boost: float = _setting(1.0, "BM25 weight of host name tokens.")
    lookup_boost: float = _setting(
        1.0, "Weight of joined query words (annehathaway) matched in host and URL tokens."
    )
    rerank_depth: int = _setting(15, "Best BM25F matches the second stage reorders.", 1, 10_000)
    coverage_power: float = _setting(
        2.0, "Score times (matched query words / all query words) to this power.", 0, 100
    )
    coverage_max_words: int = _setting(
        6, "Coverage applies to queries of at most this many counted words (long ones: no).", 0
    )
    typo_tolerance: bool = _setting(
        True,
        "A word the index barely knows also matches terms 1 edit away (2 from 9 letters),"
        " below exact matches; the last word also completes as a prefix.",
    )
    feedback_terms: int = _setting(
        0,
        "Pseudo-relevance feedback: terms of the best pages added to the query (RM3-style);"
        " 0: off.",
        0,
        100,
    )
    feedback_docs: int = _setting(10, "Pseudo-relevance feedback: best pages read.", 1, 100)
    feedback_weight: float = _setting(
        0.3, "Pseudo-relevance feedback: a feedback term's weight against a typed word.", 0, 1
    )
    semantic: bool = _setting(
        False,
        "Fuse all-MiniLM-L6-v2 embeddings with the ranking (the semantic extra): every page"
        " is embedded after it is indexed (vectors.npz in the data folder), which costs far"
        " more CPU than indexing it; off unless asked for.",
    )
    semantic_depth: int = _setting(20, "Semantic fusion: best matches reordered.", 1, 1000)
    semantic_weight: float = _setting(
        1.0, "Semantic fusion: the cosine ranking's weight against BM25F's (RRF).", 0, 100
    )
    semantic_min_words: int = _setting(
        8, "Semantic fusion: queries of at least this many words are fused.", 0, 100
    )
    semantic_questions: bool = _setting(
        False,
        "Semantic fusion: queries worded as questions (4+ words, a question word first or a"
        ' "?" last) are fused at any length.',
    )
    soft_and_share: float = _setting(
        0.7,
        "Share of a query's word weight (IDF) a page must hold to be among the first matches;"
        " 1: every word that counts.",
        0,
        1,
    )
    proximity_boost: float = _setting(
        0.1, "Weight of adjacent query words found near each other (3 words apart at most)."
    )
    proximity_long_boost: float = _setting(
        1.4,
        "Weight added to proximity in the text of a long page with headings (0: off).",
        0,
    )
    proximity_max_words: int = _setting(
        6, "Proximity applies to queries of at most this many words, stop words aside.", 0
    )
    exact_bonus: float = _setting(
        0.5, "Score times 1 + this when the joined query is in the host or URL path.", 0, 100
    )
    authority_weight: float = _setting(
        0.1, "Score times 1 + this times the page's authority (0..1).", 0, 100
    )
    quality_weight: float = _setting(
        0.3, "Score times 1 + this times the page's quality (0..1).", 0, 100
    )
    navigational: int = _setting(
        1,
        "1: a home page whose host names the query, or a page titled so, comes first; 0: off.",
        0,
        1,
    )
    query_lang: str = _setting(
        "", "Language queries are analysed in (ISO 639-1); empty: every indexed language."
    )
    per_page: int = _setting(20, "Search results per page unless a request asks otherwise.", 1)
    max_per_page: int = _setting(100, "Most search results one page may hold.", 1, 1000)
    search_cache_size: int = _setting(
        256,
        "Result pages `trawl serve` keeps, each for the index commit it came from, so a"
        " repeated search (a reload, a page back, a popular query) skips ranking and"
        " snippets; 0: none.",
        0,
        100_000,
    )
    search_workers: int = _setting(
        -1,
        "Processes `trawl serve` runs searches in, so concurrent searches use every core"
        " (one process runs one search at a time); 0: searches run in the server's own"
        " process; -1: one per core (at most 4) for `trawl serve`, none on one core or"
        " in an app made in-process (tests, embedding).",
        -1,
        64,
    )
    search_worker_timeout: float = _setting(
        10.0,
        "Seconds a search has to finish: past them a search worker is killed and replaced"
        " and the request answers 503 (search took too long), the search not run again;"
        " an API search in the server's own process answers 503 too (its thread runs on).",
        0.1,
    )
    snippet_chars: int = _setting(220, "Length of a result snippet in characters.", 20, 2000)
    recrawl_hours: float = _setting(
        0.0, "`trawl serve` re-crawls every enabled site this often; 0: never."
    )
    live_index_after: int = _setting(
        2000,
        "A crawl's first pages are indexed once, when it ends; past this many, each page"
        " is also indexed as it is fetched, so a long crawl becomes searchable as it goes.",
        0,
    )
    resource_checks: int = _setting(
        500,
        "Resources (images, scripts, stylesheets...) of crawled pages checked with HEAD"
        " after a crawl, at most; 0: no resource checks.",
    )
    render: bool = _setting(
        False, "Load HTML pages in headless Chromium and extract from the rendered DOM."
    )
    render_timeout: float = _setting(
        10.0, "Seconds one rendered page may take; then its browser context is replaced.", 0.1
    )
    render_workers: int = _setting(2, "Pages rendered in Chromium at once.", 1, 64)
    chromium: str = _setting("/usr/bin/chromium", "The Chromium executable used to render pages.")
    evict_min_quality: float = _setting(
        0.2, "`trawl evict`: pages under this quality and under evict_min_authority go.", 0, 1
    )
    evict_min_authority: float = _setting(
        0.7, "`trawl evict`: pages under this authority and under evict_min_quality go.", 0, 1
    )
    evict_languages: str = _setting(
        "",
        "`trawl evict`: hosts whose majority language is not listed (da,en) go; empty keeps all.",
    )
    host: str = _setting("127.0.0.1", "Address `trawl serve` listens on.")
    port: int = _setting(8080, "Port `trawl serve` listens on.", 1, 65535)
    search_rate_limit: str = _setting(
        "120/minute",
        "Searches one client (an IPv4 address, an IPv6 /64) may make, as count/second|minute|hour.",
    )
    admin_rate_limit: str = _setting(
        "600/minute", "Admin API calls one API key may make, as count/second|minute|hour."
    )
    max_request_bytes: int = _setting(
        65_536, "Largest request body the server accepts; larger ones get a 413.", 1
    )
    public_url: str = _setting(
        "",
        "The address people reach `trawl serve` at (https://search.example.org): the base of"
        " /opensearch.xml and the only origin admin forms are taken from; empty: the"
        " request's own host.",
    )
    trusted_proxies: str = _setting(
        "",
        "Reverse proxies (addresses or networks, comma-separated) whose X-Forwarded-For and"
        " X-Forwarded-Proto `trawl serve` believes; empty: none, the peer is the client.",
    )
    session_hours: float = _setting(
        12.0, "Hours an admin login lasts; logging out or revoking its key ends it.", 0.01, 8760
    )
    search_requires_key: bool = _setting(
        False, "Search (the page and /api/search) needs a key or login with the search scope."
    )
    metrics_requires_key: bool = _setting(
        False, "/metrics needs a key with the admin scope (X-API-Key or Bearer)."
    )
    admin_allow_hosts: str = _setting(
        "",
        "Private targets (host:port, comma-separated) that crawls started by `trawl serve`"
        " (API, admin page, scheduled recrawls) may reach; any other private address is"
        " refused, start URLs included.",
    )
    # Where the SEO report's issues begin (Screaming Frog's defaults).
    report_title_max: int = _setting(60, "Report: titles longer than this many characters.", 1)
    report_title_min: int = _setting(30, "Report: titles shorter than this many characters.")
    report_description_max: int = _setting(
        155, "Report: meta descriptions longer than this many characters.", 1
    )
    report_description_min: int = _setting(
        70, "Report: meta descriptions shorter than this many characters."
    )
    report_thin_words: int = _setting(
        200, "Report: indexable pages with fewer words than this are thin content."
    )
    report_slow_ms: float = _setting(
        1000.0, "Report: pages whose response took longer than this many milliseconds."
    )

    @property
    def sqlite_path(self) -> Path:
        return self.data / "trawl.sqlite"

    @property
    def index_path(self) -> Path:
        return self.data / "index"

    @property
    def vectors_path(self) -> Path:
        return self.data / "vectors.npz"  # trawl.search.semantic

    @property
    def admin_targets(self) -> tuple[tuple[str, int], ...]:
        """``admin_allow_hosts`` as (host, port) pairs."""
        return tuple(_host_port(t) for t in _items(self.admin_allow_hosts))

    @property
    def proxy_networks(self) -> tuple[str, ...]:
        """``trusted_proxies`` as a list of addresses and networks."""
        return tuple(_items(self.trusted_proxies))

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied; ``None`` values mean "not given" and are skipped."""
        given = {k: v for k, v in changes.items() if v is not None}
        result = dataclasses.replace(self, **{k: _coerce(k, v) for k, v in given.items()})
        if result.scope not in SCOPES:
            raise ConfigError(f"scope must be one of {', '.join(SCOPES)}, not {result.scope!r}")
        result.admin_targets  # noqa: B018 - raises ConfigError when malformed
        for item in result.proxy_networks:
            try:
                ipaddress.ip_network(item)
            except ValueError:
                raise ConfigError(
                    f"trusted_proxies: {item!r} is not an address or network"
                ) from None
        if result.public_url and not _is_origin(result.public_url):
            raise ConfigError(
                f"public_url must be an http(s) origin such as https://search.example.org,"
                f" not {result.public_url!r}"
            )
        if result.per_page > result.max_per_page:
            raise ConfigError(
                f"per_page ({result.per_page}) must not exceed max_per_page ({result.max_per_page})"
            )
        return result


@dataclass(frozen=True)
class SettingInfo:
    name: str
    env: str
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None


def table() -> list[SettingInfo]:
    return [
        SettingInfo(
            f.name,
            ENV_PREFIX + f.name.upper(),
            f.default,
            f.metadata["help"],
            f.metadata["minimum"],
            f.metadata["maximum"],
        )
        for f in dataclasses.fields(Settings)
    ]


def speed_preset_help(name: str) -> str:
    """``name`` (one of SPEED_PRESETS) and what it sets, in words."""
    p = SPEED_PRESETS[name]
    return (
        f"{name} ({p['concurrency']} in flight, {p['host_concurrency']} a host,"
        f" {p['delay']} s apart)"
    )


def info(name: str) -> SettingInfo:
    """One row of the settings table."""
    found = next((s for s in table() if s.name == name), None)
    if found is None:
        raise ConfigError(f"unknown setting {name!r}")
    return found


def markdown_table() -> str:
    rows = ["| setting | env | default | meaning |", "|---|---|---|---|"]
    rows += [f"| `{s.name}` | `{s.env}` | `{s.default}` | {s.help} |" for s in table()]
    return "\n".join(rows)


def load(
    env: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> Settings:
    """Defaults, overlaid by the TOML file, overlaid by ``TRAWL_*`` variables."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    path = config_file or (
        Path(env[ENV_PREFIX + "CONFIG"]) if ENV_PREFIX + "CONFIG" in env else None
    )
    if path is None and Path(CONFIG_FILE).is_file():
        path = Path(CONFIG_FILE)
    if path is not None:
        values.update(_read_toml(path))
    for info in table():
        if info.env in env:
            values[info.name] = env[info.env]
    return Settings().replace(**values)


def _is_origin(url: str) -> bool:
    if not re.fullmatch(r"https?://[^/?#\s@]+/?", url):
        return False
    try:  # "http://[" or a port past 65535: the server would fail on every login
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return False
    return bool(parts.hostname)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            raw = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from e
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:  # TOML is UTF-8 only
        raise ConfigError(f"{path} is not valid TOML: {e}") from e
    known = {f.name for f in dataclasses.fields(Settings)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s) {', '.join(unknown)}")
    return raw


def _items(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isascii() or not port.isdigit():
        raise ConfigError(f"admin_allow_hosts wants host:port entries, not {text!r}")
    if not 0 < int(port) < 65536:
        raise ConfigError(f"admin_allow_hosts: port out of range in {text!r}")
    return host.strip("[]").lower(), int(port)


def _coerce(name: str, value: Any) -> Any:
    """``value`` (from TOML, the environment or a flag) as the setting's type, within bounds."""
    fields = {f.name: f for f in dataclasses.fields(Settings)}
    if name not in fields:
        raise ConfigError(f"unknown setting {name!r}")
    meta = fields[name].metadata
    converted = _convert(name, value, fields[name].default)
    if isinstance(converted, int | float) and not isinstance(converted, bool):
        if not math.isfinite(converted):
            raise ConfigError(f"setting {name!r} must be a finite number, got {value!r}")
        low, high = meta["minimum"], meta["maximum"]
        if (low is not None and converted < low) or (high is not None and converted > high):
            bounds = f"at least {low}" + (f" and at most {high}" if high is not None else "")
            raise ConfigError(f"setting {name!r} must be {bounds}, got {value!r}")
    return converted


def _convert(name: str, value: Any, default: Any) -> Any:
    # Strings come from the environment and flags and are parsed; TOML values
    # already have a type, which must be the setting's (no true -> 1, no 2.7 -> 2).
    wrong = ConfigError(f"setting {name!r}: {value!r} is not a valid {type(default).__name__}")
    if isinstance(default, Path):
        if not isinstance(value, str | Path):
            raise wrong
        return Path(value)
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower() if isinstance(value, str) else None
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise wrong
    if isinstance(value, bool):
        raise wrong
    try:
        if isinstance(default, int):
            if isinstance(value, float):
                raise wrong
            return int(value)
        if isinstance(default, float):
            return float(value)
    except (TypeError, ValueError):
        raise wrong from None
    if not isinstance(value, str):
        raise wrong
    return value
