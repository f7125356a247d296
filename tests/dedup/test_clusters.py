"""Clusters by union-find, and the canonical chosen in tiers."""

from __future__ import annotations

from trawl.dedup.clusters import (
    Copy,
    UnionFind,
    canonical_verdicts,
    choose_canonical,
    clusters,
    corpus_verdicts,
    fingerprinted,
)
from trawl.dedup.simhash import simhash, text_hash
from trawl.records import CorpusPage


def test_union_find_joins_transitively() -> None:
    sets = UnionFind(5)
    sets.union(0, 1)
    sets.union(3, 4)
    sets.union(1, 4)
    assert len({sets.find(i) for i in (0, 1, 3, 4)}) == 1
    assert sets.find(2) != sets.find(0)


def test_clusters_join_exact_and_near_copies_across_hosts() -> None:
    copies = [
        Copy("https://a.example/x", text_hash=1, simhash=0b0),
        Copy("https://b.example/x", text_hash=2, simhash=0b111),  # 3 bits from the first
        Copy("https://c.example/y", text_hash=2, simhash=1 << 60),  # same text as the second
        Copy("https://d.example/z", text_hash=3, simhash=0b1111 << 20),
        Copy("https://e.example/empty", text_hash=None, simhash=None),
    ]
    assert clusters(copies) == [[0, 1, 2]]


def scored(url: str, authority: float, quality: float, **kw: object) -> Copy:
    return Copy(url, 1, 1, authority=authority, quality=quality, scored=True, **kw)  # type: ignore[arg-type]


def test_tier_one_the_copy_others_name_as_canonical_wins_even_when_crawled_last() -> None:
    members = [
        scored("https://m.example/a", 1.0, 1.0, declared_canonical="https://o.example/a"),
        scored("https://n.example/a", 0.9, 0.9, declared_canonical="https://o.example/a"),
        scored("https://o.example/a", 0.0, 0.1),
    ]
    winner, reason = choose_canonical(members) or (None, "")
    assert winner is not None and winner.url == "https://o.example/a"
    assert "rel=canonical" in reason and "2 other copies" in reason


def test_a_page_naming_itself_casts_no_vote() -> None:
    members = [
        scored("https://m.example/a", 0.5, 0.5, declared_canonical="https://m.example/a"),
        scored("https://n.example/a", 0.5, 0.5),
    ]
    winner, reason = choose_canonical(members) or (None, "")
    assert winner is not None and winner.url == "https://m.example/a"
    assert reason == "the copy crawled first"


def test_tier_two_authority_and_quality_replace_a_weak_first_copy() -> None:
    members = [
        scored("https://mirror.example/a", 0.1, 0.3),
        scored("https://orig.example/a", 0.9, 0.8),
    ]
    winner, reason = choose_canonical(members) or (None, "")
    assert winner is not None and winner.url == "https://orig.example/a"
    assert reason.startswith("higher authority and quality")


def test_tier_two_never_compares_against_an_unscored_page() -> None:
    members = [
        scored("https://mirror.example/a", 0.1, 0.3),
        Copy("https://orig.example/a", 1, 1, authority=0.0, quality=0.9, scored=False),
        scored("https://third.example/a", 0.9, 0.9),
    ]
    winner, reason = choose_canonical(members) or (None, "")
    assert winner is not None and winner.url == "https://mirror.example/a"
    assert reason == "the copy crawled first"


def test_tier_three_the_existing_canonical_stays_on_a_small_difference() -> None:
    members = [
        scored("https://a.example/", 0.50, 0.5, duplicate_of="https://b.example/"),
        scored("https://b.example/", 0.49, 0.5),
    ]
    winner, reason = choose_canonical(members) or (None, "")
    assert winner is not None and winner.url == "https://b.example/"
    assert reason == "already the canonical copy"


def test_only_an_indexable_page_can_be_canonical() -> None:
    members = [
        Copy("https://a.example/", 1, 1, indexable=False, authority=1, quality=1, scored=True),
        scored("https://b.example/", 0.0, 0.0),
    ]
    winner, _ = choose_canonical(members) or (None, "")
    assert winner is not None and winner.url == "https://b.example/"
    assert choose_canonical([Copy("https://a.example/", 1, 1, indexable=False)]) is None


def test_verdicts_name_the_canonical_for_every_member_and_none_for_loners() -> None:
    copies = [
        scored("https://a.example/", 0.1, 0.1),
        scored("https://b.example/", 0.9, 0.9),
        Copy("https://c.example/", 7, 0b11111 << 50, scored=True),
    ]
    verdicts = {v.url: v for v in canonical_verdicts(copies)}
    assert set(verdicts) == {"https://a.example/", "https://b.example/"}
    assert verdicts["https://a.example/"].duplicate_of == "https://b.example/"
    assert verdicts["https://b.example/"].duplicate_of is None


def corpus_page(url: str, text: str | None, **kw: object) -> CorpusPage:
    fields: dict[str, object] = {
        "url": url, "host": "a.test", "indexable": True, "redirect_to": None,
        "canonical": None, "text_hash": None, "simhash": None, "text": text,
        "quality": 0.5, "community": False, "authority": 0.0, "scored": False,
        "duplicate_of": None, "canonical_reason": None, "discussed_on": (),
    }  # fmt: skip
    fields.update(kw)
    return CorpusPage(**fields)  # type: ignore[arg-type]


def test_a_page_saved_without_fingerprints_is_fingerprinted_and_loses_its_text() -> None:
    text = "Herons wade in shallow water and wait for fish to pass. " * 5
    old = fingerprinted(corpus_page("http://a.test/old", text))
    assert (old.text_hash, old.simhash, old.text) == (text_hash(text), simhash(text), None)
    kept = corpus_page("http://a.test/kept", None, text_hash=7, simhash=9)
    assert fingerprinted(kept) is kept


def test_stored_pages_are_judged_with_their_fresh_authority() -> None:
    pages = [
        corpus_page("http://a.test/first", None, text_hash=1, simhash=1),
        corpus_page("http://b.test/copy", None, text_hash=1, simhash=1),
    ]
    # The copy crawled second wins by authority: every page counts as scored.
    verdicts = {v.url: v for v in corpus_verdicts(pages, [0.0, 0.9])}
    assert verdicts["http://a.test/first"].duplicate_of == "http://b.test/copy"
    assert verdicts["http://b.test/copy"].duplicate_of is None
    assert corpus_verdicts(pages, [0.9, 0.0])[1].duplicate_of == "http://a.test/first"
