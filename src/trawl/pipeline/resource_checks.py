"""HEAD requests after a crawl (its pages' resources) and on demand (the report's
"Check headers"), under seed 003's rules (``trawl.net.header_check``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from trawl.net.addresses import Target
from trawl.net.header_check import check_many
from trawl.records import HeaderCheck, ResourceCheck
from trawl.settings import Settings
from trawl.store.base import Report
from trawl.urls.start import parse_host_aliases


async def check_resources(
    store: Report, crawl_id: int, settings: Settings, allowed: frozenset[Target]
) -> list[ResourceCheck]:
    """HEAD the resources (images, scripts, stylesheets...) the crawl's pages use, at most
    ``settings.resource_checks`` of them, and store the answers."""
    urls = store.resource_urls(crawl_id, settings.resource_checks)
    written = store.written_forms(urls)
    aliases = parse_host_aliases(settings.host_aliases)
    checks = await check_many(
        [written.get(u, u) for u in urls],  # asked as the page wrote it
        user_agent=settings.user_agent,
        # The user named the alias targets: like --allow-host, they may be private.
        allowed=allowed | frozenset(aliases.values()),
        aliases=aliases,
    )
    # Kept by identity, as the links name them.
    resources = [replace(_resource(c), url=u) for u, c in zip(urls, checks, strict=True)]
    store.save_resources(resources)
    return resources


def _resource(check: HeaderCheck) -> ResourceCheck:
    length = check.header("content-length")
    return ResourceCheck(
        url=check.url,
        status=check.status,
        content_type=check.header("content-type"),
        content_length=int(length) if length and length.isdigit() else None,
        error=check.error,
        checked_at=time.time(),
    )


async def check_external_headers(
    urls: Sequence[str], settings: Settings, *, allow: Sequence[Target] = ()
) -> list[HeaderCheck]:
    """The report's "Check headers" action: HEAD each URL under seed 003's rules
    (``trawl.net.header_check``), six at once, in the order given. Private
    addresses are refused unless their exact host:port is in ``allow`` or is the target
    of one of ``host_aliases``, which are honoured as in the crawl."""
    aliases = parse_host_aliases(settings.host_aliases)
    return await check_many(
        urls,
        user_agent=settings.user_agent,
        allowed=frozenset(allow) | frozenset(aliases.values()),
        aliases=aliases,
    )
