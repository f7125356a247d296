"""--allow-host takes a network: an intranet of many loopback hosts, crawled whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fixture_sites import SiteServer, html_page, trawl

Serve = Callable[..., SiteServer]


def test_a_network_opens_every_host_in_it(serve: Serve, tmp_path: Path) -> None:
    others = [
        serve({"/": html_page(f"O{i}", "<p>otters</p>")}, host=f"127.0.0.{i}") for i in (2, 3)
    ]
    home = serve({"/": html_page("Home", "".join(f'<a href="{o.url("/")}">o</a>' for o in others))})
    common = ["--delay", "0", "--scope", "web"]

    trawl("crawl", home.url("/"), "--data", str(tmp_path / "a"), *common)
    assert all(o.requests == [] for o in others)  # closed without it

    opened = trawl(
        "crawl",
        home.url("/"),
        "--data",
        str(tmp_path / "b"),
        *common,
        "--allow-host",
        "127.0.0.0/8",
    )

    assert opened.returncode == 0, opened.stdout + opened.stderr
    assert all("/" in o.page_paths() for o in others)
    wrong = trawl("crawl", home.url("/"), "--data", str(tmp_path / "c"), "--allow-host", "10.1/99")
    assert wrong.returncode == 2 and "not a network" in wrong.stderr
