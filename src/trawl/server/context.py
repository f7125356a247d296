"""What every route needs, made once per app: settings, index, store, crawls, limits, metrics."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

from fastapi import FastAPI, Request
from limits import RateLimitItem

from trawl.errors import Forbidden, RateLimited, Unauthorized
from trawl.index.tantivy_index import IndexReader
from trawl.records import ApiKey, KeyScope
from trawl.server import auth
from trawl.server.crawls import CrawlManager
from trawl.server.header_checks import HeaderChecker, HeaderCheckJobs
from trawl.server.metrics import Metrics
from trawl.server.ratelimit import RateLimits, client_key
from trawl.server.result_cache import ResultCache
from trawl.server.search_pool import SearchPool
from trawl.settings import Settings
from trawl.store.base import Store
from trawl.store.connections import StoreConnections


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
        self.results = ResultCache(settings.search_cache_size)
        self.search_pool = SearchPool(settings)  # started and closed by the app's lifespan
        self.metrics = Metrics(self.crawls, self.index.documents, settings.index_path)
        self.header_checks = HeaderCheckJobs(settings, header_checker)
        self.setup = auth.SetupLink()  # issued by `trawl serve` when no key exists
        # Opened by the app's lifespan (or the first request that needs it), closed at
        # its end: a request borrows a connection, it never opens the store.
        self.stores = StoreConnections(settings)

    def store(self) -> AbstractContextManager[Store]:
        """A store connection for one request: the thread's own on SQLite (FastAPI runs
        routes in a pool of threads), the shared pool on PostgreSQL."""
        return self.stores.connection()

    def client_id(self, request: Request) -> str:
        # The peer's address, or the one a trusted proxy named (trusted_proxies: the
        # ASGI server rewrites request.client only for those).
        return request.client.host if request.client else "unknown"

    def limit_search(self, request: Request) -> None:
        if self.settings.search_requires_key:
            self.caller(request, "search", count=False)
        who = "client:" + client_key(self.client_id(request))
        self._hit("search", self.limits.search, who)

    def caller(
        self, request: Request, scope: KeyScope, *, cookie: bool = True, count: bool = True
    ) -> ApiKey:
        """The caller's key, checked for ``scope``, from the key headers or (``cookie``)
        the browser's login session; counted against the admin rate limit (``count``).

        A state change made with the session cookie must come from one of this server's
        own pages: a form on another port of the same host gets the cookie sent too.
        """
        key = auth.presented_key(request)
        with self.store() as store:
            if key is not None:
                found = auth.authenticate(store, key, scope)
            elif cookie and (token := auth.session_token(request)) is not None:
                own = auth.from_own_origin(request, self.settings.public_url, required=True)
                if request.method not in auth.SAFE_METHODS and not own:
                    raise Forbidden(auth.CROSS_SITE)
                found = auth.session(store, token, scope)
            else:
                raise Unauthorized(f"an API key is required (header {auth.KEY_HEADER})")
        if count:
            self._hit("admin", self.limits.admin, f"key:{found.id}")
        return found

    def _hit(self, name: str, item: RateLimitItem, who: str) -> None:
        try:
            self.limits.hit(item, who)
        except RateLimited:
            self.metrics.rejected.labels(name).inc()
            raise


def context_of_app(app: FastAPI) -> Context:
    ctx: Context = app.state.context
    return ctx


def context_of(request: Request) -> Context:
    ctx: Context = request.app.state.context
    return ctx
