"""The ``trawl`` command. Thin: parse flags, call the pipeline, print."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from trawl import settings as settings_module
from trawl.crawl.crawler import Crawler, CrawlStats
from trawl.errors import TrawlError
from trawl.settings import Settings

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Trawl: crawl sites, index them, search them.",
)
err = Console(stderr=True)

DataOpt = Annotated[
    Path | None, typer.Option("--data", help="Data folder [env TRAWL_DATA, default ./trawl-data].")
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="A trawl.toml file [env TRAWL_CONFIG].")
]


def _settings(config: Path | None, **overrides: object) -> Settings:
    return settings_module.load(config_file=config).replace(**overrides)


def _fail(message: str) -> typer.Exit:
    err.print(f"[red]trawl: error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code=2)


@app.command()
def crawl(
    urls: Annotated[list[str], typer.Argument(help="Start URLs; https:// is added when omitted.")],
    data: DataOpt = None,
    max_pages: Annotated[int | None, typer.Option(min=1, help="Stop after this many URLs.")] = None,
    max_depth: Annotated[
        int | None, typer.Option(min=0, help="Link hops from a start URL.")
    ] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Requests in flight.")] = None,
    delay: Annotated[
        float | None, typer.Option(min=0, help="Seconds between requests to one host.")
    ] = None,
    host_concurrency: Annotated[
        int | None, typer.Option(min=1, help="Requests in flight to one host.")
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Crawl sites from start URLs and index every page found."""
    from trawl.pipeline import crawl as run_crawl
    from trawl.store.sqlite import SQLiteStore
    from trawl.urls.start import parse_start_url

    try:
        settings = _settings(
            config,
            data=data,
            max_pages=max_pages,
            max_depth=max_depth,
            concurrency=concurrency,
            delay=delay,
            host_concurrency=host_concurrency,
        )
        starts = list(dict.fromkeys(parse_start_url(u) for u in urls))
        store = SQLiteStore(settings.sqlite_path)
    except TrawlError as e:
        raise _fail(str(e)) from None

    progress = Progress(
        TextColumn("[bold]crawl"),
        BarColumn(),
        TextColumn("{task.fields[line]}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )
    task = progress.add_task("crawl", total=None, line="")

    def on_progress(stats: CrawlStats) -> None:
        line = (
            f"{stats.fetched} fetched, {stats.queued} queued, {stats.failed} failed,"
            f" {stats.pages_per_second:.1f} pages/s"
        )
        progress.update(
            task, completed=stats.fetched, total=stats.fetched + stats.queued, line=line
        )

    def on_crawler(crawler: Crawler) -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, crawler.stop)
        loop.add_signal_handler(signal.SIGTERM, crawler.stop)

    try:
        with progress:
            outcome = asyncio.run(run_crawl(starts, settings, store, on_progress, on_crawler))
    except TrawlError as e:
        raise _fail(str(e)) from None
    finally:
        store.close()
    typer.echo(
        f"crawl {outcome.crawl_id} {outcome.outcome}: {outcome.fetched} fetched,"
        f" {outcome.indexed} indexed, {outcome.failed} failed, {outcome.blocked} blocked by"
        f" robots.txt, in {outcome.seconds:.1f}s ({outcome.pages_per_second:.1f} pages/s)"
    )


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    data: DataOpt = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="Results to show.")] = 10,
    page: Annotated[int, typer.Option(min=1, help="Result page.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the API's JSON answer.")] = False,
    config: ConfigOpt = None,
) -> None:
    """Search the index."""
    from trawl.index.tantivy_index import IndexReader
    from trawl.search.searcher import search as run_search
    from trawl.search.snippets import strip_marks
    from trawl.server.app import page_json

    try:
        settings = _settings(config, data=data)
        result = run_search(
            IndexReader(settings.index_path), query, settings, page=page, per_page=limit
        )
    except TrawlError as e:
        raise _fail(str(e)) from None
    if as_json:
        typer.echo(json.dumps(page_json(result), ensure_ascii=False))
        return
    out = Console(highlight=False)
    out.print(f"{result.total} results ({result.took_ms} ms)")
    for n, hit in enumerate(result.hits, start=(page - 1) * limit + 1):
        out.print(f"\n{n}. [bold]{hit.title}[/bold]\n   [blue]{hit.url}[/blue]")
        out.print(f"   {strip_marks(hit.snippet)}", markup=False)


@app.command()
def index(data: DataOpt = None, config: ConfigOpt = None) -> None:
    """Rebuild the search index from the store."""
    from trawl.pipeline import rebuild_index
    from trawl.store.sqlite import SQLiteStore

    try:
        settings = _settings(config, data=data)
        store = SQLiteStore(settings.sqlite_path)
        try:
            count = rebuild_index(store, settings)
        finally:
            store.close()
    except TrawlError as e:
        raise _fail(str(e)) from None
    typer.echo(f"indexed {count} pages into {settings.index_path}")


@app.command()
def serve(
    data: DataOpt = None,
    host: Annotated[str | None, typer.Option(help="Address to listen on.")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="Port to listen on.")] = None,
    config: ConfigOpt = None,
) -> None:
    """Serve the search page, the JSON API and the docs at /docs."""
    import uvicorn

    from trawl.server.app import create_app

    try:
        settings = _settings(config, data=data, host=host, port=port)
    except TrawlError as e:
        raise _fail(str(e)) from None
    settings.data.mkdir(parents=True, exist_ok=True)
    err.print(f"Trawl serving {settings.data} on http://{settings.host}:{settings.port}/")
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="warning")


@app.command("settings")
def show_settings() -> None:
    """Print every setting with its env variable, default and meaning (Markdown)."""
    typer.echo(settings_module.markdown_table())


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
