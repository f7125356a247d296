"""Every setting Trawl reads, declared once as data: name, default, help.

Sources, weakest first: the defaults below, a TOML file (``trawl.toml`` in
the working directory, or the file named by ``TRAWL_CONFIG``), environment
variables ``TRAWL_<NAME>``, then command-line flags. ``trawl settings`` prints
this table; the README's copy is checked against it by a test.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trawl.errors import ConfigError

ENV_PREFIX = "TRAWL_"
CONFIG_FILE = "trawl.toml"


def _setting(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Settings:
    data: Path = _setting(Path("trawl-data"), "Data folder: trawl.sqlite and index/ live here.")
    user_agent: str = _setting(
        "TrawlBot/0.1 (+https://github.com/trawl-search/trawl)",
        "User-Agent sent with every request; its first word is the robots.txt token.",
    )
    concurrency: int = _setting(8, "Requests in flight at once, over all hosts.")
    host_concurrency: int = _setting(2, "Requests in flight at once to one host.")
    delay: float = _setting(0.5, "Seconds between the starts of two requests to one host.")
    max_pages: int = _setting(10_000, "Stop a crawl after this many fetched URLs.")
    max_depth: int = _setting(50, "Links further than this many hops from a start URL are ignored.")
    timeout: float = _setting(20.0, "Seconds allowed for one request, connect to last byte.")
    max_bytes: int = _setting(
        5_000_000, "Bytes of one response body read at most; the rest is cut."
    )
    robots_max_bytes: int = _setting(
        512_000, "Bytes of robots.txt read at most (RFC 9309: 500 KiB)."
    )
    title_boost: float = _setting(4.0, "BM25 weight of the title field.")
    headings_boost: float = _setting(2.0, "BM25 weight of headings and meta description.")
    body_boost: float = _setting(1.0, "BM25 weight of the main text.")
    url_boost: float = _setting(1.5, "BM25 weight of URL path tokens.")
    host_boost: float = _setting(1.0, "BM25 weight of host name tokens.")
    per_page: int = _setting(20, "Search results per page unless a request asks otherwise.")
    max_per_page: int = _setting(100, "Most search results one page may hold.")
    snippet_chars: int = _setting(220, "Length of a result snippet in characters.")
    host: str = _setting("127.0.0.1", "Address `trawl serve` listens on.")
    port: int = _setting(8080, "Port `trawl serve` listens on.")

    @property
    def sqlite_path(self) -> Path:
        return self.data / "trawl.sqlite"

    @property
    def index_path(self) -> Path:
        return self.data / "index"

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied; ``None`` values mean "not given" and are skipped."""
        given = {k: v for k, v in changes.items() if v is not None}
        return dataclasses.replace(self, **{k: _coerce(k, v) for k, v in given.items()})


@dataclass(frozen=True)
class SettingInfo:
    name: str
    env: str
    default: Any
    help: str


def table() -> list[SettingInfo]:
    return [
        SettingInfo(f.name, ENV_PREFIX + f.name.upper(), f.default, f.metadata["help"])
        for f in dataclasses.fields(Settings)
    ]


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


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            raw = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from e
    known = {f.name for f in dataclasses.fields(Settings)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s) {', '.join(unknown)}")
    return raw


_AT_LEAST_ONE = frozenset(
    {"concurrency", "host_concurrency", "max_bytes", "per_page", "max_per_page", "port"}
)


def _coerce(name: str, value: Any) -> Any:
    fields = {f.name: f for f in dataclasses.fields(Settings)}
    if name not in fields:
        raise ConfigError(f"unknown setting {name!r}")
    default = fields[name].default
    kind: Any = type(default)
    try:
        if isinstance(default, Path):
            return Path(value)
        if isinstance(default, bool):
            return value if isinstance(value, bool) else str(value).lower() in {"1", "true", "yes"}
        converted = kind(value)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"setting {name!r}: {value!r} is not a valid {kind.__name__}") from e
    if isinstance(converted, int | float) and converted < (1 if name in _AT_LEAST_ONE else 0):
        floor = "at least 1" if name in _AT_LEAST_ONE else "not negative"
        raise ConfigError(f"setting {name!r} must be {floor}, got {value!r}")
    return converted
