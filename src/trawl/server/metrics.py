"""What the server counts: Prometheus text at /metrics, and recent history for the charts.

Counters live in a registry of the app's own (several apps in one test
process must not share them). A sampler records, every ``SAMPLE_SECONDS``,
the queries, their latency, the crawl rate and the index size, so the metrics
page can draw the last hour without an external time-series store.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from trawl.errors import TrawlError
from trawl.server.crawls import CrawlManager

SAMPLE_SECONDS = 10.0
HISTORY = 360  # samples kept: an hour at the default interval
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


@dataclass(frozen=True, slots=True)
class Sample:
    at: float  # seconds since the epoch
    queries: int  # in the interval before ``at``
    latency_p50_ms: float
    latency_p95_ms: float
    crawl_pages_per_second: float
    index_documents: int
    index_bytes: int


def directory_bytes(path: Path) -> int:
    try:
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    except OSError:  # a segment merged away while we walked
        return 0


class Metrics:
    def __init__(
        self, crawls: CrawlManager, index_documents: Callable[[], int], index_path: Path
    ) -> None:
        self.registry = CollectorRegistry()
        self._crawls = crawls
        self._index_documents = index_documents
        self._index_path = index_path
        self.queries = Counter(
            "trawl_queries", "Searches answered", ["source"], registry=self.registry
        )
        self.latency = Histogram(
            "trawl_query_seconds",
            "Time to answer a search",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.rejected = Counter(
            "trawl_rate_limited",
            "Requests refused by a rate limit",
            ["limit"],
            registry=self.registry,
        )
        gauges = {
            "trawl_index_documents": ("Documents in the search index", self._documents),
            "trawl_index_bytes": ("Bytes of the search index on disk", self._bytes),
            "trawl_crawl_running": ("1 while a crawl runs", lambda: float(crawls.running)),
            "trawl_crawl_discovered": (
                "URLs discovered by the current or last crawl",
                lambda: self._crawl("discovered"),
            ),
            "trawl_crawl_crawled": (
                "URLs fetched by the current or last crawl",
                lambda: self._crawl("crawled"),
            ),
            "trawl_crawl_queued": (
                "URLs waiting in the current crawl",
                lambda: self._crawl("queued"),
            ),
            "trawl_crawl_errors": (
                "Failed fetches and server errors of the current crawl",
                lambda: self._crawl("errors"),
            ),
            "trawl_crawl_pages_per_second": (
                "Fetch rate of the current crawl",
                lambda: self._crawl("pages_per_second"),
            ),
        }
        for name, (doc, read) in gauges.items():
            Gauge(name, doc, registry=self.registry).set_function(read)
        self.history: deque[Sample] = deque(maxlen=HISTORY)
        self._latencies: list[float] = []
        self._queries_in_interval = 0

    def observe_query(self, seconds: float, source: str) -> None:
        self.queries.labels(source).inc()
        self.latency.observe(seconds)
        self._latencies.append(seconds)
        self._queries_in_interval += 1

    def prometheus_text(self) -> bytes:
        return generate_latest(self.registry)

    def sample(self) -> Sample:
        latencies = sorted(self._latencies)
        self._latencies, count, self._queries_in_interval = [], self._queries_in_interval, 0

        def percentile(p: float) -> float:
            if not latencies:
                return 0.0
            return round(latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000, 2)

        point = Sample(
            at=time.time(),
            queries=count,
            latency_p50_ms=percentile(0.5),
            latency_p95_ms=percentile(0.95),
            crawl_pages_per_second=self._crawl("pages_per_second") if self._crawls.running else 0,
            index_documents=int(self._documents()),
            index_bytes=int(self._bytes()),
        )
        self.history.append(point)
        return point

    async def sample_forever(self, interval: float = SAMPLE_SECONDS) -> None:
        while True:
            await asyncio.sleep(interval)
            self.sample()

    def _documents(self) -> float:
        try:
            return float(self._index_documents())
        except TrawlError:  # no index yet: the gauge reads 0, a scrape never fails
            return 0.0

    def _bytes(self) -> float:
        return float(directory_bytes(self._index_path))

    def _crawl(self, name: str) -> float:
        return float(self._crawls.status()[name])
