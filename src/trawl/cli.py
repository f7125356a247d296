"""The ``trawl`` command. Thin: parse flags, call the pipeline, print."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from trawl import settings as settings_module
from trawl.crawl.crawler import Crawler, CrawlStats
from trawl.errors import ConfigError, TrawlError
from trawl.settings import Settings
from trawl.store.base import Store

if TYPE_CHECKING:
    from trawl.stage_pool import StagePool

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Trawl: crawl sites, index them, search them.",
)
err = Console(stderr=True)

DataOpt = Annotated[
    Path | None, typer.Option("--data", help="Data folder [env TRAWL_DATA, default ./trawl-data].")
]
StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="A postgresql:// URL or a SQLite file [env TRAWL_STORE, default DATA/trawl.sqlite].",
    ),
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="A trawl.toml file [env TRAWL_CONFIG].")
]


def _settings(config: Path | None, **overrides: object) -> Settings:
    return settings_module.load(config_file=config).replace(**overrides)


def _fail(message: str) -> typer.Exit:
    err.print(f"[red]trawl: error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code=2)


@contextmanager
def _opened_store(settings: Settings) -> Iterator[Store]:
    """The store the settings name, closed on the way out, whatever happens inside."""
    from trawl.store import open_store

    store = open_store(settings)
    try:
        yield store
    finally:
        store.close()


SPEED_PRESETS: dict[str, dict[str, object]] = {
    "gentle": {"concurrency": 4, "host_concurrency": 1, "delay": 2.0},
    "balanced": {"concurrency": 8, "host_concurrency": 2, "delay": 0.5},
    "fast": {"concurrency": 32, "host_concurrency": 8, "delay": 0.1},
}


@app.command()
def crawl(
    urls: Annotated[
        list[str] | None, typer.Argument(help="Start URLs; https:// is added when omitted.")
    ] = None,
    data: DataOpt = None,
    max_pages: Annotated[int | None, typer.Option(min=1, help="Stop after this many URLs.")] = None,
    max_depth: Annotated[
        int | None, typer.Option(min=0, help="Link hops from a start URL.")
    ] = None,
    max_per_host: Annotated[
        int | None, typer.Option(min=0, help="URLs admitted per host; 0: no limit.")
    ] = None,
    scope: Annotated[
        str | None, typer.Option(help="Links followed: host, site (registrable domain) or web.")
    ] = None,
    speed: Annotated[
        str | None,
        typer.Option(help="gentle, balanced or fast: sets concurrency and delay together."),
    ] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Requests in flight.")] = None,
    delay: Annotated[
        float | None, typer.Option(min=0, help="Seconds between requests to one host.")
    ] = None,
    host_concurrency: Annotated[
        int | None, typer.Option(min=1, help="Requests in flight to one host.")
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(help="Also allow this private HOST:PORT (repeatable)."),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Resume the last stopped or killed crawl.")
    ] = False,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Start over even if the last run was cut short.")
    ] = False,
    render: Annotated[
        bool | None,
        typer.Option("--render/--no-render", help="Load HTML pages in headless Chromium."),
    ] = None,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Crawl sites from start URLs and index every page found.

    Running the same command again after Ctrl-C or a crash resumes the crawl.
    """
    from trawl.stage_pool import StagePool, workers_for

    try:
        settings = _settings(config, data=data, store=store_location)
    except TrawlError as e:
        raise _fail(str(e)) from None
    # First: the parser's workers import their modules and load the language model
    # while this process imports the rest of the crawl.
    pool = StagePool(workers_for(settings.parse_workers))
    pool.start()
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
            resume=resume,
            fresh=fresh,
            render=render,
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
    resume: bool,
    fresh: bool,
    render: bool | None,
) -> None:
    from trawl.pipeline import crawl as run_crawl
    from trawl.store import open_store

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
        allowed = [_host_port(h) for h in allow_host or []]
        store = open_store(settings)
        starts = _start_urls(urls or [], resume, store)
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
                )
            )
    except TrawlError as e:
        raise _fail(str(e)) from None
    finally:
        store.close()
    resumed = f" (resumes crawl {outcome.resumed_from})" if outcome.resumed_from else ""
    typer.echo(
        f"crawl {outcome.crawl_id} {outcome.outcome}{resumed}: {outcome.fetched} fetched,"
        f" {outcome.indexed} indexed, {outcome.failed} failed, {outcome.blocked} blocked by"
        f" robots.txt, {outcome.pruned} pruned, in {outcome.seconds:.1f}s"
        f" ({outcome.pages_per_second:.1f} pages/s)"
    )
    for reason, count in sorted(outcome.skipped.items(), key=lambda kv: -kv[1]):
        example = outcome.samples.get(reason, [""])[0]
        typer.echo(f"  skipped {count:>6}  {reason}" + (f"  e.g. {example}" if example else ""))
    if outcome.resources_checked:
        typer.echo(
            f"  resources checked: {outcome.resources_checked},"
            f" broken: {outcome.resources_broken} (see `trawl resources --broken`)"
        )


