"""The crawler's decisions (trawl.crawl.policy) driven without a socket: tables of answers
and errors in, decisions out, as h11 tests HTTP. The crawl tests check the same rules
against real servers; these pin each rule down alone."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trawl.crawl.policy import (
    ADDRESS_REFUSED,
    MAX_BACKOFF,
    MAX_CRAWL_DELAY,
    MAX_ROBOTS_REDIRECTS,
    MAX_SERVER_RETRIES,
    PARK_AFTER,
    SLOW_AFTER,
    Decision,
    Fail,
    Keep,
    Pacing,
    Park,
    Refuse,
    Retry,
    RobotsBar,
    Slow,
    backoff,
    host_failing,
    on_answer,
    on_error,
    redirect_refusal,
    retry_after,
    robots_bar,
    robots_delay,
    robots_failed,
    robots_hop,
    robots_late,
    robots_usable,
    unreachable_kind,
)
from trawl.errors import (
    BadResponse,
    BlockedAddress,
    ConnectionLost,
    FetchError,
    FetchTimeout,
    HostUnreachable,
    ResponseTooLarge,
)
from trawl.records import FetchResult
from trawl.robots.policy import RobotsPolicy

PACING = Pacing(delay=0.5, retry_backoff=1.0, max_retries=3)
NOW = 1_000_000_000.0  # a fixed wall clock: 2001-09-09


def answer(status: int, *headers: tuple[str, str]) -> FetchResult:
    return FetchResult("http://site.test/page", status, headers)


def http_date(seconds: float) -> str:
    return format_datetime(datetime.fromtimestamp(seconds, UTC), usegmt=True)


# -- answers ------------------------------------------------------------------

RETRY_LATER = "retried later"


@pytest.mark.parametrize(
    ("status", "retries", "headers", "expected"),
    [
        # Served: the host answered, its run of failures ends.
        (200, 0, (), Decision(Keep(False), host_answered=True)),
        (304, 2, (), Decision(Keep(False), host_answered=True)),
        (404, 0, (), Decision(Keep(False), host_answered=True)),
        (301, 0, (("Location", "/x"),), Decision(Keep(False), host_answered=True)),
        # 429: held for Retry-After, else the back-off; never a host failure.
        (429, 0, (("Retry-After", "7"),), Decision(Retry(7.0, "HTTP 429: retried later"))),
        (429, 0, (), Decision(Retry(1.0, "HTTP 429: retried later"))),
        (429, 2, (), Decision(Retry(4.0, "HTTP 429: retried later"))),
        (429, 3, (), Decision(Keep(False), host_answered=True)),  # tries spent: kept
        # A server error is a host failure, counted first; retried unless that parks it.
        *[
            (
                status,
                0,
                (("Retry-After", "9"),),
                Decision(
                    Retry(9.0 if status == 503 else 1.0, f"HTTP {status}: {RETRY_LATER}"),
                    host_failure=f"HTTP {status}",
                    count_first=True,
                    if_parked=Keep(True),
                ),
            )
            for status in (500, 502, 503, 504)
        ],
        (
            503,
            1,
            (("Retry-After", "soon"),),  # unreadable: the back-off
            Decision(
                Retry(2.0, "HTTP 503: retried later"),
                host_failure="HTTP 503",
                count_first=True,
                if_parked=Keep(True),
            ),
        ),
        (
            503,
            0,
            (("Retry-After", http_date(NOW - 60)),),  # a date past: at once, not the back-off
            Decision(
                Retry(0.0, "HTTP 503: retried later"),
                host_failure="HTTP 503",
                count_first=True,
                if_parked=Keep(True),
            ),
        ),
        (
            500,
            MAX_SERVER_RETRIES,
            (),
            Decision(Keep(True), host_failure="HTTP 500", count_first=True),
        ),
        # Other 5xx are kept as server errors, not retried, not counted against the host.
        (501, 0, (), Decision(Keep(True))),
        (505, 0, (), Decision(Keep(True))),
        (600, 0, (), Decision(Keep(True))),
    ],
)
def test_what_an_answer_leads_to(
    status: int, retries: int, headers: tuple[tuple[str, str], ...], expected: Decision
) -> None:
    assert on_answer(answer(status, *headers), retries, PACING, NOW) == expected


def test_a_server_error_retry_gives_way_when_its_failure_parks_the_host() -> None:
    decision = on_answer(answer(502), 0, PACING, NOW)
    assert isinstance(decision.settled(parked=False), Retry)
    assert decision.settled(parked=True) == Keep(server_error=True)
    kept = on_answer(answer(200), 0, PACING, NOW)
    assert kept.settled(parked=True) == kept.action


# -- no answer ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "retries", "expected"),
    [
        # Our own address rule: not the server failing, not a host failure.
        (
            BlockedAddress("10.0.0.1 is a non-public address"),
            0,
            Decision(Refuse("10.0.0.1 is a non-public address")),
        ),
        # A lost connection is retried twice with the back-off, then fails.
        (
            ConnectionLost("connection lost: reset"),
            0,
            Decision(
                Retry(1.0, "ConnectionLost: retried later"), host_failure="connection lost: reset"
            ),
        ),
        (
            ConnectionLost("connection lost: reset"),
            1,
            Decision(
                Retry(2.0, "ConnectionLost: retried later"), host_failure="connection lost: reset"
            ),
        ),
        (
            ConnectionLost("connection lost: reset"),
            MAX_SERVER_RETRIES,
            Decision(Fail("connection lost: reset"), host_failure="connection lost: reset"),
        ),
        # No server answered: a failure named by its kind.
        (
            HostUnreachable("cannot connect to a:80: connection refused"),
            0,
            Decision(
                Fail(
                    "cannot connect to a:80: connection refused",
                    "host unreachable (connection refused)",
                ),
                host_failure="cannot connect to a:80: connection refused",
            ),
        ),
        (
            FetchTimeout("timed out after 5.0s"),
            0,
            Decision(
                Fail("timed out after 5.0s", "host unreachable (no answer in time)"),
                host_failure="timed out after 5.0s",
            ),
        ),
        # An answer we would not take: a failure, not retried.
        (
            ResponseTooLarge("Content-Length 9 is over the 1-byte cap"),
            0,
            Decision(
                Fail("Content-Length 9 is over the 1-byte cap"),
                host_failure="Content-Length 9 is over the 1-byte cap",
            ),
        ),
        (BadResponse(""), 0, Decision(Fail("BadResponse"), host_failure="BadResponse")),
    ],
)
def test_what_a_failed_request_leads_to(
    error: FetchError, retries: int, expected: Decision
) -> None:
    decision = on_error(error, retries, PACING)
    assert decision == expected
    # Counted after the action: a retry is queued first, and a park takes it out too.
    assert not decision.count_first


@given(st.integers(0, 6), st.floats(0, 100), st.floats(0, 100))
def test_the_backoff_doubles_from_the_larger_of_delay_and_base(
    retries: int, delay: float, base: float
) -> None:
    pacing = Pacing(delay=delay, retry_backoff=base, max_retries=3)
    assert backoff(retries, pacing) == max(delay, base) * 2**retries
    assert backoff(retries + 1, pacing) == 2 * backoff(retries, pacing)


# -- Retry-After ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (None, None),
        ("", None),
        ("  ", None),
        ("²", None),  # a digit to str.isdigit(), not to float()
        ("①", None),
        ("\uff15", None),  # a full-width digit five
        ("\u0667", None),  # an Arabic-Indic seven
        ("9" * 5000, MAX_BACKOFF),  # more digits than int() takes
        ("-5", None),
        ("+5", None),
        ("1e3", None),
        ("1.5", None),
        ("0x10", None),
        ("99999999999", MAX_BACKOFF),
        ("7", 7.0),
        (" 7 ", 7.0),
        ("0", 0.0),
        ("000300", MAX_BACKOFF),
        ("0000007", MAX_BACKOFF),  # seven digits are past the cap, leading zeros or not
        ("Sun, 06 Nov 1994 08:49:37 GMT", 0.0),  # a date in the past: now
        ("Sunday, 06-Nov-94 08:49:37 GMT", 0.0),  # RFC 850
        ("Sun Nov  6 08:49:37 1994", 0.0),  # asctime
        ("Fri, 31 Dec 9999 23:59:59 GMT", MAX_BACKOFF),
        (http_date(NOW + 42), 42.0),
        ("Mon, 99 Foo 99999 99:99:99 GMT", None),
        ("Sun, 06 Nov 1994 08:49:37 \u0661\u0662", None),
        ("Fri, 31 Dec 99999 23:59:59 GMT", None),
    ],
)
def test_retry_after_is_read_strictly(value: str | None, seconds: float | None) -> None:
    assert retry_after(value, NOW) == seconds


@given(st.text(max_size=60))
def test_retry_after_never_raises_and_stays_in_bounds(value: str) -> None:
    seconds = retry_after(value, NOW)
    assert seconds is None or 0.0 <= seconds <= MAX_BACKOFF


@given(st.text(alphabet="0123456789", min_size=1, max_size=6000))
def test_any_delta_seconds_is_read_and_capped(digits: str) -> None:
    # Past six digits the value is over the cap whatever it is, and int() is not asked.
    expected = MAX_BACKOFF if len(digits) > 6 else min(float(int(digits)), MAX_BACKOFF)
    assert retry_after(digits, NOW) == expected


@given(st.integers(0, 10**6).map(str), st.sampled_from("²³¹①⑨\uff10\uff19\u0660\u0669\u06f5\u0966"))
def test_a_unicode_digit_anywhere_makes_it_unreadable(digits: str, odd: str) -> None:
    for at in (0, len(digits) // 2, len(digits)):
        assert retry_after(digits[:at] + odd + digits[at:], NOW) is None


@given(st.floats(-1e9, 1e9))
def test_an_http_date_is_read_against_the_clock(offset: float) -> None:
    expected = min(max(0.0, float(int(NOW + offset) - NOW)), MAX_BACKOFF)
    assert retry_after(http_date(int(NOW + offset)), NOW) == pytest.approx(expected)


# -- a failing host -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("failures", "expected"),
    [
        (1, None),
        (SLOW_AFTER - 1, None),
        (SLOW_AFTER, Slow(2.0)),  # the back-off base doubled
        (SLOW_AFTER + 1, Slow(4.0)),
        (SLOW_AFTER + 2, Slow(8.0)),
        (PARK_AFTER - 1, Slow(MAX_CRAWL_DELAY)),  # 64 s, capped
        (PARK_AFTER, Park(f"{PARK_AFTER} failures in a row, the last HTTP 502")),
        (PARK_AFTER + 5, Park(f"{PARK_AFTER + 5} failures in a row, the last HTTP 502")),
    ],
)
def test_a_host_failing_in_a_row_is_slowed_then_parked(
    failures: int, expected: Slow | Park | None
) -> None:
    assert host_failing(failures, "HTTP 502", PACING) == expected


def test_slowing_starts_from_the_crawl_delay_when_it_is_longer() -> None:
    slow_crawl = Pacing(delay=3.0, retry_backoff=1.0, max_retries=3)
    assert host_failing(SLOW_AFTER, "HTTP 500", slow_crawl) == Slow(6.0)


# -- redirects --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "chain", "limit", "expected"),
    [
        ("http://a/2", ("http://a/1",), 20, None),
        ("http://a/1", ("http://a/1",), 20, "redirect loop"),
        ("http://a/1", ("http://a/1", "http://a/2"), 20, "redirect loop"),
        ("http://a/9", tuple(f"http://a/{n}" for n in range(3)), 3, None),
        ("http://a/9", tuple(f"http://a/{n}" for n in range(4)), 3, "more than 3 redirects"),
        ("http://a/0", tuple(f"http://a/{n}" for n in range(4)), 3, "redirect loop"),
    ],
)
def test_a_redirect_is_followed_unless_it_loops_or_runs_too_long(
    target: str, chain: tuple[str, ...], limit: int, expected: str | None
) -> None:
    assert redirect_refusal(target, chain, limit) == expected


# -- robots.txt ---------------------------------------------------------------------

RULES = RobotsPolicy.from_response(200, b"User-agent: *\nDisallow: /private\nCrawl-delay: 5\n")


DOWN = RobotsPolicy.unreachable("robots.txt: down", "cannot connect to a:80: connection refused")
REFUSED = RobotsPolicy.unreachable(
    "robots.txt: refused", "10.0.0.1 is a non-public address", refused_address=True
)


@pytest.mark.parametrize(
    ("policy", "url", "kind"),
    [
        (RULES, "http://a/public", None),
        (RULES, "http://a/private/x", "rules"),
        (RobotsPolicy.from_response(404, b""), "http://a/private/x", None),
        # 5xx: nothing allowed for now, but a server answered: not the host being down.
        (RobotsPolicy.from_response(503, b""), "http://a/x", "rules"),
        (DOWN, "http://a/x", "unreachable"),
        (REFUSED, "http://a/x", "address"),
    ],
)
def test_robots_bars_a_url_by_its_answer(policy: RobotsPolicy, url: str, kind: str | None) -> None:
    bar = robots_bar(policy, url, "T")
    if kind is None:
        assert bar is None
        return
    assert bar is not None and bar.kind == kind
    refusal = policy.refusal(url, "T")
    expected = {
        "rules": RobotsBar("rules", refusal or "", f"robots.txt: {policy.reason}"),
        "unreachable": RobotsBar(
            "unreachable", "host unreachable (connection refused)", policy.error
        ),
        "address": RobotsBar("address", ADDRESS_REFUSED, policy.error),
    }
    assert bar == expected[kind]


@pytest.mark.parametrize(
    ("location", "status", "expected"),
    [
        (None, 200, "policy"),
        ("/robots2.txt", 301, "http://a/robots2.txt"),
        ("http://b/robots.txt", 302, "http://b/robots.txt"),
        ("http://[::1/", 301, "unavailable"),  # an unusable Location: no file
    ],
)
def test_a_robots_answer_is_a_policy_or_the_next_hop(
    location: str | None, status: int, expected: str
) -> None:
    headers = (("Location", location),) if location else ()
    result = FetchResult("http://a/robots.txt", status, headers, b"User-agent: *\nDisallow: /\n")
    hop = robots_hop("http://a/robots.txt", result)
    if expected == "policy":
        assert isinstance(hop, RobotsPolicy) and not hop.allows("http://a/x", "T")
    elif expected == "unavailable":
        assert isinstance(hop, RobotsPolicy) and hop.allow_all
    else:
        assert hop == expected


def test_robots_redirects_are_capped_as_rfc_9309_says() -> None:
    assert MAX_ROBOTS_REDIRECTS == 5


@pytest.mark.parametrize(
    ("error", "refused_address", "text"),
    [
        (
            BlockedAddress("10.0.0.1 is a non-public address"),
            True,
            "10.0.0.1 is a non-public address",
        ),
        (HostUnreachable("unknown host name: a"), False, "unknown host name: a"),
        (FetchTimeout(""), False, "FetchTimeout"),
    ],
)
def test_no_robots_answer_allows_nothing_for_now(
    error: FetchError, refused_address: bool, text: str
) -> None:
    policy = robots_failed(error)
    assert not policy.allows("http://a/", "T")
    assert (policy.refused_address, policy.error) == (refused_address, text)
    assert not robots_usable(policy)


def test_a_late_robots_answer_is_named_by_its_deadline() -> None:
    policy = robots_late(2.5)
    assert policy.error == "no answer within 2.5s"
    assert unreachable_kind(policy.error) == "no answer in time"


@pytest.mark.parametrize(
    ("body", "delay", "expected"),
    [
        (b"User-agent: *\nCrawl-delay: 5\n", 1.0, 5.0),
        (b"User-agent: *\nCrawl-delay: 5\n", 5.0, None),  # not longer than ours
        (b"User-agent: *\nCrawl-delay: 86400\n", 1.0, MAX_CRAWL_DELAY),
        (b"User-agent: *\nDisallow:\n", 1.0, None),
    ],
)
def test_crawl_delay_is_honoured_when_longer_and_capped(
    body: bytes, delay: float, expected: float | None
) -> None:
    assert robots_delay(RobotsPolicy.from_response(200, body), "T", delay) == expected


@pytest.mark.parametrize(
    ("status", "usable"), [(200, True), (404, True), (401, True), (429, False), (500, False)]
)
def test_which_robots_answers_are_kept_for_the_run(status: int, usable: bool) -> None:
    assert robots_usable(RobotsPolicy.from_response(status, b"")) is usable


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ("TLS failure: bad certificate", "TLS failure"),
        ("unknown host name: a.test", "unknown host name"),
        ("timed out after 5.0s", "no answer in time"),
        ("no answer within 10s", "no answer in time"),
        ("cannot connect to a:80: connection refused", "connection refused"),
        ("cannot connect to a:80: Network is unreachable", "cannot connect"),
    ],
)
def test_an_unreachable_host_is_named_by_its_kind(error: str, kind: str) -> None:
    assert unreachable_kind(error) == kind
