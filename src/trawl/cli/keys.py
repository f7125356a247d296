"""trawl keys: API keys for the admin API and pages."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from trawl.cli.common import (
    ConfigOpt,
    DataOpt,
    StoreOpt,
    app,
    err,
    fail,
    load_settings,
    opened_store,
)
from trawl.errors import TrawlError
from trawl.records import KEY_SCOPES

keys_app = typer.Typer(no_args_is_help=True, help="API keys for the admin API and pages.")
app.add_typer(keys_app, name="keys")


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Option(help="Who or what the key is for.")] = "admin",
    scope: Annotated[
        list[str] | None,
        typer.Option(
            help=f"What the key may do: {', '.join(KEY_SCOPES)} (repeatable; default: all)."
        ),
    ] = None,
    expires_days: Annotated[
        float | None,
        typer.Option(min=0.001, max=36_500, help="Days until the key stops working."),
    ] = None,
    data: DataOpt = None,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Make an API key and print it once: only its digest is stored."""
    from trawl.server.auth import create_key

    scopes = tuple(dict.fromkeys(scope or KEY_SCOPES))
    unknown = [s for s in scopes if s not in KEY_SCOPES]
    if unknown:
        raise fail(f"unknown scope {unknown[0]!r}: use {' or '.join(KEY_SCOPES)}")
    expires = time.time() + expires_days * 86400 if expires_days is not None else None
    try:
        settings = load_settings(config, data=data, store=store_location)
        with opened_store(settings, create=True) as store:
            key_id, key = create_key(store, name, [s for s in KEY_SCOPES if s in scopes], expires)
    except TrawlError as e:
        raise fail(e) from None
    from rich.markup import escape

    err.print(
        f"key {key_id} ({escape(name)}): not shown again; scopes {' '.join(scopes)};"
        " send it as the X-API-Key header",
        soft_wrap=True,
    )
    typer.echo(key)


@keys_app.command("list")
def keys_list(
    data: DataOpt = None, store_location: StoreOpt = None, config: ConfigOpt = None
) -> None:
    """List API keys: id, name, scopes, last use and expiry (the keys themselves are
    not stored)."""

    try:
        with opened_store(load_settings(config, data=data, store=store_location)) as store:
            keys = store.api_keys()
    except TrawlError as e:
        raise fail(e) from None
    for k in keys:
        used = "never used" if k.last_used is None else f"last used {k.last_used:.0f}"
        expires = "no expiry" if k.expires_at is None else f"expires {k.expires_at:.0f}"
        typer.echo(f"{k.id}\t{k.name}\t{used}\t{','.join(k.scopes)}\t{expires}")


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[int, typer.Argument(help="The key's id (see `trawl keys list`).")],
    data: DataOpt = None,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Revoke an API key: requests with it are refused from now on."""

    try:
        with opened_store(load_settings(config, data=data, store=store_location)) as store:
            found = store.revoke_api_key(key_id)
    except TrawlError as e:
        raise fail(e) from None
    if not found:
        raise fail(f"no key {key_id}")
    typer.echo(f"revoked key {key_id}")
