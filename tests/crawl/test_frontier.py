"""The crawl frontier (trawl.crawl.frontier): politeness with an injected clock."""

from __future__ import annotations

from collections import defaultdict
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.crawl.frontier import Frontier
from trawl.records import CrawlUrl


def url(host: str, path: str = "/") -> CrawlUrl:
    return CrawlUrl(f"https://{host}{path}", depth=0)


def urls_of(items: list[CrawlUrl | None]) -> list[str | None]:
    return [i.url if i is not None else None for i in items]


# -- admission ------------------------------------------------------------------


def test_enqueue_admits_a_url_once() -> None:
    f = Frontier(delay=0.0, host_concurrency=1)
    assert f.enqueue(url("a.com", "/x")) is True
    assert f.enqueue(url("a.com", "/x")) is False
    assert f.enqueue(CrawlUrl("https://a.com/x", depth=5, source="https://a.com/")) is False
    assert f.queued == 1


def test_a_url_is_never_admitted_again_after_it_was_crawled() -> None:
    f = Frontier(delay=0.0, host_concurrency=1)
    item = url("a.com", "/x")
    f.enqueue(item)
    taken = f.next(0.0)
    assert taken == item
    f.done(item, 1.0)
    assert f.enqueue(url("a.com", "/x")) is False
    assert f.next(2.0) is None
    assert not f.has_pending()


def test_seen() -> None:
    f = Frontier(delay=0.0, host_concurrency=1)
    f.enqueue(url("a.com", "/x"))
    assert f.seen("https://a.com/x")
    assert not f.seen("https://a.com/y")


def test_empty_frontier() -> None:
    f = Frontier(delay=1.0, host_concurrency=1)
    assert f.next(0.0) is None
    assert not f.has_pending()
    assert f.wake_at() is None
    assert f.queued == 0


def test_fifo_within_one_host() -> None:
    f = Frontier(delay=0.0, host_concurrency=10)
    for p in ("/1", "/2", "/3"):
        f.enqueue(url("a.com", p))
    assert urls_of([f.next(0.0), f.next(0.0), f.next(0.0)]) == [
        "https://a.com/1",
        "https://a.com/2",
        "https://a.com/3",
    ]


# -- per-host delay -----------------------------------------------------------------


def test_delay_between_request_starts_to_one_host() -> None:
    f = Frontier(delay=2.0, host_concurrency=5)
    for p in ("/1", "/2", "/3"):
        f.enqueue(url("a.com", p))
    assert f.next(10.0) is not None
    assert f.next(10.0) is None
    assert f.next(11.999) is None
    second = f.next(12.0)
    assert second is not None
    assert second.url == "https://a.com/2"
    assert f.next(13.0) is None
    assert f.next(14.0) is not None


def test_delay_counts_from_the_start_not_the_end_of_a_request() -> None:
    f = Frontier(delay=2.0, host_concurrency=1)
    a1, a2 = url("a.com", "/1"), url("a.com", "/2")
    f.enqueue(a1)
    f.enqueue(a2)
    assert f.next(0.0) == a1
    f.done(a1, 1.5)  # finished quickly: still wait until 0.0 + 2.0
    assert f.next(1.5) is None
    assert f.next(2.0) == a2


def test_a_slow_request_delays_the_next_one_only_until_it_is_done() -> None:
    f = Frontier(delay=1.0, host_concurrency=1)
    a1, a2 = url("a.com", "/1"), url("a.com", "/2")
    f.enqueue(a1)
    f.enqueue(a2)
    assert f.next(0.0) == a1
    assert f.next(5.0) is None  # the slot is still taken
    f.done(a1, 5.0)
    assert f.next(5.0) == a2


def test_delay_is_per_host() -> None:
    f = Frontier(delay=5.0, host_concurrency=1)
    f.enqueue(url("a.com"))
    f.enqueue(url("b.com"))
    first, second = f.next(0.0), f.next(0.0)
    assert first is not None
    assert second is not None
    assert {urlsplit(first.url).hostname, urlsplit(second.url).hostname} == {"a.com", "b.com"}


