"""The crawler's decisions on an answer, as pure functions over frozen dataclasses.

Whether to retry and when, what Retry-After says, how a failing host is slowed
and then parked, whether a redirect is followed, how robots.txt's answer (and
its redirects) becomes a policy: decided here from values, without a socket,
a clock or a frontier, so each rule is tested by a table (as h11 tests HTTP's
state machine). ``crawler.py`` does the I/O and carries the decisions out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Literal

from trawl.errors import (
    BlockedAddress,
    ConnectionLost,
    FetchError,
    FetchTimeout,
    HostUnreachable,
    InvalidUrl,
)
from trawl.records import FetchResult
from trawl.robots.policy import RobotsPolicy
from trawl.urls.identity import normalise

MAX_ROBOTS_REDIRECTS = 5  # RFC 9309 2.3.1.2
MAX_CRAWL_DELAY = 60.0  # a hostile Crawl-delay must not stall a crawl for days
MAX_BACKOFF = 300.0  # longest wait after a 429 or 503, whatever Retry-After says
# Server errors and lost connections are often passing: tried again at most twice,
# with the host held back exponentially. A host failing SLOW_AFTER times in a row is
# slowed, PARK_AFTER times is given up for the rest of the run (three pages' worth).
RETRIED_STATUSES = frozenset({500, 502, 503, 504})
RETRIED_ERRORS = (ConnectionLost,)
MAX_SERVER_RETRIES = 2
SLOW_AFTER = 3
PARK_AFTER = 9
ADDRESS_REFUSED = "address not allowed (private or reserved)"
PARKED = "host parked after repeated failures"
_DELTA_SECONDS = re.compile(r"[0-9]+", re.ASCII)
# IMF-fixdate and the two obsolete forms RFC 9110 5.6.7 still asks recipients to read:
# printable ASCII only, so no Unicode digit or space reaches the date parser.
_HTTP_DATE = re.compile(r"[A-Za-z]{3,9},? [ -~]{10,40}", re.ASCII)


@dataclass(frozen=True, slots=True)
class Pacing:
    """What the decisions read of the crawl's limits (``CrawlLimits``)."""

    delay: float  # the crawl's delay between two requests to a host
    retry_backoff: float  # seconds before the first retry, doubling after
    max_retries: int  # tries again after a 429


# -- what is done with one request's outcome ----------------------------------


@dataclass(frozen=True, slots=True)
class Retry:
    """Put the URL back and hold its whole host ``wait`` seconds; the request does not
    count as fetched, and is counted as skipped for ``reason``."""

    wait: float
    reason: str


@dataclass(frozen=True, slots=True)
class Keep:
    """Hand the answer on (the pipeline records it)."""

    server_error: bool  # a 5xx kept: its retries are spent or its host is parked


@dataclass(frozen=True, slots=True)
class Fail:
    """No usable answer: a failure, and ``unreachable`` (a skip reason) when no server
    answered at all."""

    error: str
    unreachable: str | None = None


@dataclass(frozen=True, slots=True)
class Refuse:
    """Our own address rule refused the request before it was made: not the server
    failing, and not counted as fetched."""

    error: str


Action = Retry | Keep | Fail | Refuse


@dataclass(frozen=True, slots=True)
class Decision:
    """One request's outcome decided: the ``action``, and what it says of the host.

    ``host_failure`` (its description) is one more failure in a row at the host,
    ``host_answered`` ends such a run. A server error's failure is counted first
    (``count_first``): when that parks the host, ``if_parked`` is done instead of
    ``action`` (a retry would ask a parked host again). A lost connection's is counted
    after the action: a retry is then queued, and a park takes it out with the rest."""

    action: Action
    host_failure: str | None = None
    host_answered: bool = False
    count_first: bool = False
    if_parked: Action | None = None

    def settled(self, parked: bool) -> Action:
        """The action, once the host's failure (if any) has been counted."""
        return self.if_parked if parked and self.if_parked is not None else self.action


