"""``trawl check``: do the store and the index agree, and mend them when they do not."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from trawl.cli.common import (
    ConfigOpt,
    DataOpt,
    StoreOpt,
    app,
    fail,
    load_settings,
    opened_store,
)
from trawl.errors import TrawlError


@app.command()
def check(
    repair: Annotated[
        bool, typer.Option("--repair", help="Index what is missing, remove what is extra.")
    ] = False,
    quick: Annotated[
        bool, typer.Option("--quick", help="Compare counts only (what /healthz does).")
    ] = False,
    data: DataOpt = None,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Compare the store's searchable pages with the index's documents.

    Every searchable page in the store must be in the index, and the index must hold
    nothing else. Prints the difference (a few URLs of each kind) and exits 1 when
    they differ; --repair mends it and checks again.
    """
    from trawl.pipeline.integrity import check_index

    try:
        settings = load_settings(config, data=data, store=store_location)
        with opened_store(settings) as store:
            checked = asyncio.run(check_index(store, settings, full=not quick, mend=repair))
    except TrawlError as e:
        raise fail(str(e)) from None
    found = checked.found
    if checked.interrupted:
        typer.echo(f"{checked.interrupted} crawls left running by a process that died: interrupted")
    typer.echo(found.summary())
    for kind, urls in found.samples.items():
        for url in urls:
            typer.echo(f"  {kind}: {url}")
    if checked.after is not None:
        typer.echo(f"repaired {checked.repaired} pages; {checked.after.summary()}")
        if not checked.after.agrees:
            raise typer.Exit(1)
    elif not found.agrees:
        raise typer.Exit(1)
