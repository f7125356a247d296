"""Commands that fetch: crawl, recrawl, worker, and index (which rebuilds from the store)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import signal
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Annotated

import typer

from trawl.crawl.crawler import Crawler, CrawlStats
from trawl.errors import ConfigError, TrawlError
from trawl.records import NOT_INDEXED, Outcome
from trawl.settings import SPEED_PRESETS, Settings, speed_preset_help
from trawl.store.base import CrawlLog, Store

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    from trawl.index.tantivy_index import IndexWriter
    from trawl.pipeline.crawl_run import CrawlOutcome
    from trawl.pipeline.stage_pool import StagePool
from trawl.cli.common import (
    CLOSED,
    ConfigOpt,
    DataOpt,
    StoreOpt,
    app,
    check_extras,
    error_console,
    fail,
    load_settings,
    on_terminal,
    opened_store,
    parse_host_port,
    setting_option,
)

_PRESETS_HELP = ", ".join(speed_preset_help(name) for name in SPEED_PRESETS)
AllowHostOpt = Annotated[
    list[str] | None,
    typer.Option(
        help="Also allow this private HOST:PORT, or a whole network (10.1.0.0/16), which the"
        " address checks refuse (repeatable)."
    ),
]


@app.command()
def crawl(
    urls: Annotated[
        list[str] | None, typer.Argument(help="Start URLs; https:// is added when omitted.")
    ] = None,
    data: DataOpt = None,
    max_pages: Annotated[int | None, setting_option("max_pages")] = None,
    max_depth: Annotated[int | None, setting_option("max_depth")] = None,
    max_per_host: Annotated[int | None, setting_option("max_per_host")] = None,
    scope: Annotated[str | None, setting_option("scope")] = None,
    speed: Annotated[
        str | None,
        typer.Option(help=f"A preset of the three settings below: {_PRESETS_HELP}."),
    ] = None,
    concurrency: Annotated[int | None, setting_option("concurrency")] = None,
    host_concurrency: Annotated[int | None, setting_option("host_concurrency")] = None,
    delay: Annotated[float | None, setting_option("delay")] = None,
    allow_host: AllowHostOpt = None,
    alias: Annotated[
        list[str] | None, setting_option("host_aliases", "--alias", repeatable=True)
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Resume the last stopped or killed crawl.")
    ] = False,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Start over even if the last run was cut short.")
    ] = False,
    render: Annotated[bool | None, setting_option("render", "--render/--no-render")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as one JSON object.")
    ] = False,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Crawl sites from start URLs and index every page found.

    Running the same command again after Ctrl-C or a crash resumes the crawl.
    """
    from trawl.pipeline.stage_pool import start_pool

    try:
        settings = load_settings(config, data=data, store=store_location)
    except TrawlError as e:
        raise fail(e) from None
    # First: the parser's workers import their modules and load the language model
    # while this process imports the rest of the crawl.
    pool = start_pool(settings.parse_workers, deadline=settings.parse_timeout)
    try:
        _crawl(
            urls,
            settings,
            pool,
            max_pages=max_pages,
            max_depth=max_depth,
            max_per_host=max_per_host,
            scope=scope,
            speed=speed,
            concurrency=concurrency,
            delay=delay,
            host_concurrency=host_concurrency,
            allow_host=allow_host,
            alias=alias,
            resume=resume,
            fresh=fresh,
            render=render,
            as_json=as_json,
        )
    finally:
        pool.shutdown()


