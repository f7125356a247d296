"""Eviction rules over records: each rule, its thresholds, and the host language vote."""

from __future__ import annotations

from dataclasses import replace

from trawl.records import PageRecord
from trawl.understand.eviction import (
    GONE,
    HOST_LANGUAGE,
    LOW_VALUE,
    NEAR_DUPLICATE,
    EvictionRules,
    eviction_reason,
    host_languages,
    parse_languages,
    primary_language,
)

PAGE = PageRecord(
    url="https://a.example/",
    host="a.example",
    status=200,
    depth=0,
    fetched_at=0.0,
    indexable=True,
    quality=0.6,
    authority=0.5,
    scored=True,
    lang="da",
)
RULES = EvictionRules()


def test_a_good_page_stays() -> None:
    assert eviction_reason(PAGE, "da", RULES) is None


def test_near_duplicates_and_gone_pages_go() -> None:
    assert (
        eviction_reason(replace(PAGE, duplicate_of="https://b.example/"), "da", RULES)
        == NEAR_DUPLICATE
    )
    assert eviction_reason(replace(PAGE, status=404, indexable=False), "da", RULES) == GONE
    assert eviction_reason(replace(PAGE, status=410, indexable=False), "da", RULES) == GONE
    assert eviction_reason(replace(PAGE, status=403, indexable=False), "da", RULES) is None


def test_low_value_needs_both_low_quality_and_low_authority_and_a_score() -> None:
    thin = replace(PAGE, quality=0.1, authority=0.69)
    assert eviction_reason(thin, None, RULES) == LOW_VALUE
    assert eviction_reason(replace(thin, authority=0.7), None, RULES) is None
    assert eviction_reason(replace(thin, quality=0.2), None, RULES) is None
    assert eviction_reason(replace(thin, scored=False), None, RULES) is None
    assert eviction_reason(thin, None, EvictionRules(min_quality=0.05)) is None


def test_hosts_outside_the_allowed_languages_go_and_an_empty_list_keeps_all() -> None:
    rules = EvictionRules(languages=parse_languages("da, en"))
    assert eviction_reason(PAGE, "da", rules) is None
    assert eviction_reason(PAGE, "ar", rules) == HOST_LANGUAGE
    assert eviction_reason(PAGE, "ar", RULES) is None


def test_host_language_is_a_majority_vote_of_primary_subtags() -> None:
    votes = [("bbc", "ar")] + [("bbc", "en-GB")] * 3 + [("dk", "da-DK"), ("dk", "da"), ("x", None)]
    assert host_languages(votes) == {"bbc": "en", "dk": "da"}
    assert host_languages([("t", "en"), ("t", "da")]) == {"t": "da"}
    assert primary_language("DA_dk") == "da"
    assert parse_languages("") == frozenset()
