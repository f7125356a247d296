"""What every route needs, made once per app: settings, index, store, crawls, limits, metrics."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi import Request
from limits import RateLimitItem

from trawl.errors import RateLimited
from trawl.index.tantivy_index import IndexReader
from trawl.records import ApiKey
from trawl.server import auth
from trawl.server.crawls import CrawlManager
from trawl.server.header_checks import HeaderChecker, HeaderCheckJobs
from trawl.server.metrics import Metrics
from trawl.server.ratelimit import RateLimits
from trawl.settings import Settings
from trawl.store import open_store
from trawl.store.base import Store


class LazyIndex:
    """Opens the index lazily, so the server starts before the first crawl."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._reader: IndexReader | None = None

    def get(self) -> IndexReader:
        if self._reader is None:
            self._reader = IndexReader(self._path)
        return self._reader

    def documents(self) -> int:
        return self.get().num_docs()


class Context:
    def __init__(self, settings: Settings, header_checker: HeaderChecker | None = None) -> None:
        self.settings = settings
        self.index = LazyIndex(settings.index_path)
        self.crawls = CrawlManager(settings)
        self.limits = RateLimits(settings.search_rate_limit, settings.admin_rate_limit)
        self.metrics = Metrics(self.crawls, self.index.documents, settings.index_path)
        self.header_checks = HeaderCheckJobs(settings, header_checker)

    @contextmanager
    def store(self) -> Iterator[Store]:
        """A store connection for one request (SQLite connections are not shared
        between the threads FastAPI runs routes in)."""
        store = open_store(self.settings)
        try:
            yield store
        finally:
            store.close()

    def client_id(self, request: Request) -> str:
        return request.client.host if request.client else "unknown"

    def limit_search(self, request: Request) -> None:
        self._hit("search", self.limits.search, "client:" + self.client_id(request))

    def admin_key(self, request: Request, *, cookie: bool = False) -> ApiKey:
        """The caller's API key, checked and counted against the admin rate limit."""
        with self.store() as store:
            key = auth.authenticate(store, auth.presented_key(request, cookie=cookie))
        self._hit("admin", self.limits.admin, f"key:{key.id}")
        return key

    def _hit(self, name: str, item: RateLimitItem, who: str) -> None:
        try:
            self.limits.hit(item, who)
        except RateLimited:
            self.metrics.rejected.labels(name).inc()
            raise


def context_of(request: Request) -> Context:
    ctx: Context = request.app.state.context
    return ctx