def test_http_and_https_of_one_host_share_one_budget() -> None:
    f = Frontier(delay=5.0, host_concurrency=2)
    f.enqueue(CrawlUrl("http://a.com/1", 0))
    f.enqueue(CrawlUrl("https://a.com/2", 0))
    assert f.next(0.0) is not None
    assert f.next(0.0) is None
    assert f.next(5.0) is not None


def test_zero_delay() -> None:
    f = Frontier(delay=0.0, host_concurrency=3)
    for p in ("/1", "/2", "/3", "/4"):
        f.enqueue(url("a.com", p))
    got = [f.next(0.0) for _ in range(4)]
    assert urls_of(got) == ["https://a.com/1", "https://a.com/2", "https://a.com/3", None]


# -- host concurrency -------------------------------------------------------------


def test_host_concurrency_is_respected() -> None:
    f = Frontier(delay=0.0, host_concurrency=2)
    for p in ("/1", "/2", "/3"):
        f.enqueue(url("a.com", p))
    first, second = f.next(0.0), f.next(0.0)
    assert first is not None
    assert second is not None
    assert f.next(0.0) is None
    assert f.next(100.0) is None  # time alone does not free a slot
    assert f.has_pending()


def test_done_frees_the_slot() -> None:
    f = Frontier(delay=0.0, host_concurrency=1)
    a1, a2 = url("a.com", "/1"), url("a.com", "/2")
    f.enqueue(a1)
    f.enqueue(a2)
    assert f.next(0.0) == a1
    assert f.next(1.0) is None
    f.done(a1, 1.0)
    assert f.next(1.0) == a2


def test_a_url_enqueued_while_the_host_is_busy_waits_for_done() -> None:
    f = Frontier(delay=0.0, host_concurrency=1)
    a1, a2 = url("a.com", "/1"), url("a.com", "/2")
    f.enqueue(a1)
    assert f.next(0.0) == a1
    f.enqueue(a2)  # discovered on a1, while a1 is in flight
    assert f.next(0.5) is None
    f.done(a1, 1.0)
    assert f.next(1.0) == a2


def test_a_busy_host_does_not_block_other_hosts() -> None:
    f = Frontier(delay=0.0, host_concurrency=1)
    f.enqueue(url("a.com", "/1"))
    f.enqueue(url("a.com", "/2"))
    f.enqueue(url("b.com", "/1"))
    got = urls_of([f.next(0.0), f.next(0.0), f.next(0.0)])
    assert got == ["https://a.com/1", "https://b.com/1", None]


# -- fairness -----------------------------------------------------------------------


def test_round_robin_across_hosts() -> None:
    f = Frontier(delay=0.0, host_concurrency=10)
    for host in ("a.com", "b.com", "c.com"):
        for p in ("/1", "/2"):
            f.enqueue(url(host, p))
    got = [f.next(0.0) for _ in range(6)]
    hosts = [urlsplit(i.url).hostname if i else None for i in got]
    assert hosts == ["a.com", "b.com", "c.com", "a.com", "b.com", "c.com"]


def test_one_big_host_does_not_starve_a_small_one() -> None:
    f = Frontier(delay=0.0, host_concurrency=100)
    for i in range(50):
        f.enqueue(url("big.com", f"/{i}"))
    f.enqueue(url("small.com", "/only"))
    first_three = urls_of([f.next(0.0) for _ in range(3)])
    assert "https://small.com/only" in first_three


# -- has_pending, wake_at, set_delay ----------------------------------------------------


def test_has_pending_counts_queued_and_in_flight() -> None:
    f = Frontier(delay=0.0, host_concurrency=1)
    item = url("a.com")
    assert not f.has_pending()
    f.enqueue(item)
    assert f.has_pending()
    assert f.queued == 1
    assert f.next(0.0) == item
    assert f.queued == 0
    assert f.has_pending()  # in flight: it may still discover links
    f.done(item, 0.1)
    assert not f.has_pending()


