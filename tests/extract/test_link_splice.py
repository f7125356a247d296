"""links._resolve splices a path-absolute link's tail onto the base's origin: it must
answer exactly what resolving the link whole (identity.forms) answers."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from trawl.errors import InvalidUrl
from trawl.extract.links import _URL_ATTRIBUTES, _resolve, _split_srcset
from trawl.urls.identity import forms

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
SITES = ("site-sumo-docs", "site-postgresql-15-docs")
# Hosts spelled as pages and <base> elements spell them: cased, with default and
# other ports, IDNA, IPv4 and IPv6, a trailing dot, empty and real credentials.
BASES = (
    "https://support.mozilla.org/en-US/kb/",
    "http://127.10.0.1:8123/",
    "HTTP://Example.COM:80/a/b.html?x=1",
    "https://example.com:443/",
    "http://[::1]:8080/dir/page",
    "http://[0:0::1]/",
    "https://münchen.de./straße/",
    "http://0x7f.1/",
    "http://@host.example/",
    "http://user:pw@host.example/",
    "http://host.example:0/",
    "http://host.example:99999/",
    "ftp://files.example/",
    "http:/no-host",
    "http://[::1/",
)


def whole(href: str, base: str) -> tuple[str, str | None] | None:
    try:
        return forms(href, base=base)
    except InvalidUrl:
        return None


def _hrefs(page: Path) -> set[str]:
    tree = LexborHTMLParser(page.read_bytes().decode("utf-8", "replace"))
    found: set[str] = set()
    for tag, attributes in _URL_ATTRIBUTES.items():
        for node in tree.css(tag):
            for attribute in attributes:
                raw = node.attributes.get(attribute)
                if raw:
                    hrefs = _split_srcset(raw) if attribute == "srcset" else [raw.strip()]
                    found.update(h for h in hrefs if h)
    return found


def test_the_real_pages_links_resolve_as_whole() -> None:
    roots = [DATA / site for site in SITES if (DATA / site).is_dir()]
    if not roots:
        pytest.skip(f"none of {SITES} in {DATA}")
    hrefs: set[str] = set()
    for root in roots:
        for page in sorted(root.rglob("*.html")):
            hrefs |= _hrefs(page)
    # The mirrors link mostly relatively: their paths written from the root too.
    hrefs |= {"/" + h for h in hrefs if ":" not in h.split("/")[0] and h[:1] not in "/#?"}
    spliced = 0
    for href in sorted(hrefs):
        for base in BASES:
            assert _resolve(href, base) == whole(href, base), (href, base)
        spliced += href.startswith("/") and not href.startswith("//")
    assert spliced > 100  # the splice was exercised, not only the whole resolution


SAFE = string.ascii_letters + string.digits + "-._~:/?#@!$&()*+,;=%"


@given(
    st.text(alphabet=SAFE, max_size=40).map(lambda t: "/" + t),
    st.sampled_from(BASES) | st.text(max_size=30).map(lambda t: "http://" + t),
)
def test_odd_links_and_bases_resolve_as_whole(href: str, base: str) -> None:
    assert _resolve(href, base) == whole(href, base)


def test_a_link_near_the_length_cap_is_refused_or_cut_as_whole() -> None:
    for base in ("http://a/", "http://" + "h" * 300 + "/", "http://" + "h" * 16_370 + "/"):
        for n in (16_000, 16_370, 16_380, 16_400):
            for href in ("/" + "p" * n, "/x?utm_source=" + "q" * n, "/x?b=1&a=" + "q" * n):
                assert _resolve(href, base) == whole(href, base)
