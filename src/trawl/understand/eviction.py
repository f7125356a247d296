"""Which stored pages should go, and by which rule. Pure: records in, reasons out.

Rules, checked in this order (the first that holds names the reason):

- near-duplicate: another copy is the canonical (trawl.dedup.clusters);
- gone: the page answered 404 or 410 at its last fetch;
- low value: quality under ``min_quality`` and authority under
  ``min_authority``, both at once and only on a page PageRank has scored: the
  thresholds are tight because looser pairs caught photo galleries, directory
  pages and live news homepages in seed 004's samples;
- host language: the host's majority language (a vote over its pages, never
  the first page seen) is not in ``languages``; an empty list keeps all.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from trawl.records import PageRecord

NEAR_DUPLICATE = "near-duplicate"
GONE = "gone"
LOW_VALUE = "low value"
HOST_LANGUAGE = "host language"
GONE_STATUSES = frozenset({404, 410})


@dataclass(frozen=True, slots=True)
class EvictionRules:
    min_quality: float = 0.2
    min_authority: float = 0.7
    languages: frozenset[str] = frozenset()  # primary language subtags; empty keeps all


def primary_language(lang: str | None) -> str | None:
    """``da-DK`` -> ``da``: sites declare regions, the allowed list names languages."""
    if not lang:
        return None
    return lang.replace("_", "-").split("-", 1)[0].strip().lower() or None


def parse_languages(text: str) -> frozenset[str]:
    """The setting's comma- or space-separated list as primary subtags."""
    return frozenset(p for p in (primary_language(x) for x in text.replace(",", " ").split()) if p)


def host_languages(pages: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """Host -> the language most of its (host, lang) pages are in; ties go to the
    alphabetically first, so the answer never depends on crawl order."""
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    for host, lang in pages:
        primary = primary_language(lang)
        if primary:
            votes[host][primary] += 1
    return {
        host: min(counts, key=lambda lang: (-counts[lang], lang)) for host, counts in votes.items()
    }


def eviction_reason(
    record: PageRecord, host_language: str | None, rules: EvictionRules
) -> str | None:
    """The rule that evicts ``record``, or None when it stays."""
    if record.duplicate_of is not None:
        return NEAR_DUPLICATE
    if record.status in GONE_STATUSES:
        return GONE
    if (
        record.indexable
        and record.scored
        and record.quality < rules.min_quality
        and record.authority < rules.min_authority
    ):
        return LOW_VALUE
    if rules.languages and host_language is not None and host_language not in rules.languages:
        return HOST_LANGUAGE
    return None
