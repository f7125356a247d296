"""The followed links between stored pages, and the authority they give each page. Pure.

A link to a redirect counts for the redirect's target (up to ``MAX_REDIRECT_HOPS``
hops); a nofollow link, or one to a page outside the set, counts for nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from trawl.graph.pagerank import authority, pagerank

MAX_REDIRECT_HOPS = 5


@dataclass(frozen=True, slots=True)
class LinkAuthority:
    scores: list[float]  # authority in [0, 1], one per page, in the pages' order
    links: int  # followed links between the pages, after redirects


def link_authority(
    urls: Sequence[str],
    redirects: Mapping[str, str],
    links: Iterable[tuple[str, str, bool]],
) -> LinkAuthority:
    """PageRank over ``links`` (source, target, nofollow) between ``urls``, scaled to
    authority; ``redirects``: URL -> where it redirects. ``links`` is read once."""
    position = {url: i for i, url in enumerate(urls)}
    sources: list[int] = []
    targets: list[int] = []
    for source, target, nofollow in links:
        s = position.get(source)
        if s is None:
            continue
        t = position.get(resolve(target, redirects))
        if t is not None and not nofollow:
            sources.append(s)
            targets.append(t)
    scores = authority(pagerank(len(urls), sources, targets))
    return LinkAuthority(scores, len(sources))


def resolve(url: str, redirects: Mapping[str, str]) -> str:
    """Where ``url`` ends after its redirects (at most MAX_REDIRECT_HOPS)."""
    for _ in range(MAX_REDIRECT_HOPS):
        target = redirects.get(url)
        if target is None:
            break
        url = target
    return url