def test_wake_at_is_the_earliest_time_a_host_is_ready() -> None:
    f = Frontier(delay=3.0, host_concurrency=5)
    for p in ("/1", "/2"):
        f.enqueue(url("a.com", p))
    assert f.wake_at() is not None
    assert f.next(10.0) is not None
    assert f.wake_at() == 13.0


def test_wake_at_is_the_minimum_over_hosts() -> None:
    f = Frontier(delay=3.0, host_concurrency=5)
    for host in ("a.com", "b.com"):
        for p in ("/1", "/2"):
            f.enqueue(url(host, p))
    assert f.next(10.0) is not None
    assert f.next(11.0) is not None
    assert f.wake_at() == 13.0
    assert f.next(13.0) is not None
    assert f.wake_at() == 14.0


def test_wake_at_is_none_when_only_in_flight_work_remains() -> None:
    f = Frontier(delay=3.0, host_concurrency=1)
    f.enqueue(url("a.com", "/1"))
    f.enqueue(url("a.com", "/2"))
    assert f.next(0.0) is not None
    # Nothing waits for time: the host waits for done().
    assert f.wake_at() is None
    assert f.has_pending()


def test_wake_at_does_not_lie_about_readiness() -> None:
    f = Frontier(delay=1.0, host_concurrency=2)
    for p in ("/1", "/2", "/3"):
        f.enqueue(url("a.com", p))
    now = 0.0
    handed = 0
    for _ in range(10):
        item = f.next(now)
        if item is not None:
            handed += 1
            continue
        wake = f.wake_at()
        if wake is None:
            break
        assert wake > now  # no busy loop: the next wake is later than now
        now = wake
    assert handed == 2  # the third waits for a done()


def test_set_delay_slows_a_host_down() -> None:
    f = Frontier(delay=1.0, host_concurrency=5)
    f.set_delay("https://a.com/robots.txt", 10.0, 0.0)
    for p in ("/1", "/2"):
        f.enqueue(url("a.com", p))
    f.enqueue(url("b.com", "/1"))
    f.enqueue(url("b.com", "/2"))
    assert len([i for i in (f.next(0.0), f.next(0.0)) if i is not None]) == 2
    b2 = f.next(1.0)
    assert b2 is not None
    assert b2.url == "https://b.com/2"  # b keeps the default delay
    assert f.next(9.9) is None
    a2 = f.next(10.0)
    assert a2 is not None
    assert a2.url == "https://a.com/2"


def test_set_delay_applies_to_every_scheme_of_the_host() -> None:
    f = Frontier(delay=0.0, host_concurrency=5)
    f.set_delay("http://a.com/", 4.0, 0.0)
    f.enqueue(CrawlUrl("https://a.com/1", 0))
    f.enqueue(CrawlUrl("https://a.com/2", 0))
    assert f.next(0.0) is not None
    assert f.next(3.0) is None
    assert f.next(4.0) is not None


def test_set_delay_after_the_first_request_holds_back_the_next() -> None:
    # The crawler's order: hand out the first URL, fetch robots.txt, then set_delay.
    f = Frontier(delay=0.5, host_concurrency=2)
    for p in ("/1", "/2"):
        f.enqueue(url("a.com", p))
    assert f.next(0.0) is not None
    f.set_delay("https://a.com/", 5.0, 0.0)
    assert f.next(0.5) is None
    assert f.next(5.0) is not None


def test_set_delay_counts_from_the_request_that_waited_for_robots_txt() -> None:
    # robots.txt took 2 s to come: the first page goes out at 2.0, not when it was
    # handed out, so the next may not go before 2.0 + the delay.
    f = Frontier(delay=0.0, host_concurrency=1)
    for p in ("/1", "/2"):
        f.enqueue(url("a.com", p))
    first = f.next(0.0)
    assert first is not None
    f.set_delay("https://a.com/", 3.0, 2.0)
    f.done(first, 2.1)
    assert f.next(3.0) is None
    assert f.next(4.9) is None
    assert f.next(5.0) is not None