def _crawl(
    urls: list[str] | None,
    settings: Settings,
    pool: StagePool,
    *,
    max_pages: int | None,
    max_depth: int | None,
    max_per_host: int | None,
    scope: str | None,
    speed: str | None,
    concurrency: int | None,
    delay: float | None,
    host_concurrency: int | None,
    allow_host: list[str] | None,
    alias: list[str] | None,
    resume: bool,
    fresh: bool,
    render: bool | None,
    as_json: bool,
) -> None:
    import trawl.index.tantivy_index  # noqa: F401 - here, not beside this thread's imports (see _open)
    from trawl.urls.start import parse_host_aliases

    try:
        if speed is not None:
            if speed not in SPEED_PRESETS:
                raise ConfigError(f"--speed must be one of {', '.join(SPEED_PRESETS)}")
            settings = settings.replace(**SPEED_PRESETS[speed])
        settings = settings.replace(
            max_pages=max_pages,
            max_depth=max_depth,
            max_per_host=max_per_host,
            scope=scope,
            concurrency=concurrency,
            delay=delay,
            host_concurrency=host_concurrency,
            render=render,
        )
        if alias:
            settings = settings.replace(host_aliases=",".join(alias))
        parse_host_aliases(settings.host_aliases)  # a typo fails here, not mid-crawl
        allowed = [parse_host_port(h) for h in allow_host or []]
        check_extras(settings)
        # Bad input is refused before the store is made: no data folder is left behind.
        checked = _start_urls(urls or [], resume, None)
    except TrawlError as e:
        raise fail(e) from None
    # Opening the store and the index writer waits on the disk (fsync) more than it runs:
    # done in a thread while this one imports the crawl. The writer is the crawl lock,
    # taken before the crawl writes to the store, as crawl_run.crawl takes it; a resumed
    # run opens it there, once the store has said what there is to resume.
    opening = ThreadPoolExecutor(1, thread_name_prefix="trawl-open")
    opened = opening.submit(_open, settings, index=bool(urls))
    opening.shutdown(wait=False)
    from trawl.pipeline.crawl_run import crawl as run_crawl

    try:
        store, index = opened.result()
    except TrawlError as e:
        raise fail(e) from None
    try:
        # Start URLs given are checked once (a thousand took a second, twice over).
        starts = checked if urls else _start_urls([], resume, store)
    except TrawlError as e:
        store.close()
        raise fail(e) from None

    # The bar's modules (4 MB resident) are loaded only where a bar is drawn.
    progress, on_progress = _progress_bar() if on_terminal() else _no_progress()

    def on_crawler(crawler: Crawler) -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, crawler.stop)
        loop.add_signal_handler(signal.SIGTERM, crawler.stop)

    try:
        with progress:
            outcome = asyncio.run(
                run_crawl(
                    starts,
                    settings,
                    store,
                    on_progress,
                    on_crawler,
                    fresh=fresh,
                    allow=allowed,
                    pool=pool,
                    index=index,
                )
            )
    except TrawlError as e:
        raise fail(e) from None
    finally:
        store.close()
    # asyncio.run closed the pool and the index writer with the crawl, and its threads.
    CLOSED.add("crawl")
    if as_json:
        summary = dataclasses.asdict(outcome)
        summary["seconds"] = round(outcome.seconds, 3)
        summary["pages_per_second"] = round(outcome.pages_per_second, 2)
        typer.echo(json.dumps(summary, ensure_ascii=False))
        return
    resumed = f" (resumes crawl {outcome.resumed_from})" if outcome.resumed_from else ""
    typer.echo(
        f"crawl {outcome.crawl_id} {outcome.outcome}{resumed}: {outcome.fetched} fetched,"
        f" {outcome.indexed} indexed, {outcome.failed} failed, {outcome.blocked} blocked by"
        f" robots.txt, {outcome.pruned} pruned, in {outcome.seconds:.1f}s"
        f" ({outcome.pages_per_second:.1f} pages/s)"
        + (f", {outcome.internal_errors} internal errors" if outcome.internal_errors else "")
    )
    for reason, count in sorted(outcome.skipped.items(), key=lambda kv: -kv[1]):
        if reason.startswith(NOT_INDEXED):
            continue  # fetched, not skipped: the main_loss line below says it
        example = outcome.samples.get(reason, [""])[0]
        typer.echo(f"  skipped {count:>6}  {reason}" + (f"  e.g. {example}" if example else ""))
    for host, why in outcome.parked_hosts.items():
        typer.echo(f"  parked for the rest of the run: {host} ({why})")
    if outcome.main_loss is not None:
        typer.echo(f"  {outcome.main_loss}")
    if outcome.resources_checked:
        typer.echo(
            f"  resources checked: {outcome.resources_checked},"
            f" broken: {outcome.resources_broken} (see `trawl resources --broken`)"
        )
    failure = _failure(outcome)
    if failure is not None:
        # Last line, and a non-zero status: a script or a scheduler must notice.
        typer.echo(failure)
        raise typer.Exit(1)


def _failure(outcome: CrawlOutcome) -> str | None:
    """Why a finished crawl is a failure (unhealthy, or nothing searchable), or None."""
    loss = outcome.main_loss
    if outcome.outcome == Outcome.UNHEALTHY:
        errors = outcome.failed + outcome.internal_errors
        why = loss or f"{errors} of {outcome.fetched} requests failed"
        if outcome.ok == 0 and outcome.fetched == 0:
            why = "no page could be fetched"
        return f"crawl failed (unhealthy): {why}"
    # A resumed run indexes, at its end, the pages the run it resumes had fetched; they
    # are not in its own counts, so "nothing indexed" is judged on fresh runs only.
    fresh = outcome.resumed_from is None
    if outcome.outcome != Outcome.STOPPED and fresh and outcome.indexed + outcome.unchanged == 0:
        return f"crawl failed: nothing indexed ({loss or 'no indexable page was found'})"
    return None


def _open(settings: Settings, *, index: bool) -> tuple[Store, IndexWriter | None]:
    """The store (created for a crawl with start URLs), then with ``index`` the index
    writer. In a thread: its modules are imported already, by the caller."""
    from trawl.index.tantivy_index import IndexWriter
    from trawl.store import open_store

    store = open_store(settings, create=index)
    if not index:
        return store, None
    try:
        return store, IndexWriter(settings.index_path)
    except BaseException:
        store.close()
        raise


