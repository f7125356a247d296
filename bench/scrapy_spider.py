"""The Scrapy peer for the crawl benchmark: follow every same-host <a href>, keep nothing.

Run: python bench/scrapy_spider.py URL. The last stdout line is the number of pages
crawled (responses that reached the spider), so bench/run.py can read it like Trawl's
summary line. Scrapy only fetches and extracts links; it stores and indexes nothing.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor

SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    "CONCURRENT_REQUESTS": 16,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "HTTPCACHE_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "REMOTE_CONTROL_ENABLED": False,  # Scrapy 2.19's HTTP successor to the telnet console
    "LOG_LEVEL": "WARNING",
}


class FollowSpider(Spider):
    name = "follow"

    def __init__(self, start_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_url = start_url
        # allow_domains compares against host:port, so same-site is checked by hand.
        self.netloc = urlsplit(start_url).netloc
        self.links = LinkExtractor(tags=("a",), attrs=("href",))
        self.pages = 0

    async def start(self) -> AsyncIterator[Request]:
        # Scrapy's default start request skips the dupe filter, so every link back to
        # index.html would fetch it a second time; Trawl fetches each URL once.
        yield Request(self.start_url)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        self.pages += 1
        if not isinstance(response, TextResponse):  # an image or PDF has no links
            return
        for link in self.links.extract_links(response):
            if urlsplit(link.url).netloc == self.netloc:
                yield response.follow(link, callback=self.parse)


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: scrapy_spider.py URL", file=sys.stderr)
        return 2
    process = CrawlerProcess(settings=SETTINGS)
    crawler = process.create_crawler(FollowSpider)
    process.crawl(crawler, start_url=sys.argv[1])
    process.start()
    spider = crawler.spider
    print(spider.pages if isinstance(spider, FollowSpider) else 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
