"""External header checks against real loopback servers (seed 003's rules)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable

from fixture_sites import Route, SiteServer
from trawl.net.header_check import MAX_CONCURRENT, check_headers, check_many

UA = "TrawlBot/test"


def allowed(server: SiteServer) -> frozenset[tuple[str, int]]:
    return frozenset({(server.host, server.port)})


async def test_head_only_first_status_and_location_kept(
    serve: Callable[..., SiteServer],
) -> None:
    site = serve(
        {
            "/moved": Route(b"", 301, {"Location": "/elsewhere", "Content-Type": "text/html"}),
            "/elsewhere": Route(b"<p>here</p>"),
        }
    )
    check = await check_headers(site.url("/moved"), user_agent=UA, allowed=allowed(site))
    assert check.status == 301
    assert check.location == "/elsewhere"
    assert check.error is None
    assert check.header("content-type") == "text/html"
    # Not followed: the target was never asked for, and only with HEAD.
    assert [(m, p) for _, m, p in site.requests] == [("HEAD", "/moved")]


async def test_no_cookies_auth_or_referrer_and_our_user_agent(
    serve: Callable[..., SiteServer],
) -> None:
    site = serve({"/": Route(b"ok", headers={"Set-Cookie": "a=b", "Content-Type": "text/plain"})})
    for _ in range(2):  # a cookie set by the first answer is not sent back
        check = await check_headers(site.url("/"), user_agent=UA, allowed=allowed(site))
        assert check.status == 200
    for headers in site.request_headers:
        names = {k.lower() for k in headers}
        assert not names & {"cookie", "authorization", "referer", "proxy-authorization"}
        assert headers["User-Agent"] == UA


async def test_405_is_not_retried_with_get(serve: Callable[..., SiteServer]) -> None:
    site = serve({"/x": Route(b"", 405, {"Allow": "GET"})})
    check = await check_headers(site.url("/x"), user_agent=UA, allowed=allowed(site))
    assert check.status == 405
    assert [m for _, m, _ in site.requests] == ["HEAD"]


async def test_slow_server_hits_the_deadline(serve: Callable[..., SiteServer]) -> None:
    site = serve({"/slow": Route(b"late", delay=3.0)})
    check = await check_headers(
        site.url("/slow"), user_agent=UA, allowed=allowed(site), deadline=0.5
    )
    assert check.status == 0
    assert check.status_text == "000"
    assert check.error is not None
    assert "timed out" in check.error


async def test_huge_headers_are_refused_not_buffered(serve: Callable[..., SiteServer]) -> None:
    big = {f"X-Filler-{i}": "x" * 1000 for i in range(40)}  # 40 KB of headers
    site = serve({"/big": Route(b"", headers=big), "/fine": Route(b"")})
    check = await check_headers(site.url("/big"), user_agent=UA, allowed=allowed(site))
    assert check.status == 0
    assert check.error is not None
    assert check.error.startswith("bad response")
    fine = await check_headers(site.url("/fine"), user_agent=UA, allowed=allowed(site))
    assert fine.status == 200


async def test_private_addresses_refused_by_default(serve: Callable[..., SiteServer]) -> None:
    site = serve({"/": Route(b"secret")})
    by_ip = await check_headers(site.url("/"), user_agent=UA)
    by_name = await check_headers(f"http://localhost:{site.port}/", user_agent=UA)
    for check in (by_ip, by_name):
        assert check.status == 0
        assert check.error is not None
        assert "non-public address" in check.error
    assert site.requests == []  # refused before any connection


async def test_unusable_urls_get_a_clear_error(serve: Callable[..., SiteServer]) -> None:
    site = serve({"/": Route(b"")})
    cases = {
        site.url("/logout"): "unsafe URL",
        f"http://user:pw@{site.host}:{site.port}/": "credentials",
        "ftp://example.com/file": "only http and https",
        "http://:80/": "no host",
        "http://example.com:99999/": "invalid URL",
    }
    for url, expected in cases.items():
        check = await check_headers(url, user_agent=UA, allowed=allowed(site))
        assert check.status == 0, url
        assert check.error is not None
        assert expected in check.error, (url, check.error)
    assert site.requests == []


async def test_check_many_keeps_order_and_at_most_six_at_once(
    serve: Callable[..., SiteServer],
) -> None:
    lock = threading.Lock()
    active = [0, 0]  # now, highest

    def slow(path: str) -> Route:
        with lock:
            active[0] += 1
            active[1] = max(active[1], active[0])
        time.sleep(0.3)
        with lock:
            active[0] -= 1
        return Route(b"", 200 if path.endswith("ok") else 404)

    site = serve({}, dynamic=slow)
    urls = [site.url(f"/{n}/{'ok' if n % 2 else 'gone'}") for n in range(12)]
    checks = await check_many(urls, user_agent=UA, allowed=allowed(site))
    assert [c.url for c in checks] == urls
    assert [c.status for c in checks] == [404, 200] * 6
    assert 1 < active[1] <= MAX_CONCURRENT


async def raw_server(answer: bytes) -> tuple[asyncio.Server, int]:
    """A server that sends ``answer`` verbatim to every connection, whatever it was asked."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(answer)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
            await asyncio.sleep(0.5)
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def test_informational_responses_are_capped() -> None:
    final = b"HTTP/1.1 204 No Content\r\n\r\n"
    for count, expected in [(4, 204), (5, 0)]:
        server, port = await raw_server(b"HTTP/1.1 103 Early Hints\r\n\r\n" * count + final)
        async with server:
            check = await check_headers(
                f"http://127.0.0.1:{port}/", user_agent=UA, allowed=frozenset({("127.0.0.1", port)})
            )
        assert check.status == expected, check.error
        if expected == 0:
            assert check.error == "more than 4 informational responses"


async def test_a_body_sent_after_head_is_not_read() -> None:
    endless = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + b"x" * 5_000_000
    server, port = await raw_server(endless)
    async with server:
        check = await check_headers(
            f"http://127.0.0.1:{port}/", user_agent=UA, allowed=frozenset({("127.0.0.1", port)})
        )
    assert check.status == 200
    assert check.header("content-type") == "text/html"


async def test_an_aliased_host_is_asked_at_its_target_and_never_resolved(
    serve: Callable[..., SiteServer],
) -> None:
    mirror = serve({"/x.png": Route(b"png", headers={"Content-Type": "image/png"})})
    target = (mirror.host, mirror.port)
    # A name no resolver knows: only the alias can reach it.
    url = "https://docs.mirror.invalid/x.png"

    check = await check_headers(
        url, user_agent=UA, allowed=frozenset({target}), aliases={"docs.mirror.invalid": target}
    )

    assert (check.status, check.error) == (200, None)
    assert [(m, p) for _, m, p in mirror.requests] == [("HEAD", "/x.png")]
    assert mirror.request_headers[0]["Host"] == "docs.mirror.invalid"  # over plain HTTP


async def test_an_alias_to_a_private_target_not_allowed_is_refused(
    serve: Callable[..., SiteServer],
) -> None:
    mirror = serve({"/x.png": Route(b"png")})
    aliases = {"docs.mirror.invalid": (mirror.host, mirror.port)}

    check = await check_headers("http://docs.mirror.invalid/x.png", user_agent=UA, aliases=aliases)

    assert check.status == 0 and check.error is not None and "non-public" in check.error
    assert mirror.requests == []
