"""CPU per 1,000 home pages spent resolving and admitting their links (issue 17).

The pages are bench/many_hosts.py's home pages (19 links to /p1../p19), one per host,
each host on its own loopback address: parsed once up front, then timed through link
extraction (extract/links.occurrences), the crawler's admission checks (scope, seen,
URL safety) and the frontier's enqueue. Prints CPU-ms per 1,000 pages. A/B against
another checkout: run it with PYTHONPATH=<checkout>/src, interleaved.

    PYTHONPATH=src .venv/bin/python bench/link_admission.py [--hosts 1000]
"""

from __future__ import annotations

import argparse
import time

from selectolax.lexbor import LexborHTMLParser

from trawl.crawl.frontier import Frontier
from trawl.extract.links import followed, occurrences
from trawl.records import CrawlUrl
from trawl.urls.safety import unsafe_reason
from trawl.urls.scope import CrawlScope


def address(i: int) -> str:
    return f"127.10.{i // 250}.{i % 250 + 1}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=1000)
    hosts = [f"http://{address(i)}:8123/" for i in range(parser.parse_args().hosts)]
    links = "".join(f'<a href="/p{k}">page {k}</a> ' for k in range(1, 20))
    body = f"<html><head><title>Home</title></head><body>{links}</body></html>"
    trees = [LexborHTMLParser(body) for _ in hosts]
    scope = CrawlScope("host", hosts)
    frontier = Frontier(delay=1.0, host_concurrency=1)
    start = time.process_time()
    for host, tree in zip(hosts, trees, strict=True):
        found, _ = occurrences(tree, host)
        for c in [CrawlUrl(h.url, 1, host, request=h.request) for h in followed(found)]:
            if scope.contains(c.url) and not frontier.seen(c.url) and unsafe_reason(c.url) is None:
                frontier.enqueue(c)
    print(f"{(time.process_time() - start) * 1e6 / len(hosts):.1f} CPU-ms per 1,000 pages")


if __name__ == "__main__":
    main()
