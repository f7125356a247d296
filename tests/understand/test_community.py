"""Community pages, and "Discussed on" built from their links."""

from __future__ import annotations

import pytest

from trawl.records import Discussion
from trawl.understand.community import MAX_DISCUSSIONS, discussions, is_community, quote


@pytest.mark.parametrize(
    "url",
    [
        "https://example.org/forum/kiwis-123",
        "https://discourse.example.org/t/kiwi-talk/42",
        "https://example.org/questions/1234/how-to-grow-kiwis",
        "https://example.org/viewtopic.php?t=9",
        "https://forum.example.org/anything",
        "https://www.reddit.com/r/kiwis/comments/abc/why/",
    ],
)
def test_urls_of_forum_software_are_community_pages(url: str) -> None:
    assert is_community(url, (), 0)


def test_markup_and_structure_make_community_pages() -> None:
    plain = "https://example.org/articles/kiwis"
    assert not is_community(plain, ("Article", "WebPage"), 2)
    assert is_community(plain, ("QAPage",), 0)
    assert is_community(plain, ("DiscussionForumPosting",), 0)
    assert is_community(plain, (), 3)


def test_a_bare_url_is_no_quote_and_long_anchors_are_cut() -> None:
    assert quote("https://example.org/kiwis") == ""
    assert quote("  read   this ") == "read this"
    assert len(quote("word " * 100)) <= 200


def test_discussed_on_one_per_host_best_first_at_most_three_credited_to_the_canonical() -> None:
    target = "https://kiwi.example/guide"
    copy = "https://mirror.example/guide"
    community = {f"https://f{i}.example/t/{i}": (f"f{i}.example", i / 10) for i in range(5)} | {
        "https://kiwi.example/forum/1": ("kiwi.example", 1.0)
    }
    links = [(f"https://f{i}.example/t/{i}", target, f"quote {i}") for i in range(4)]
    links += [
        ("https://f4.example/t/4", copy, "on the mirror"),
        ("https://kiwi.example/forum/1", target, "own forum"),  # the same host: navigation
        ("https://not-community.example/", target, "ignored"),
    ]
    found = discussions(links, community, {copy: target})
    assert list(found) == [target]
    entries = found[target]
    assert len(entries) == MAX_DISCUSSIONS
    assert entries[0] == Discussion("f4.example", "https://f4.example/t/4", "on the mirror")
    assert [d.host for d in entries] == ["f4.example", "f3.example", "f2.example"]
