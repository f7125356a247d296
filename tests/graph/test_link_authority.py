"""graph/links.py: which stored links count, and for which page."""

from __future__ import annotations

from trawl.graph.links import MAX_REDIRECT_HOPS, link_authority, resolve

URLS = ["http://a.test/", "http://a.test/hub", "http://a.test/new", "http://a.test/lone"]


def test_a_link_to_a_redirect_counts_for_its_target() -> None:
    redirects = {"http://a.test/old": "http://a.test/new"}
    links = [
        ("http://a.test/", "http://a.test/old", False),  # via the redirect
        ("http://a.test/hub", "http://a.test/old", False),
        ("http://a.test/lone", "http://a.test/new", False),
    ]
    ranked = link_authority(URLS, redirects, iter(links))
    assert ranked.links == 3
    assert max(ranked.scores) == 1.0
    assert ranked.scores.index(1.0) == URLS.index("http://a.test/new")


def test_nofollow_and_unknown_pages_count_for_nothing() -> None:
    links = [
        ("http://a.test/", "http://a.test/hub", True),  # nofollow
        ("http://elsewhere.test/", "http://a.test/hub", False),  # source not stored
        ("http://a.test/", "http://elsewhere.test/", False),  # target not stored
    ]
    ranked = link_authority(URLS, {}, iter(links))
    assert ranked.links == 0
    assert ranked.scores == [0.0] * len(URLS)  # all alike: nothing to tell apart


def test_a_redirect_loop_ends_after_the_hop_limit() -> None:
    loop = {"http://a.test/x": "http://a.test/y", "http://a.test/y": "http://a.test/x"}
    assert resolve("http://a.test/x", loop) in loop
    chain = {f"http://a.test/{i}": f"http://a.test/{i + 1}" for i in range(10)}
    assert resolve("http://a.test/0", chain) == f"http://a.test/{MAX_REDIRECT_HOPS}"
    assert link_authority([], {}, iter([])).scores == []
