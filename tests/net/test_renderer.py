"""Rendered crawling in real headless Chromium (Debian's package) against loopback sites."""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from fixture_sites import HOUSEKEEPING, Route, SiteServer, html_page, trawl
from trawl.errors import RenderError
from trawl.net.fetcher import Fetcher
from trawl.records import FetchResult
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

CHROMIUM = Settings().chromium
pytestmark = pytest.mark.skipif(
    shutil.which(CHROMIUM) is None,
    reason=f"needs Chromium at {CHROMIUM} (Debian package chromium; .ci/run installs it)",
)

Serve = Callable[..., SiteServer]


async def allow_everything(url: str) -> str | None:
    return None


async def no_pace(url: str, within: float) -> bool:
    return True


def rendered_crawl(
    site: SiteServer, tmp_path: Path, *, delay: str = "0", settings: str = ""
) -> None:
    """`trawl crawl --render` of ``site`` into tmp_path/d, no resource checks; it must
    succeed."""
    (tmp_path / "t.toml").write_text(f"resource_checks = 0\n{settings}")
    done = trawl(
        "crawl", site.url("/"), "--data", str(tmp_path / "d"), "--render", "--delay", delay,
        "--config", str(tmp_path / "t.toml"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


APP_JS = b"""
document.body.insertAdjacentHTML('beforeend', '<a href="/js-external">From app.js</a>');
fetch('/logout').catch(() => {});
fetch('/bounce').catch(() => {});
fetch('%s').catch(() => {});
fetch('/private/data.json').catch(() => {});
new Image().src = '/pixel.png';
try { new WebSocket('ws://' + location.host + '/socket'); } catch (e) {}
"""


def js_site(elsewhere: str) -> dict[str, Route]:
    return {
        "/robots.txt": Route(
            b"User-agent: *\nDisallow: /private/\n", headers={"Content-Type": "text/plain"}
        ),
        "/private/data.json": Route(b"{}", headers={"Content-Type": "application/json"}),
        "/": html_page(
            "Home",
            '<p>Static text.</p><a href="/static">Static link</a>'
            "<script>document.body.insertAdjacentHTML('beforeend',"
            " '<a href=\"/js-inline\">Inserted</a><p>Inserted text about quokkas.</p>');</script>"
            '<script src="/app.js"></script><script src="/hop"></script>',
        ),
        "/static": html_page("Static", "<p>plain</p>"),
        "/js-inline": html_page("Inline", "<p>found by rendering</p>"),
        "/js-external": html_page("External", "<p>found by rendering too</p>"),
        "/app.js": Route(APP_JS % elsewhere.encode(), headers={"Content-Type": "text/javascript"}),
        "/pixel.png": Route(b"\x89PNG", headers={"Content-Type": "image/png"}),
        "/bounce": Route(b"", 302, {"Location": "/account/sign-out"}),
        "/hop": Route(b"", 301, {"Location": "/more.js"}),
        "/more.js": Route(
            b"document.body.insertAdjacentHTML('beforeend', '<a href=\"/via-redirect\">R</a>');",
            headers={"Content-Type": "text/javascript"},
        ),
        "/via-redirect": html_page("Redirected script", "<p>found through a redirect</p>"),
    }


def test_links_inserted_by_javascript_are_crawled_only_with_render(
    serve: Serve, tmp_path: Path
) -> None:
    elsewhere = serve({"/x": Route(b"{}", headers={"Content-Type": "application/json"})})
    site = serve(js_site(elsewhere.url("/x")))
    common = ["--delay", "0", "--config", str(tmp_path / "none.toml")]
    (tmp_path / "none.toml").write_text("resource_checks = 0\n")

    plain = trawl("crawl", site.url("/"), "--data", str(tmp_path / "plain"), *common)
    assert plain.returncode == 0, plain.stderr
    assert set(site.page_paths()) == {"/", "/static"}

    site.requests.clear()
    rendered = trawl(
        "crawl", site.url("/"), "--data", str(tmp_path / "rendered"), "--render", *common
    )
    assert rendered.returncode == 0, rendered.stderr
    gets = [p for _, m, p in site.requests if m == "GET"]
    # The document is fetched once, by the crawler; its scripts by the renderer.
    assert gets.count("/") == 1
    assert {"/js-inline", "/js-external", "/app.js", "/pixel.png", "/via-redirect"} <= set(gets)
    # The browser's own requests obey the crawl's rules: no unsafe URL, nothing out of scope.
    assert "/logout" not in site.paths()
    assert "/account/sign-out" not in site.paths()  # not even behind a redirect
    assert elsewhere.requests == []
    assert "browser request refused: unsafe URL: logout path" in rendered.stdout
    assert "browser request refused: out of scope" in rendered.stdout
    assert "browser request refused: websocket" in rendered.stdout
    assert "/socket" not in site.paths()
    assert "browser request refused: redirect to unsafe URL: logout path" in rendered.stdout
    # robots.txt holds for the browser's requests as for the crawler's.
    assert "/private/data.json" not in site.paths()
    assert "browser request refused: blocked by robots.txt" in rendered.stdout

    store = SQLiteStore(tmp_path / "rendered" / "trawl.sqlite")
    try:
        home = store.page(site.url("/"))
        assert home is not None
        assert "quokkas" in home.text
        assert home.error is None
    finally:
        store.close()


SHARED_JS = b"document.body.insertAdjacentHTML('beforeend', '<p>Rendered by shared.js</p>');"


def test_static_assets_are_fetched_once_per_crawl(serve: Serve, tmp_path: Path) -> None:
    # Four pages share a script, a stylesheet and an image; one more script is marked
    # no-store. Each page renders in a fresh context, so only our cache keeps the site
    # from being asked for every asset on every page.
    assets = '<script src="/shared.js"></script><script src="/fresh.js"></script>'
    assets += '<link rel="stylesheet" href="/shared.css"><img src="/logo.png" alt="">'
    links = "".join(f'<a href="/{name}">{name}</a>' for name in ("a", "b", "c"))
    routes = {f"/{name}": html_page(name, f"<p>Page {name}.</p>{assets}") for name in "abc"}
    routes["/"] = html_page("Home", f"<p>Home.</p>{links}{assets}")
    routes["/shared.js"] = Route(SHARED_JS, headers={"Content-Type": "text/javascript"})
    routes["/shared.css"] = Route(b"p { color: teal }", headers={"Content-Type": "text/css"})
    routes["/logo.png"] = Route(b"\x89PNG", headers={"Content-Type": "image/png"})
    routes["/fresh.js"] = Route(
        b"void 0;", headers={"Content-Type": "text/javascript", "Cache-Control": "no-store"}
    )
    site = serve(routes)
    rendered_crawl(site, tmp_path)
    gets = [p for _, m, p in site.requests if m == "GET"]
    assert [gets.count(p) for p in ("/shared.js", "/shared.css", "/logo.png")] == [1, 1, 1]
    assert gets.count("/fresh.js") == 4
    store = SQLiteStore(tmp_path / "d" / "trawl.sqlite")
    try:
        for path in ("/", "/a", "/b", "/c"):  # every page ran the script it was served
            page = store.page(site.url(path))
            assert page is not None and "Rendered by shared.js" in page.text, path
    finally:
        store.close()


def test_subrequests_keep_the_hosts_delay(serve: Serve, tmp_path: Path) -> None:
    # Three assets on the first page, one more on the second: fetched for Chromium,
    # each waits the host's delay after the request before it, and the next page
    # waits its delay after them. (Without the pace, Chromium asks for all at once.)
    assets = '<script src="/one.js"></script><script src="/two.js"></script>'
    routes = {
        "/": html_page("Home", f'<p>Home.</p><a href="/b">b</a>{assets}<img src="/i.png">'),
        "/b": html_page("B", f'<p>B.</p>{assets}<script src="/three.js"></script>'),
        "/i.png": Route(b"\x89PNG", headers={"Content-Type": "image/png"}),
    }
    for name in ("one", "two", "three"):
        routes[f"/{name}.js"] = Route(b"void 0;", headers={"Content-Type": "text/javascript"})
    site = serve(routes)
    rendered_crawl(site, tmp_path, delay="0.6")
    starts = [(t, p) for t, m, p in site.requests if m == "GET" and p not in HOUSEKEEPING]
    assert sorted(p for _, p in starts) == sorted(["/", "/b", *routes.keys() - {"/", "/b"}])
    gaps = [b - a for (a, _), (b, _) in itertools.pairwise(starts)]
    # Half the delay: the server's clock reads each request when its thread runs.
    assert min(gaps) >= 0.3, starts


def test_subrequests_never_wait_past_the_pages_deadline(serve: Serve, tmp_path: Path) -> None:
    # Twelve requests at a 0.5 s delay need 6 s; the page has 2. Those whose slot
    # comes after its deadline are refused, not sent late for nobody, and book
    # nothing: the host's next page is not held behind them.
    fetches = "".join(f"fetch('/x{n}').catch(() => {{}});" for n in range(12))
    routes = {
        "/": html_page("Home", f'<p>Home.</p><a href="/b">b</a><script>{fetches}</script>'),
        "/b": html_page("B", "<p>B.</p>"),
    }
    for n in range(12):
        routes[f"/x{n}"] = Route(b"{}", headers={"Content-Type": "application/json"})
    site = serve(routes)
    rendered_crawl(site, tmp_path, delay="0.5", settings="render_timeout = 2\n")
    starts = {p: t for t, m, p in site.requests if m == "GET"}
    sent = [p for p in starts if p.startswith("/x")]
    assert 0 < len(sent) < 12
    assert max(starts[p] for p in sent) <= starts["/"] + 2.5
    assert starts["/b"] <= starts["/"] + 4.0  # six more slots would put it past 6.5 s


def test_a_page_with_nothing_to_run_is_not_loaded_in_the_browser(
    serve: Serve, tmp_path: Path
) -> None:
    # Both pages show an image; only the one with a script (or an inline handler) is
    # loaded in Chromium, which is what would fetch the image.
    site = serve(
        {
            "/": html_page(
                "Home",
                '<p>Static home.</p><img src="/static.png" alt="">'
                '<a href="/scripted">Scripted</a> <a href="/handler">Handler</a>',
            ),
            "/scripted": html_page(
                "Scripted", '<p>Scripted.</p><img src="/scripted.png" alt=""><script>1</script>'
            ),
            "/handler": html_page(
                "Handler", '<p>Handler.</p><img src="/handler.png" alt="" onerror="void 0">'
            ),
            **{
                f"/{name}.png": Route(b"\x89PNG", headers={"Content-Type": "image/png"})
                for name in ("static", "scripted", "handler")
            },
        }
    )
    rendered_crawl(site, tmp_path)
    assert set(site.page_paths()) >= {"/", "/scripted", "/handler"}
    images = {p for _, m, p in site.requests if p.endswith(".png")}
    assert images == {"/scripted.png", "/handler.png"}


async def test_a_hung_page_times_out_and_the_next_page_still_renders(serve: Serve) -> None:
    from trawl.net.renderer import Renderer

    site = serve({})
    allowed = frozenset({(site.host, site.port)})
    hung = b"<html><body><p>stuck</p><script>while (true) {}</script></body></html>"
    fine = b"<html><body><script>document.write('<p>rendered fine</p>')</script></body></html>"
    async with (
        Fetcher(
            user_agent="T", timeout=5, concurrency=2, host_concurrency=2, allowed=allowed
        ) as fetcher,
        Renderer(
            fetcher,
            allow_everything,
            no_pace,
            executable=CHROMIUM,
            user_agent="T",
            timeout=2.0,
            workers=1,
            max_bytes=1_000_000,
        ) as renderer,
    ):
        with pytest.raises(RenderError, match="timed out"):
            await renderer.render(site.url("/hung"), _html(site.url("/hung"), hung))
        assert renderer.timeouts == 1
        html = await renderer.render(site.url("/fine"), _html(site.url("/fine"), fine))
        assert "<p>rendered fine</p>" in html
    assert site.requests == []  # both documents came from the responses given


def test_a_crawl_whose_browser_cannot_start_makes_no_request(serve: Serve, tmp_path: Path) -> None:
    site = serve(js_site("http://127.0.0.1:9/"))
    (tmp_path / "t.toml").write_text(f'chromium = "{tmp_path / "missing"}"\n')
    result = trawl(
        "crawl",
        site.url("/"),
        "--data",
        str(tmp_path / "d"),
        "--render",
        "--config",
        str(tmp_path / "t.toml"),
    )
    assert result.returncode == 2
    assert "cannot start Chromium" in result.stderr
    assert site.requests == []
    store = SQLiteStore(tmp_path / "d" / "trawl.sqlite")
    try:
        assert [run.outcome for run in store.crawls()] == ["failed"]
        assert store.resumable_crawl() is None
    finally:
        store.close()


@pytest.mark.slow  # Playwright starts its driver process
async def test_chromium_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    from trawl.net.renderer import Renderer

    async with Fetcher(user_agent="T", timeout=5, concurrency=1, host_concurrency=1) as fetcher:
        with pytest.raises(RenderError, match="cannot start Chromium"):
            async with Renderer(
                fetcher,
                allow_everything,
                no_pace,
                executable=str(tmp_path / "no-chromium"),
                user_agent="T",
                timeout=2.0,
                workers=1,
                max_bytes=1000,
            ):
                pass


def _html(url: str, body: bytes) -> FetchResult:
    return FetchResult(url=url, status=200, headers=(("Content-Type", "text/html"),), body=body)
