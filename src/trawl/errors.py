"""Every error Trawl raises on purpose, in one tree.

    TrawlError
    ├── ConfigError            a setting or the trawl.toml file is wrong
    ├── MissingExtra           a feature whose optional packages are not installed
    ├── InvalidUrl             a URL cannot be used at all
    │   └── CredentialsInUrl   a URL carries user:password
    ├── FetchError             one request failed; the crawl goes on
    │   ├── BlockedAddress     the host resolves only to addresses we must not reach
    │   ├── FetchTimeout       connect or read took too long
    │   ├── HostUnreachable    refused, unknown host name, or TLS failure: no server answered
    │   ├── ConnectionLost     the connection was reset or closed mid-answer (worth a retry)
    │   ├── BadResponse        the answer broke HTTP or went past a header limit
    │   └── ResponseTooLarge   the declared body is over the byte cap
    ├── RenderError            Chromium cannot start, or cannot render one page
    ├── SitemapError           a sitemap is malformed, hostile or over a limit
    ├── StoreError             the store cannot be opened or migrated
    ├── SearchIndexError       the index cannot be opened or written
    │   └── DiskFull           (and a StoreError) no room to write: the command stops
    ├── QueryError             a search request is unusable (bad page number, ...)
    └── ServiceError           the server refuses a request
        ├── Unauthorized       no API key, or not a known one
        ├── NotFound           the site, page or key named does not exist
        ├── Conflict           a crawl is already running, ...
        ├── RateLimited        too many requests: try again after ``retry_after`` seconds
        ├── SearchTimeout      a search ran past ``search_worker_timeout``: not run again
        └── Unavailable        a feature this build does not have yet

Library errors (aiohttp, sqlite3, tantivy) are translated into this tree where
they cross into Trawl, so callers catch one family. The HTTP status for each
class is decided in one place: ``trawl.server.errors``.
"""


class TrawlError(Exception):
    """Root of every error Trawl raises on purpose."""


class ConfigError(TrawlError):
    """A setting has a bad value, or trawl.toml cannot be read."""


class MissingExtra(TrawlError):
    """A feature asked for whose packages are an extra that is not installed.

    The runtime install (``pip install trawl``) crawls, indexes, searches and
    serves; rendering, a PostgreSQL store and evaluation each need an extra.
    """

    def __init__(self, feature: str, extra: str, missing: str) -> None:
        super().__init__(
            f"{feature} needs the {extra!r} extra ({missing} is not installed):"
            f" pip install 'trawl[{extra}]'"
        )
        self.extra = extra
        self.missing = missing


class InvalidUrl(TrawlError):
    """A URL that cannot be crawled: bad syntax, scheme or host."""


class CredentialsInUrl(InvalidUrl):
    """A URL with user:password: refused so secrets never reach logs or the store."""


class FetchError(TrawlError):
    """A single request failed. Recorded against the page; never stops the crawl."""


class BlockedAddress(FetchError):
    """The host resolved only to private, loopback or reserved addresses."""


class FetchTimeout(FetchError):
    """Connecting or reading took longer than the configured timeout."""


class HostUnreachable(FetchError):
    """No server answered: connection refused, unknown host name, or TLS failure."""


class ConnectionLost(FetchError):
    """The connection was reset or closed before the answer was complete."""


class BadResponse(FetchError):
    """The server's answer broke HTTP, or its headers went past our limits."""


class RenderError(TrawlError):
    """Chromium could not start (the crawl stops), or one page could not be rendered."""


class SitemapError(TrawlError):
    """A sitemap cannot be used: malformed, hostile (entities), or over a size limit."""


class ResponseTooLarge(FetchError):
    """The Content-Length is over the cap, so the body was not read at all."""


class StoreError(TrawlError):
    """The store could not be opened, migrated or written."""


class SearchIndexError(TrawlError):
    """The search index could not be opened or written."""


class DiskFull(StoreError, SearchIndexError):
    """The store or the index could not write for want of room (a full disk, a file
    size limit, a failed write). Not one page's fault: the command stops, leaving what
    it committed, and the same command resumes once there is room."""


class WorkerError(TrawlError):
    """A stage's worker process could not finish a task: it died on it twice, or the
    pool was shut down first. That page fails alone."""


class QueryError(TrawlError):
    """A search request is unusable as given."""


class ServiceError(TrawlError):
    """The server refuses a request (the HTTP status is chosen in server/errors.py)."""


class Unauthorized(ServiceError):
    """An admin request without a valid API key."""


class Forbidden(ServiceError):
    """A request the server will not act on: an admin form posted from another site."""


class NotFound(ServiceError):
    """The site, page or key named does not exist."""


class Conflict(ServiceError):
    """The request clashes with the current state (a crawl is already running)."""


class RateLimited(ServiceError):
    """Too many requests from one client or key."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"rate limit exceeded: try again in {retry_after} s")
        self.retry_after = retry_after


class SearchTimeout(ServiceError):
    """A search ran past ``search_worker_timeout``. It is not run a second time: a
    query that slow would be as slow again, and the client would wait twice as long."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"search took too long (over {seconds:g} s): try again, or a narrower query"
        )
        self.seconds = seconds


class Unavailable(ServiceError):
    """A feature that this build of Trawl does not provide yet."""
