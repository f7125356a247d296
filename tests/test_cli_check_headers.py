"""`trawl check-headers` and `trawl resources`, run as a user would."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from fixture_sites import Route, SiteServer, html_page, trawl

Serve = Callable[..., SiteServer]


def test_check_headers_prints_status_location_and_errors(serve: Serve) -> None:
    site = serve({"/old": Route(b"", 302, {"Location": "/new"}), "/ok": Route(b"fine")})
    allow = f"{site.host}:{site.port}"
    result = trawl("check-headers", site.url("/old"), site.url("/ok"), "--allow-host", allow)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"302  {site.url('/old')} -> /new",
        f"200  {site.url('/ok')}",
    ]
    assert sorted((m, p) for _, m, p in site.requests) == [("HEAD", "/ok"), ("HEAD", "/old")]


def test_check_headers_refuses_private_addresses_unless_allowed(serve: Serve) -> None:
    site = serve({"/": Route(b"")})
    result = trawl("check-headers", site.url("/"), "--json")
    assert result.returncode == 1
    (line,) = result.stdout.splitlines()
    check = json.loads(line)
    assert check["status"] == 0
    assert "non-public address" in check["error"]
    assert site.requests == []
    bad = trawl("check-headers", site.url("/"), "--allow-host", "nonsense")
    assert bad.returncode == 2
    assert "HOST:PORT" in bad.stderr


def test_resources_command_lists_broken_ones_with_their_pages(serve: Serve, tmp_path: Path) -> None:
    site = serve(
        {
            "/": html_page("Home", '<img src="/gone.png"><img src="/ok.png">'),
            "/ok.png": Route(b"", headers={"Content-Type": "image/png"}),
        }
    )
    data = str(tmp_path / "data")
    crawled = trawl("crawl", site.url("/"), "--data", data, "--delay", "0")
    assert crawled.returncode == 0, crawled.stderr
    assert "resources checked: 2, broken: 1" in crawled.stdout
    shown = trawl("resources", "--data", data, "--broken")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        f"404  {site.url('/gone.png')}  text/plain",
        f"       used on {site.url('/')}",
    ]
