"""Commands that answer: search, serve, settings."""

from __future__ import annotations

import json
import re
from html import unescape
from typing import TYPE_CHECKING, Annotated

import typer

from trawl import settings as settings_module
from trawl.cli.common import (
    ConfigOpt,
    DataOpt,
    StoreOpt,
    app,
    check_extras,
    err,
    fail,
    load_settings,
    setting_option,
)
from trawl.errors import StoreError, TrawlError

if TYPE_CHECKING:
    from rich.text import Text

# Snippets arrive as the web page shows them: escaped HTML, matched words in <mark>.
_MARKED = re.compile(r"<mark>(.*?)</mark>", re.DOTALL)
MATCH_STYLE = "bold yellow"


def snippet_text(snippet: str) -> Text:
    """A rendered snippet as terminal text: matched words styled, the rest plain.

    Styles are dropped by Rich when the output is not a terminal (a pipe, a file)
    or NO_COLOR is set, so piped output stays plain text.
    """
    from rich.text import Text

    text = Text()
    pos = 0
    for found in _MARKED.finditer(snippet):
        text.append(unescape(snippet[pos : found.start()]))
        text.append(unescape(found.group(1)), style=MATCH_STYLE)
        pos = found.end()
    text.append(unescape(snippet[pos:]))
    return text


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    data: DataOpt = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="Results to show.")] = 10,
    page: Annotated[int, typer.Option(min=1, help="Result page.")] = 1,
    sort: Annotated[
        str | None, typer.Option(help="relevance (the default), or date: newest first.")
    ] = None,
    site: Annotated[str | None, typer.Option(help="Only this host (as site: does).")] = None,
    lang: Annotated[str | None, typer.Option(help="Only pages in this language.")] = None,
    after: Annotated[str | None, typer.Option(help="Modified on or after this day.")] = None,
    before: Annotated[str | None, typer.Option(help="Modified before this day.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the API's JSON answer.")] = False,
    config: ConfigOpt = None,
) -> None:
    """Search the index."""
    from trawl.index.tantivy_index import IndexReader
    from trawl.search.request import search_request
    from trawl.search.searcher import search as run_search
    from trawl.server.answers import page_json

    try:
        asked = search_request(
            query,
            page=page,
            per_page=limit,
            sort=sort,
            lang=lang,
            site=site,
            after=after,
            before=before,
        )
        settings = load_settings(config, data=data)
        result = run_search(IndexReader(settings.index_path), asked, settings)
        if as_json:  # from the index alone, like the API's answer
            answer = page_json(result)
    except TrawlError as e:
        raise fail(e) from None
    if as_json:
        typer.echo(json.dumps(answer, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.text import Text

    out = Console(highlight=False, soft_wrap=True)
    out.print(f"{result.total} results ({result.took_ms} ms)")
    if result.did_you_mean:
        out.print(f"Did you mean: {result.did_you_mean}", markup=False)
    for n, hit in enumerate(result.hits, start=(page - 1) * limit + 1):
        # Text, not markup: a title or snippet may hold "[...]" of its own.
        out.print()
        out.print(Text.assemble(f"{n}. ", (hit.title, "bold")))
        out.print(Text.assemble("   ", (hit.url, "blue")))
        if hit.section:
            out.print(Text.assemble("   ", f"{' > '.join(hit.section.path)}: {hit.section.url}"))
        out.print(Text.assemble("   ", snippet_text(hit.snippet)))


@app.command()
def serve(
    data: DataOpt = None,
    host: Annotated[str | None, setting_option("host")] = None,
    port: Annotated[int | None, setting_option("port")] = None,
    search_workers: Annotated[int | None, setting_option("search_workers")] = None,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Serve the search page, the JSON API and the docs at /docs.

    With no API key yet, it prints a setup link: opened once, within the hour, it
    logs the browser in to the admin page, where sites are added and crawled.
    """
    import uvicorn

    from trawl.server.app import create_app, setup_link
    from trawl.server.auth import SETUP_MINUTES
    from trawl.server.search_pool import serving_workers

    try:
        settings = load_settings(
            config,
            data=data,
            host=host,
            port=port,
            store=store_location,
            search_workers=search_workers,
        )
        check_extras(settings)
        # -1 (auto) becomes this machine's number here, in `trawl serve` alone.
        settings = settings.replace(search_workers=serving_workers(settings.search_workers))
        settings.data.mkdir(parents=True, exist_ok=True)
        base = settings.public_url.rstrip("/") or _local_base(settings.host, settings.port)
        app_ = create_app(settings)
        link = setup_link(app_, base)
    except TrawlError as e:
        raise fail(e) from None
    except OSError as e:  # the data folder cannot be made (read-only, a file in the way)
        raise fail(StoreError(f"cannot open the data folder: {e}")) from None
    workers = settings.search_workers
    searches = f"in {workers} worker processes" if workers > 1 else "in this process"
    searches = "in 1 worker process" if workers == 1 else searches
    err.print(
        f"Trawl serving {settings.data} on {base}/ (searches {searches})",
        markup=False,
        highlight=False,
    )
    if link is not None:
        # Plain echo, never wrapped: the link is copied or clicked as one line.
        typer.echo(
            f"No API key yet. Open this link to set up Trawl (one login, valid for"
            f" {SETUP_MINUTES:.0f} minutes):\n  {link}",
            err=True,
        )
    # Forwarded headers are believed only from the listed proxies: uvicorn's default
    # trusts them from 127.0.0.1, so behind a local proxy passing X-Forwarded-For through,
    # any client could name itself anew for each request and escape the rate limit.
    proxies = settings.proxy_networks
    uvicorn.run(
        app_,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        proxy_headers=bool(proxies),
        forwarded_allow_ips=",".join(proxies) if proxies else "",
    )


def _local_base(host: str, port: int) -> str:
    """The address a browser on this machine opens for ``host`` (a wildcard is loopback)."""
    if host in ("", "0.0.0.0"):  # noqa: S104 - naming the wildcard, not binding it
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@app.command("settings")
def show_settings() -> None:
    """Print every setting with its env variable, default and meaning (Markdown)."""
    typer.echo(settings_module.markdown_table())