def backoff(retries: int, pacing: Pacing) -> float:
    """Seconds a host is held before try ``retries + 1``: exponential."""
    return max(pacing.delay, pacing.retry_backoff) * 2.0**retries


def on_answer(result: FetchResult, retries: int, pacing: Pacing, now: float) -> Decision:
    """What to do with an HTTP answer to a URL tried ``retries`` times before; ``now`` is
    wall-clock seconds (a Retry-After date is read against it)."""
    status = result.status
    if status == 429 and retries < pacing.max_retries:
        # The server asks us to slow down: hold the whole host, then try again.
        wait = retry_after(result.header("retry-after"), now)
        return Decision(Retry(_or_backoff(wait, retries, pacing), "HTTP 429: retried later"))
    if status in RETRIED_STATUSES:
        failure = f"HTTP {status}"
        if retries >= MAX_SERVER_RETRIES:
            return Decision(Keep(server_error=True), host_failure=failure, count_first=True)
        wait = retry_after(result.header("retry-after"), now) if status == 503 else None
        retry = Retry(_or_backoff(wait, retries, pacing), f"HTTP {status}: retried later")
        return Decision(
            retry, host_failure=failure, count_first=True, if_parked=Keep(server_error=True)
        )
    if status < 500:
        return Decision(Keep(server_error=False), host_answered=True)
    return Decision(Keep(server_error=True))


def on_error(error: FetchError, retries: int, pacing: Pacing) -> Decision:
    """What to do when no usable answer arrived (``error``)."""
    if isinstance(error, BlockedAddress):
        return Decision(Refuse(str(error)))
    text = str(error) or type(error).__name__
    action: Action
    if isinstance(error, RETRIED_ERRORS) and retries < MAX_SERVER_RETRIES:
        action = Retry(backoff(retries, pacing), f"{type(error).__name__}: retried later")
    elif isinstance(error, HostUnreachable | FetchTimeout):
        action = Fail(text, f"host unreachable ({unreachable_kind(text)})")
    else:
        action = Fail(text)
    return Decision(action, host_failure=text)