@app.command("check-headers")
def check_headers(
    urls: Annotated[list[str], typer.Argument(help="URLs to check with one HEAD request each.")],
    allow_host: Annotated[
        list[str] | None,
        typer.Option(help="Also allow this private HOST:PORT (repeatable)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    config: ConfigOpt = None,
) -> None:
    """HEAD each URL once: no redirect followed, public addresses only, six at once.

    Prints status (000: no response), Location and error. Exits 1 when any check failed.
    """
    from trawl.pipeline import check_external_headers

    try:
        settings = _settings(config)
        allowed = [_host_port(h) for h in allow_host or []]
    except TrawlError as e:
        raise _fail(str(e)) from None
    checks = asyncio.run(check_external_headers(urls, settings, allow=allowed))
    for c in checks:
        if as_json:
            fields = {
                "url": c.url,
                "status": c.status,
                "location": c.location,
                "content_type": c.header("content-type"),
                "error": c.error,
                "elapsed": round(c.elapsed, 3),
            }
            typer.echo(json.dumps(fields, ensure_ascii=False))
        else:
            extra = f" -> {c.location}" if c.location else f"  ({c.error})" if c.error else ""
            typer.echo(f"{c.status_text}  {c.url}{extra}")
    if any(c.status == 0 for c in checks):
        raise typer.Exit(code=1)


@app.command()
def resources(
    data: DataOpt = None,
    broken: Annotated[
        bool, typer.Option("--broken", help="Only status 000 or >= 400, with their pages.")
    ] = False,
    limit: Annotated[int, typer.Option(min=1, help="Rows to show.")] = 100,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Show the resources checked after the last crawls (images, scripts, stylesheets...)."""
    from trawl.store import open_store

    try:
        settings = _settings(config, data=data, store=store_location)
        store = open_store(settings)
    except TrawlError as e:
        raise _fail(str(e)) from None
    try:
        for r in store.resources(broken_only=broken, limit=limit):
            detail = r.error or r.content_type or ""
            typer.echo(f"{r.status:03d}  {r.url}  {detail}".rstrip())
            if broken:
                for page in store.resource_pages(r.url, limit=10):
                    typer.echo(f"       used on {page}")
    finally:
        store.close()


def _start_urls(urls: list[str], resume: bool, store: Store) -> list[str]:
    from trawl.urls.start import parse_start_url

    if urls:
        return list(dict.fromkeys(parse_start_url(u) for u in urls))
    if resume:
        previous = store.resumable_crawl()
        if previous is None:
            raise ConfigError("no stopped or interrupted crawl to resume")
        return list(previous.start_urls)
    raise ConfigError("give at least one start URL, or --resume")


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--allow-host wants HOST:PORT, not {text!r}")
    return host.strip("[]").lower(), int(port)


@app.command()
def recrawl(
    data: DataOpt = None, store_location: StoreOpt = None, config: ConfigOpt = None
) -> None:
    """Re-crawl every enabled site, one after another (unchanged pages answer 304)."""
    from trawl.pipeline import recrawl_sites

    try:
        settings = _settings(config, data=data, store=store_location)
        with _opened_store(settings) as store:
            outcomes = asyncio.run(recrawl_sites(settings, store))
    except TrawlError as e:
        raise _fail(str(e)) from None
    for o in outcomes:
        typer.echo(f"crawl {o.crawl_id} {o.outcome}: {o.fetched} fetched, {o.pruned} pruned")
    if not outcomes:
        typer.echo("no enabled sites: crawl one first")


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
    from trawl.server.api_search import page_json

    try:
        settings = _settings(config, data=data)
        result = run_search(
            IndexReader(settings.index_path), query, settings, page=page, per_page=limit
        )
        if as_json:
            with _opened_store(settings) as store:
                answer = page_json(result, store)
    except TrawlError as e:
        raise _fail(str(e)) from None
    if as_json:
        typer.echo(json.dumps(answer, ensure_ascii=False))
        return
    out = Console(highlight=False)
    out.print(f"{result.total} results ({result.took_ms} ms)")
    for n, hit in enumerate(result.hits, start=(page - 1) * limit + 1):
        out.print(f"\n{n}. [bold]{hit.title}[/bold]\n   [blue]{hit.url}[/blue]")
        out.print(f"   {strip_marks(hit.snippet)}", markup=False)


@app.command()
def index(data: DataOpt = None, store_location: StoreOpt = None, config: ConfigOpt = None) -> None:
    """Rebuild the search index (in DATA/index) from the store.

    With a shared PostgreSQL store, run it where `trawl serve` runs: the server
    picks up each new commit by itself.
    """
    from trawl.pipeline import rebuild_index

    try:
        settings = _settings(config, data=data, store=store_location)
        with _opened_store(settings) as store:
            count = asyncio.run(rebuild_index(store, settings))
    except TrawlError as e:
        raise _fail(str(e)) from None
    typer.echo(f"indexed {count} pages into {settings.index_path}")


@app.command()
def worker(
    urls: Annotated[
        list[str] | None,
        typer.Argument(help="Start URLs of the crawl to join or begin; none: the running one."),
    ] = None,
    store_location: StoreOpt = None,
    data: DataOpt = None,
    max_pages: Annotated[
        int | None, typer.Option(min=1, help="Stop this worker after this many URLs.")
    ] = None,
    max_depth: Annotated[
        int | None, typer.Option(min=0, help="Link hops from a start URL.")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="Requests in flight in this worker.")
    ] = None,
    delay: Annotated[
        float | None,
        typer.Option(min=0, help="Seconds between requests to one host, over all workers."),
    ] = None,
    host_concurrency: Annotated[
        int | None, typer.Option(min=1, help="Requests in flight to one host, over all workers.")
    ] = None,
    lease: Annotated[
        float | None,
        typer.Option(min=1, help="Seconds a URL stays leased; a dead worker's URLs wait this."),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(help="Also allow this private HOST:PORT (repeatable)."),
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Crawl as one of many workers sharing a store (start as many as you like, on
    any machines). Pages go to the store; build the index with `trawl index`."""
    import os
    import socket

    from trawl.pipeline import work
    from trawl.store import open_store
    from trawl.urls.start import parse_start_url

    try:
        settings = _settings(
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
        allowed = [_host_port(h) for h in allow_host or []]
        starts = list(dict.fromkeys(parse_start_url(u) for u in urls or []))
        store = open_store(settings)
    except TrawlError as e:
        raise _fail(str(e)) from None
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
        raise _fail(str(e)) from None
    finally:
        store.close()
    typer.echo(
        f"worker {owner}: crawl {outcome.crawl_id} {outcome.outcome}: {outcome.fetched} fetched,"
        f" {outcome.failed} failed, {outcome.blocked} blocked by robots.txt, {outcome.pruned}"
        f" pruned, in {outcome.seconds:.1f}s ({outcome.pages_per_second:.1f} pages/s)"
    )


@app.command()
def explain(
    url: Annotated[str, typer.Argument(help="A stored page's URL.")],
    data: DataOpt = None,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Say what Trawl knows about a page: searchable or not, authority, quality,
    which copy is canonical and why, where it is discussed."""
    from trawl.urls.identity import normalise

    try:
        settings = _settings(config, data=data, store=store_location)
        wanted = normalise(url if "://" in url else "https://" + url)
        with _opened_store(settings) as store:
            record = store.page(wanted)
            copies = store.duplicates_of(wanted) if record is not None else []
    except TrawlError as e:
        raise _fail(str(e)) from None
    if record is None:
        raise _fail(f"{wanted} is not in the store")
    out = Console(highlight=False, soft_wrap=True)
    searchable = "yes" if record.searchable else "no"
    out.print(record.url, markup=False)
    out.print(
        f"  status {record.status}, {record.indexability or 'not labelled'},"
        f" searchable: {searchable}",
        markup=False,
    )
    authority = f"{record.authority:.3f}" if record.scored else "not scored yet"
    community = "yes" if record.community else "no"
    out.print(
        f"  authority {authority} (PageRank), inlinks {record.inlinks},"
        f" quality {record.quality:.3f}, community page: {community}",
        markup=False,
    )
    if record.duplicate_of is not None:
        out.print(f"  duplicate of {record.duplicate_of}", markup=False)
        out.print(f"  that copy won: {record.canonical_reason}", markup=False)
    elif copies:
        n = f"{len(copies)} copies" if len(copies) > 1 else "1 copy"
        out.print(f"  canonical of {n}: {record.canonical_reason}", markup=False)
        for copy in copies[:10]:
            out.print(f"    {copy}", markup=False)
    for d in record.discussed_on:
        quote = f' "{d.quote}"' if d.quote else ""
        out.print(f"  discussed on {d.host}{quote} ({d.url})", markup=False)


@app.command()
def evict(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would go, by rule; remove nothing.")
    ] = False,
    data: DataOpt = None,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Remove near-duplicates, gone pages, low-value pages and hosts in unwanted languages
    from store and index (rules and thresholds: the evict_* settings)."""
    from trawl.pipeline import evict as run_evict

    try:
        settings = _settings(config, data=data, store=store_location)
        with _opened_store(settings) as store:
            result = run_evict(store, settings, dry_run=dry_run)
    except TrawlError as e:
        raise _fail(str(e)) from None
    for rule, count in sorted(result.counts.items(), key=lambda kv: -kv[1]):
        typer.echo(f"{count:>8}  {rule}")
        for sample in result.samples.get(rule, []):
            typer.echo(f"          e.g. {sample}")
    total = sum(result.counts.values())
    if dry_run:
        typer.echo(f"would evict {total} pages (dry run: nothing removed)")
    else:
        typer.echo(f"evicted {result.removed} pages")


@app.command()
def serve(
    data: DataOpt = None,
    host: Annotated[str | None, typer.Option(help="Address to listen on.")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="Port to listen on.")] = None,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Serve the search page, the JSON API and the docs at /docs."""
    import uvicorn

    from trawl.server.app import create_app

    try:
        settings = _settings(config, data=data, host=host, port=port, store=store_location)
    except TrawlError as e:
        raise _fail(str(e)) from None
    settings.data.mkdir(parents=True, exist_ok=True)
    err.print(f"Trawl serving {settings.data} on http://{settings.host}:{settings.port}/")
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="warning")


eval_app = typer.Typer(no_args_is_help=True, help="Measure ranking on judged queries.")
app.add_typer(eval_app, name="eval")
SplitOpt = Annotated[str, typer.Option("--split", help="Which qrels file: qrels/SPLIT.tsv.")]


def _print_metrics(name: str, metrics: dict[str, float]) -> None:
    for key, value in metrics.items():
        typer.echo(f"{name} {key} {value:.4f}")
    typer.echo(json.dumps(metrics))  # the last line: one JSON object, for scripts


def _beir_eval(folder: Path, split: str) -> Callable[[Settings], dict[str, float]]:
    from trawl.evaluation.collections import read_beir
    from trawl.evaluation.runner import evaluate_collection

    collection = read_beir(folder, split)
    return lambda s: evaluate_collection(collection, s)


def _smart_eval(folder: Path) -> Callable[[Settings], dict[str, float]]:
    from trawl.evaluation.collections import read_smart
    from trawl.evaluation.runner import evaluate_collection

    collection = read_smart(folder)
    return lambda s: evaluate_collection(collection, s)


def _golden_eval(file: Path) -> Callable[[Settings], dict[str, float]]:
    from trawl.evaluation.golden import evaluate_golden

    return lambda s: evaluate_golden(file, s)


@eval_app.command("beir")
def eval_beir(
    folder: Annotated[Path, typer.Argument(help="A BEIR folder: corpus.jsonl, queries, qrels/.")],
    split: SplitOpt = "test",
    config: ConfigOpt = None,
) -> None:
    """Index a BEIR collection in a temporary index; nDCG@10, Recall@100, MRR@10."""
    try:
        _print_metrics(folder.name, _beir_eval(folder, split)(_settings(config)))
    except TrawlError as e:
        raise _fail(str(e)) from None


@eval_app.command("smart")
def eval_smart(
    folder: Annotated[Path, typer.Argument(help="A Cranfield, CISI or CACM folder.")],
    config: ConfigOpt = None,
) -> None:
    """Index a SMART-format collection in a temporary index; the same metrics as beir."""
    try:
        _print_metrics(folder.name, _smart_eval(folder)(_settings(config)))
    except TrawlError as e:
        raise _fail(str(e)) from None


@eval_app.command("golden")
def eval_golden(
    file: Annotated[Path, typer.Argument(help="TSV: query<TAB>url[<TAB>url...].")],
    data: DataOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Run a golden set against a crawled data folder; MRR, hits@1, hits@10."""
    try:
        _print_metrics(file.stem, _golden_eval(file)(_settings(config, data=data)))
    except TrawlError as e:
        raise _fail(str(e)) from None


@eval_app.command("sweep")
def eval_sweep(
    param: Annotated[str, typer.Option("--param", help="The setting to vary.")],
    values: Annotated[str, typer.Option("--values", help="Comma-separated values.")],
    beir: Annotated[Path | None, typer.Option("--beir", help="A BEIR folder.")] = None,
    smart: Annotated[Path | None, typer.Option("--smart", help="A SMART folder.")] = None,
    golden: Annotated[Path | None, typer.Option("--golden", help="A golden TSV file.")] = None,
    split: SplitOpt = "test",
    data: DataOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Rerun one evaluation (--beir, --smart or --golden) per value; print a table."""
    from trawl.evaluation.sweep import sweep

    chosen = [x for x in (beir, smart, golden) if x is not None]
    if len(chosen) != 1:
        raise _fail("name exactly one of --beir, --smart, --golden")
    try:
        settings = _settings(config, data=data)
        if beir is not None:
            evaluation = _beir_eval(beir, split)
        elif smart is not None:
            evaluation = _smart_eval(smart)
        else:
            evaluation = _golden_eval(chosen[0])
        rows = sweep(evaluation, settings, param, [v.strip() for v in values.split(",")])
    except TrawlError as e:
        raise _fail(str(e)) from None
    keys = list(rows[0][1]) if rows else []
    typer.echo("\t".join([param, *keys]))
    for value, metrics in rows:
        typer.echo("\t".join([value, *(f"{metrics[k]:.4f}" for k in keys)]))
    typer.echo(json.dumps(dict(rows)))


keys_app = typer.Typer(no_args_is_help=True, help="API keys for the admin API and pages.")
app.add_typer(keys_app, name="keys")


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Option(help="Who or what the key is for.")] = "admin",
    data: DataOpt = None,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Make an API key and print it once: only its digest is stored."""
    from trawl.server.auth import create_key

    try:
        with _opened_store(_settings(config, data=data, store=store_location)) as store:
            key_id, key = create_key(store, name)
    except TrawlError as e:
        raise _fail(str(e)) from None
    err.print(
        f"key {key_id} ({escape(name)}): send it as the X-API-Key header; it is not shown again"
    )
    typer.echo(key)


@keys_app.command("list")
def keys_list(
    data: DataOpt = None, store_location: StoreOpt = None, config: ConfigOpt = None
) -> None:
    """List API keys by id and name (the keys themselves are not stored)."""

    try:
        with _opened_store(_settings(config, data=data, store=store_location)) as store:
            keys = store.api_keys()
    except TrawlError as e:
        raise _fail(str(e)) from None
    for k in keys:
        used = "never used" if k.last_used is None else f"last used {k.last_used:.0f}"
        typer.echo(f"{k.id}\t{k.name}\t{used}")


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[int, typer.Argument(help="The key's id (see `trawl keys list`).")],
    data: DataOpt = None,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Revoke an API key: requests with it are refused from now on."""

    try:
        with _opened_store(_settings(config, data=data, store=store_location)) as store:
            found = store.revoke_api_key(key_id)
    except TrawlError as e:
        raise _fail(str(e)) from None
    if not found:
        raise _fail(f"no key {key_id}")
    typer.echo(f"revoked key {key_id}")


@app.command("settings")
def show_settings() -> None:
    """Print every setting with its env variable, default and meaning (Markdown)."""
    typer.echo(settings_module.markdown_table())


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