def test_reserve_shares_a_hosts_pace_with_its_pages() -> None:
    # A rendered page's subrequests book slots at the page's host: they wait the
    # host's delay, and the host's next page waits its delay after them.
    f = Frontier(delay=1.0, host_concurrency=5)
    for p in ("/1", "/2"):
        f.enqueue(url("a.com", p))
    assert f.next(0.0) is not None
    assert f.reserve("https://a.com/app.js", 0.2, 10.0) == pytest.approx(0.8)
    assert f.reserve("http://a.com/style.css", 0.2, 10.0) == pytest.approx(1.8)  # either scheme
    assert f.next(2.5) is None
    second = f.next(3.0)
    assert second is not None and second.url == "https://a.com/2"
    assert f.reserve("https://b.com/x.js", 0.2, 10.0) == 0.0  # another host is not held


def test_a_crawl_delay_never_undoes_slots_already_booked() -> None:
    f = Frontier(delay=1.0, host_concurrency=1)
    for p in ("/1", "/2"):
        f.enqueue(url("a.com", p))
    first = f.next(0.0)
    assert first is not None
    f.reserve("https://a.com/a.js", 0.1, 10.0)  # booked at 1.0
    f.reserve("https://a.com/b.js", 0.1, 10.0)  # booked at 2.0
    f.set_delay("https://a.com/", 1.5, 0.2)  # 0.2 + 1.5 = 1.7 would come before b.js
    f.done(first, 0.3)
    assert f.next(2.9) is None
    assert f.next(3.0) is not None


def test_reserve_books_nothing_past_its_limit() -> None:
    f = Frontier(delay=1.0, host_concurrency=1)
    assert f.reserve("https://a.com/a.js", 0.0, 0.5) == 0.0
    assert f.reserve("https://a.com/b.js", 0.0, 0.5) is None  # its slot would be 1.0
    assert f.reserve("https://a.com/c.js", 0.0, 5.0) == pytest.approx(1.0)  # b took none


# -- a model-based property ---------------------------------------------------------

HOSTS = ("a.com", "b.com", "c.com")


@settings(max_examples=200, deadline=None)
@given(
    paths=st.lists(st.tuples(st.sampled_from(HOSTS), st.integers(0, 6)), max_size=25),
    delay=st.sampled_from([0.0, 0.5, 1.0, 3.0]),
    host_concurrency=st.integers(1, 3),
    steps=st.lists(st.sampled_from(["next", "done", "tick"]), max_size=80),
)
def test_politeness_invariants_hold_in_any_schedule(
    paths: list[tuple[str, int]],
    delay: float,
    host_concurrency: int,
    steps: list[str],
) -> None:
    f = Frontier(delay=delay, host_concurrency=host_concurrency)
    admitted = {f"https://{h}/{n}" for h, n in paths}
    for h, n in paths:
        f.enqueue(url(h, f"/{n}"))
    assert f.queued == len(admitted)

    now = 0.0
    in_flight: list[CrawlUrl] = []
    starts: dict[str, list[float]] = defaultdict(list)
    handed: list[str] = []

    def take() -> None:
        item = f.next(now)
        if item is None:
            return
        host = urlsplit(item.url).hostname or ""
        if starts[host]:
            assert now - starts[host][-1] >= delay
        starts[host].append(now)
        in_flight.append(item)
        assert sum(1 for i in in_flight if urlsplit(i.url).hostname == host) <= host_concurrency
        handed.append(item.url)

    for step in steps:
        if step == "next":
            take()
        elif step == "done" and in_flight:
            f.done(in_flight.pop(0), now)
        elif step == "tick":
            now += 0.25
    # Drain: finish everything, following wake_at; the frontier must never stall.
    for _ in range(10_000):
        if not f.has_pending():
            break
        before = len(handed)
        take()
        if len(handed) > before:
            continue
        if in_flight:
            f.done(in_flight.pop(0), now)
            continue
        wake = f.wake_at()
        assert wake is not None, "work is queued but nothing will ever wake the crawler"
        now = max(now, wake)
    assert not f.has_pending()
    assert sorted(handed) == sorted(admitted)  # every URL exactly once