def _or_backoff(wait: float | None, retries: int, pacing: Pacing) -> float:
    return backoff(retries, pacing) if wait is None else wait


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds from a Retry-After header, capped at MAX_BACKOFF; None when it is not
    one of RFC 9110's two forms (ASCII delta-seconds or an HTTP-date).

    Strict on purpose: ``str.isdigit`` accepts "²" and "①", which ``float`` refuses,
    and ``int`` refuses more than 4,300 digits; a server's header must never raise.
    """
    value = (value or "").strip()
    if not value:
        return None
    if _DELTA_SECONDS.fullmatch(value):
        # More digits than MAX_BACKOFF has: past the cap, whatever they say.
        return MAX_BACKOFF if len(value) > 6 else min(float(int(value)), MAX_BACKOFF)
    if not _HTTP_DATE.fullmatch(value):
        return None
    try:
        seconds = parsedate_to_datetime(value).timestamp() - now
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return min(max(0.0, seconds), MAX_BACKOFF)


# -- a host that keeps failing ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Slow:
    """Hold the host ``delay`` seconds between requests from now on."""

    delay: float


@dataclass(frozen=True, slots=True)
class Park:
    """Give the host up for the rest of the run; ``reason`` names why."""

    reason: str


def host_failing(failures: int, last: str, pacing: Pacing) -> Slow | Park | None:
    """What ``failures`` failures in a row at a host (the last described by ``last``)
    call for: past SLOW_AFTER its delay doubles with each, past PARK_AFTER it is
    parked. The same rule for an embedded crawl and for workers sharing a count."""
    if failures >= PARK_AFTER:
        return Park(f"{failures} failures in a row, the last {last}")
    if failures >= SLOW_AFTER:
        slower = max(pacing.delay, pacing.retry_backoff) * 2.0 ** (failures - SLOW_AFTER + 1)
        return Slow(min(slower, MAX_CRAWL_DELAY))
    return None


# -- redirects ----------------------------------------------------------------


def redirect_refusal(target: str, chain: tuple[str, ...], max_redirects: int) -> str | None:
    """Why a redirect to ``target`` is not followed after ``chain`` (the URLs of the
    navigation so far, the redirecting one last), or None."""
    if target in chain:
        return "redirect loop"
    if len(chain) > max_redirects:
        return f"more than {max_redirects} redirects"
    return None


# -- robots.txt ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RobotsBar:
    """robots.txt keeps the crawl from a URL. ``kind``: ``address`` (our address rule
    refused the host), ``unreachable`` (no server answered: the host is down, not
    forbidding us) or ``rules`` (its rules disallow it); ``skip`` is the reason counted,
    ``note`` what the pipeline is told."""

    kind: Literal["address", "unreachable", "rules"]
    skip: str
    note: str


def robots_bar(policy: RobotsPolicy, url: str, user_agent: str) -> RobotsBar | None:
    """Whether ``policy`` keeps the crawl from ``url`` (as requested: a rule may name a
    query as written), and how that is recorded; None when the URL may be fetched."""
    refusal = policy.refusal(url, user_agent)
    if refusal is None:
        return None
    if policy.refused_address:
        return RobotsBar("address", ADDRESS_REFUSED, policy.error)
    if policy.error:
        return RobotsBar(
            "unreachable", f"host unreachable ({unreachable_kind(policy.error)})", policy.error
        )
    return RobotsBar("rules", refusal, f"robots.txt: {policy.reason}")


def robots_hop(url: str, result: FetchResult) -> RobotsPolicy | str:
    """robots.txt's answer at ``url``: the policy, or the next URL to ask (a redirect).
    An unusable Location makes the file unavailable (RFC 9309 allows it)."""
    if result.location is None:
        return RobotsPolicy.from_response(result.status, result.body)
    try:
        return normalise(result.location, base=url)
    except InvalidUrl:
        return robots_unavailable()


def robots_unavailable() -> RobotsPolicy:
    """Too many or unusable redirects: RFC 9309 lets us treat the file as unavailable."""
    return RobotsPolicy.from_response(404, b"")


def robots_failed(error: FetchError) -> RobotsPolicy:
    """No answer to robots.txt: nothing is allowed until it is asked again."""
    if isinstance(error, BlockedAddress):
        # Never asked: our own address rule, not the host, keeps us out.
        return RobotsPolicy.unreachable(f"robots.txt: {error}", str(error), refused_address=True)
    return RobotsPolicy.unreachable(f"robots.txt: {error}", str(error) or type(error).__name__)


def robots_late(timeout: float) -> RobotsPolicy:
    """robots.txt not answered within its own deadline (``robots_timeout``)."""
    late = f"no answer within {timeout:g}s"
    return RobotsPolicy.unreachable(f"robots.txt: {late}", late)


def robots_delay(policy: RobotsPolicy, user_agent: str, delay: float) -> float | None:
    """The host's delay robots.txt's Crawl-delay asks for (capped), when longer than the
    crawl's own ``delay``; None otherwise."""
    asked = policy.crawl_delay(user_agent)
    if asked is None or asked <= delay:
        return None
    return min(asked, MAX_CRAWL_DELAY)


def robots_usable(policy: RobotsPolicy) -> bool:
    """An answer kept for the run; any other is asked again after ``robots_retry``."""
    return policy.rules is not None or policy.allow_all


def unreachable_kind(error: str) -> str:
    """The kind of an unreachable host's error, for one summary line per kind."""
    if error.startswith("TLS failure"):
        return "TLS failure"
    if error.startswith("unknown host name"):
        return "unknown host name"
    if error.startswith(("timed out", "no answer")):
        return "no answer in time"
    return "connection refused" if "refused" in error.lower() else "cannot connect"
