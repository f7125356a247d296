"""The fast path in urls/identity.py must agree with w3lib's safe_url_string."""

from __future__ import annotations

import string
from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st
from w3lib.url import safe_url_string

from trawl.urls.identity import _ALREADY_SAFE, _clean, politeness_host

SAFE_ALPHABET = string.ascii_letters + string.digits + "-._~:/?#@!$&()*+,;=%"


@given(st.text(alphabet=SAFE_ALPHABET, max_size=60))
def test_urls_the_fast_path_accepts_are_left_unchanged_by_w3lib(tail: str) -> None:
    url = "http://example.com/" + tail
    assert _ALREADY_SAFE.fullmatch(url)
    # Equal up to what normalise keeps: w3lib drops an empty "?" that urlsplit ignores too.
    assert urlsplit(safe_url_string(url))[:4] == urlsplit(url)[:4]


@given(st.text(max_size=40))
def test_the_fast_path_refuses_anything_w3lib_would_change(tail: str) -> None:
    url = "http://example.com/" + tail
    if urlsplit(safe_url_string(url))[:4] != urlsplit(url)[:4]:
        assert not _ALREADY_SAFE.fullmatch(url)


@given(st.text(alphabet=SAFE_ALPHABET, max_size=60))
def test_urls_the_fast_path_accepts_need_no_browser_clean_up(text: str) -> None:
    # normalise skips _clean for these: it must have had nothing to do.
    assert _ALREADY_SAFE.fullmatch(text)
    assert _clean(text) == text


@given(st.text(max_size=40))
def test_the_fast_path_refuses_anything_clean_up_would_change(text: str) -> None:
    if _clean(text) != text:
        assert not _ALREADY_SAFE.fullmatch(text)


def _host_or_error(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError as e:
        return f"ValueError {e}"


@given(
    st.sampled_from(["http://", "https://", "HTTP://", "http:/", "ftp://", " http://"]),
    st.text(alphabet=SAFE_ALPHABET + "[]\t\n\r\\ ", max_size=30) | st.text(max_size=30),
)
def test_the_cached_politeness_host_is_urlsplits(scheme: str, rest: str) -> None:
    url = scheme + rest
    try:
        host = politeness_host(url)
    except ValueError as e:
        host = f"ValueError {e}"
    assert host == _host_or_error(url)


def test_a_tab_or_a_delimiter_is_read_as_urlsplit_reads_it() -> None:
    for url in ("http://ex\tample.com/a", "http://a.b?x/y", "http://a.b#/c", "https://[::1]:8/"):
        assert politeness_host(url) == _host_or_error(url)
