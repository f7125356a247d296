"""Commands about what a crawl saw: check-headers, resources, explain, evict."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer

from trawl.cli.common import (
    ConfigOpt,
    DataOpt,
    ExitCode,
    StoreOpt,
    app,
    fail,
    load_settings,
    opened_store,
    parse_host_port,
)
from trawl.errors import TrawlError


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
    from trawl.pipeline.resource_checks import check_external_headers

    try:
        settings = load_settings(config)
        allowed = [parse_host_port(h) for h in allow_host or []]
    except TrawlError as e:
        raise fail(e) from None
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
        raise typer.Exit(code=ExitCode.UNHEALTHY)


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
    try:
        settings = load_settings(config, data=data, store=store_location)
        with opened_store(settings) as store:
            for r in store.resources(broken_only=broken, limit=limit):
                detail = r.error or r.content_type or ""
                typer.echo(f"{r.status:03d}  {r.url}  {detail}".rstrip())
                if broken:
                    for page in store.resource_pages(r.url, limit=10):
                        typer.echo(f"       used on {page}")
    except TrawlError as e:
        raise fail(e) from None


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
        settings = load_settings(config, data=data, store=store_location)
        wanted = normalise(url if "://" in url else "https://" + url)
        with opened_store(settings) as store:
            record = store.page(wanted)
            copies = store.duplicates_of(wanted) if record is not None else []
    except TrawlError as e:
        raise fail(e) from None
    if record is None:
        raise fail(f"{wanted} is not in the store")
    from rich.console import Console

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
    from trawl.pipeline.upkeep import evict as run_evict

    try:
        settings = load_settings(config, data=data, store=store_location)
        with opened_store(settings) as store:
            result = run_evict(store, settings, dry_run=dry_run)
    except TrawlError as e:
        raise fail(e) from None
    for rule, count in sorted(result.counts.items(), key=lambda kv: -kv[1]):
        typer.echo(f"{count:>8}  {rule}")
        for sample in result.samples.get(rule, []):
            typer.echo(f"          e.g. {sample}")
    total = sum(result.counts.values())
    if dry_run:
        typer.echo(f"would evict {total} pages (dry run: nothing removed)")
    else:
        typer.echo(f"evicted {result.removed} pages")
