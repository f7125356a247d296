"""The fast path in urls/identity.py must agree with w3lib's safe_url_string."""

from __future__ import annotations

import string
from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st
from w3lib.url import safe_url_string

from trawl.urls.identity import _ALREADY_SAFE, _clean

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
