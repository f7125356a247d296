"""URL parsing against shared test suites: WHATWG urltestdata and crawler-commons.

Both are compared through our identity: the expected URL is normalised too,
since we drop the fragment, sort the query, drop tracking parameters and the
default port, and so on. What that leaves is where a link leads: scheme, host,
port, path and query. Run with ``pytest -s`` to see the pass rates.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from trawl.errors import CredentialsInUrl, InvalidUrl
from trawl.urls.identity import normalise, split

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
URLTESTDATA = SHARED_DATA / "url" / "urltestdata.json"
NORMALIZER = SHARED_DATA / "crawler-commons-fixtures" / "normalizer"
WEIRD_URLS = NORMALIZER / "weirdToNormalizedUrls.csv"
INVALID_URLS = NORMALIZER / "invalidUrls.csv"


# -- WHATWG urltestdata.json --------------------------------------------------------

# Measured when this test was written; raise it when a fix makes more cases pass.
WHATWG_RATCHET = 886

# (input, base) the URL standard accepts and we refuse on purpose.
WHATWG_DELIBERATE: dict[tuple[str, str | None], str] = {
    ("http://f:0/c", "http://example.org/foo/bar"): "port 0: nothing can be fetched there",
    ("http://f:00000000000000/c", "http://example.org/foo/bar"): "port 0",
    ("http://./", None): "the host is empty once its trailing dot is dropped",
    ("http://../", None): "the host is empty once its trailing dots are dropped",
    # Without its trailing dots "foo.09" ends in a number, and is no IPv4 address.
    ("http://foo.09..", None): "trailing dots dropped before the IPv4 test",
}


def _whatwg_cases() -> list[dict[str, Any]]:
    entries = json.loads(URLTESTDATA.read_text(encoding="utf-8"))
    return [e for e in entries if isinstance(e, dict)]  # the rest are comments


def _whatwg_verdict(case: dict[str, Any]) -> str | None:
    """None when we agree with the standard, else what went wrong."""
    try:
        got: str | None = normalise(case["input"], base=case["base"])
        error: InvalidUrl | None = None
    except InvalidUrl as e:
        got, error = None, e
    if case.get("failure"):
        return None if error else f"accepted as {got!r}; the standard refuses it"
    if case["protocol"] not in ("http:", "https:"):
        return None if error else f"accepted {case['protocol']} URL as {got!r}"
    if case["username"] or case["password"]:
        return None if isinstance(error, CredentialsInUrl) else f"credentials not refused: {error}"
    try:
        expected = normalise(case["href"])
    except InvalidUrl as e:
        return f"the expected href is refused too ({e})"
    if error is not None:
        return f"refused ({error}); expected {expected!r}"
    return None if got == expected else f"got {got!r}, expected {expected!r}"


@pytest.mark.skipif(not URLTESTDATA.is_file(), reason=f"{URLTESTDATA} not present")
def test_whatwg_url_test_data() -> None:
    """http(s) results must lead where the standard's href leads; failures and
    other schemes must raise InvalidUrl (credentials: CredentialsInUrl)."""
    cases = _whatwg_cases()
    assert len(cases) == 891  # the README's count: a reading slip would test fewer
    failures = []
    deliberate = 0
    for case in cases:
        verdict = _whatwg_verdict(case)
        if verdict is None:
            continue
        if (case["input"], case["base"]) in WHATWG_DELIBERATE:
            deliberate += 1
        else:
            failures.append(f"{case['input']!r} (base {case['base']!r}): {verdict}")
    passed = len(cases) - len(failures) - deliberate
    print(
        f"\nWHATWG urltestdata: {passed}/{len(cases)} pass ({passed / len(cases):.1%}), "
        f"{deliberate} differ on purpose, {len(failures)} unexpected"
    )
    assert passed >= WHATWG_RATCHET, "\n".join(failures)
    assert not failures, "\n".join(failures)


@pytest.mark.skipif(not URLTESTDATA.is_file(), reason=f"{URLTESTDATA} not present")
def test_whatwg_deliberate_differences_are_still_refusals() -> None:
    cases = {(c["input"], c["base"]): c for c in _whatwg_cases()}
    for key in WHATWG_DELIBERATE:
        assert key in cases, f"{key} is no longer in the test data"
        with pytest.raises(InvalidUrl):
            normalise(key[0], base=key[1])


@pytest.mark.skipif(not URLTESTDATA.is_file(), reason=f"{URLTESTDATA} not present")
def test_whatwg_hosts_and_ports_match_exactly() -> None:
    """Compared field by field, not through normalise on both sides."""
    for case in _whatwg_cases():
        if (
            case.get("failure")
            or case["protocol"] not in ("http:", "https:")
            or case["username"]
            or case["password"]
            or (case["input"], case["base"]) in WHATWG_DELIBERATE
        ):
            continue
        parts = split(normalise(case["input"], base=case["base"]))
        assert parts.hostname is not None
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        assert host == case["hostname"].rstrip("."), case["input"]
        assert (str(parts.port) if parts.port else "") == case["port"], case["input"]


# -- crawler-commons normalizer fixtures -----------------------------------------------

# Inputs where our identity differs from crawler-commons' BasicURLNormalizer on purpose.
CC_DELIBERATE: dict[str, str] = {
    # Servers may tell "/a//b" from "/a/b"; a browser keeps both slashes.
    **dict.fromkeys(
        [
            "http://foo.com//aa/bb/foo.html",
            "http://foo.com/aa//bb/foo.html",
            "http://foo.com/aa/bb//foo.html",
            "http://foo.com//aa//bb//foo.html",
            "http://foo.com////aa////bb//foo.html",
            "http://foo.com////aa////bb////foo.html",
        ],
        "empty path segments are kept",
    ),
    # A stray "%" goes to the server as browsers send it, not as "%25".
    **dict.fromkeys(
        [
            "https://www.last.fm/music/Prefuse+73/_/90%+of+My+Mind+Is+With+You",
            "http://www.example.com/a/c/../b/search?q=foobar%",
            "http://www.example.com/p%zz%77%v",
            "http://www.example.com/search?q=foobar%",
            "http://www.example.com/search?q=foobar%2",
        ],
        "invalid escapes are kept",
    ),
    # Seed 003 keeps every parameter but tracking ones, as written: Rack, for
    # one, reads "b" as nil and "b=" as "".
    **dict.fromkeys(
        [
            "http://foo.com/index?a=1&b=",
            "http://foo.com/index?b=&a=1",
            "http://foo.com/index?&=1&a=1",
            "http://foo.com/index?=1&b=1&a=1",
        ],
        "query parameters are kept as written",
    ),
}
# Inputs crawler-commons normalises and we refuse on purpose.
CC_REFUSED: dict[str, str] = {
    **dict.fromkeys(
        [
            "file:///foo/bar.txt",
            "ftp:/",
            "ftp://foo.com/index.html",
            "file:/path/index.html",
            "file:/var/www/html/////./bar/index.html",
            "file:/var/www/html/foo/../bar/index.html",
        ],
        "only http and https are crawled",
    ),
    "http:////": "no host (crawler-commons writes http:/)",
    "http:///////": "no host (crawler-commons writes http:/)",
    # In a page a link without a scheme is relative; typed start URLs get
    # https:// from trawl.urls.start instead.
    "foo.com/index.html": "no scheme",
}


def _csv_rows(path: Path) -> list[list[str]]:
    lines = [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    return list(csv.reader(lines, skipinitialspace=True))


@pytest.mark.skipif(not WEIRD_URLS.is_file(), reason=f"{WEIRD_URLS} not present")
def test_crawler_commons_weird_to_normalized_urls() -> None:
    rows = _csv_rows(WEIRD_URLS)
    assert len(rows) == 112 and all(len(row) == 2 for row in rows)
    failures = []
    for weird, expected in rows:
        if weird in CC_DELIBERATE or weird in CC_REFUSED:
            continue
        try:
            got = normalise(weird)
        except InvalidUrl as e:
            failures.append(f"{weird!r}: refused ({e}); expected {expected!r}")
            continue
        if got != normalise(expected):
            failures.append(f"{weird!r}: got {got!r}, expected {normalise(expected)!r}")
    passed = len(rows) - len(CC_DELIBERATE) - len(CC_REFUSED) - len(failures)
    print(
        f"\ncrawler-commons weirdToNormalizedUrls: {passed}/{len(rows)} equal "
        f"({passed / len(rows):.1%}), {len(CC_DELIBERATE) + len(CC_REFUSED)} differ on purpose"
    )
    assert not failures, "\n".join(failures)


@pytest.mark.skipif(not WEIRD_URLS.is_file(), reason=f"{WEIRD_URLS} not present")
def test_crawler_commons_deliberate_differences_still_hold() -> None:
    rows = dict(_csv_rows(WEIRD_URLS))
    for weird in CC_DELIBERATE:
        # When one of these starts to agree, move it out of CC_DELIBERATE.
        assert normalise(weird) != normalise(rows[weird]), weird
    for weird in CC_REFUSED:
        assert weird in rows
        with pytest.raises(InvalidUrl):
            normalise(weird)


@pytest.mark.skipif(not INVALID_URLS.is_file(), reason=f"{INVALID_URLS} not present")
def test_crawler_commons_invalid_urls_are_refused() -> None:
    urls = [row[0] for row in _csv_rows(INVALID_URLS)]
    assert len(urls) == 2
    for url in urls:
        with pytest.raises(InvalidUrl):
            normalise(url)