def _start_urls(urls: list[str], resume: bool, store: CrawlLog | None) -> list[str]:
    """The crawl's start URLs, as typed; with no ``store`` yet, only checks them."""
    from trawl.urls.start import start_request

    if urls:
        return list(dict.fromkeys(start_request(u) for u in urls))
    if resume and store is None:
        return []
    if resume and store is not None:
        previous = store.resumable_crawl()
        if previous is None:
            raise ConfigError("no stopped or interrupted crawl to resume")
        return list(previous.start_urls)
    raise ConfigError("give at least one start URL, or --resume")


@app.command()
def recrawl(
    data: DataOpt = None, store_location: StoreOpt = None, config: ConfigOpt = None
) -> None:
    """Re-crawl every enabled site, one after another (unchanged pages answer 304)."""
    from trawl.pipeline.upkeep import recrawl_sites

    try:
        settings = load_settings(config, data=data, store=store_location)
        check_extras(settings)
        with opened_store(settings) as store:
            outcomes = asyncio.run(recrawl_sites(settings, store))
    except TrawlError as e:
        raise fail(e) from None
    for o in outcomes:
        typer.echo(f"crawl {o.crawl_id} {o.outcome}: {o.fetched} fetched, {o.pruned} pruned")
    if not outcomes:
        typer.echo("no enabled sites: crawl one first")


@app.command()
def index(data: DataOpt = None, store_location: StoreOpt = None, config: ConfigOpt = None) -> None:
    """Rebuild the search index (in DATA/index) from the store.

    With a shared PostgreSQL store, run it where `trawl serve` runs: the server
    picks up each new commit by itself.
    """
    from trawl.pipeline.upkeep import rebuild_index

    try:
        settings = load_settings(config, data=data, store=store_location)
        with opened_store(settings) as store:
            count = asyncio.run(rebuild_index(store, settings))
    except TrawlError as e:
        raise fail(e) from None
    typer.echo(f"indexed {count} pages into {settings.index_path}")


@app.command()
def worker(
    urls: Annotated[
        list[str] | None,
        typer.Argument(help="Start URLs of the crawl to join or begin; none: the running one."),
    ] = None,
    store_location: StoreOpt = None,
    data: DataOpt = None,
    max_pages: Annotated[int | None, setting_option("max_pages")] = None,
    max_depth: Annotated[int | None, setting_option("max_depth")] = None,
    concurrency: Annotated[int | None, setting_option("concurrency")] = None,
    delay: Annotated[float | None, setting_option("delay")] = None,
    host_concurrency: Annotated[int | None, setting_option("host_concurrency")] = None,
    lease: Annotated[float | None, setting_option("lease")] = None,
    allow_host: AllowHostOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Crawl as one of many workers sharing a store (start as many as you like, on
    any machines). Pages go to the store; build the index with `trawl index`."""
    import os
    import socket

    from trawl.pipeline.workers import work
    from trawl.store import open_store
    from trawl.urls.start import start_request

    try:
        settings = load_settings(
            config,
            data=data,
            store=store_location,
            max_pages=max_pages,
            max_depth=max_depth,
            concurrency=concurrency,
            delay=delay,
            host_concurrency=host_concurrency,
            lease=lease,
        )
        allowed = [parse_host_port(h) for h in allow_host or []]
        starts = list(dict.fromkeys(start_request(u) for u in urls or []))
        check_extras(settings)
        # Without start URLs a worker only joins a running crawl: no store, nothing to join.
        store = open_store(settings, create=bool(starts))
    except TrawlError as e:
        raise fail(e) from None
    owner = f"{socket.gethostname()}:{os.getpid()}"

    def on_crawler(crawler: Crawler) -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, crawler.stop)
        loop.add_signal_handler(signal.SIGTERM, crawler.stop)

    try:
        outcome = asyncio.run(
            work(starts, settings, store, owner=owner, on_crawler=on_crawler, allow=allowed)
        )
    except TrawlError as e:
        raise fail(e) from None
    finally:
        store.close()
    typer.echo(
        f"worker {owner}: crawl {outcome.crawl_id} {outcome.outcome}: {outcome.fetched} fetched,"
        f" {outcome.failed} failed, {outcome.blocked} blocked by robots.txt, {outcome.pruned}"
        f" pruned, in {outcome.seconds:.1f}s ({outcome.pages_per_second:.1f} pages/s)"
    )


def _progress_bar() -> tuple[AbstractContextManager[object], Callable[[CrawlStats], None]]:
    """A live bar on the terminal's stderr, and what updates it."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("[bold]crawl"),
        BarColumn(),
        TextColumn("{task.fields[line]}"),
        TimeElapsedColumn(),
        console=error_console(),
        transient=True,
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

    return progress, on_progress


def _no_progress() -> tuple[AbstractContextManager[object], Callable[[CrawlStats], None]]:
    return contextlib.nullcontext(), lambda _stats: None
