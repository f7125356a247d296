"""trawl export: the searchable pages, for use elsewhere."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import IO, Annotated, Any

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
from trawl.records import PageRecord


class ExportFormat(StrEnum):
    JSONL = "jsonl"


def page_line(record: PageRecord) -> dict[str, Any]:
    """One exported page: what search reads of it, dates as ISO 8601."""
    return {
        "url": record.url,
        "title": record.title,
        "description": record.description,
        "headings": list(record.headings),
        "text": record.text,
        "lang": record.lang,
        "published": record.published.isoformat() if record.published else None,
        "modified": record.modified.isoformat() if record.modified else None,
        "modified_source": record.modified_source,
        "fetched_at": datetime.fromtimestamp(record.fetched_at, UTC).isoformat(),
    }


@app.command()
def export(
    data: DataOpt = None,
    export_format: Annotated[
        ExportFormat,
        typer.Option("--format", help="jsonl: one JSON object a line, one line a page."),
    ] = ExportFormat.JSONL,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file. [default: standard output]"),
    ] = None,
    store_location: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Write the searchable pages (URL, title, headings, text, language, dates).

    Only what search can find: indexable pages that are not a duplicate of another.
    """
    try:
        settings = load_settings(config, data=data, store=store_location)
        with opened_store(settings) as store:
            if output is None:
                count = _write(store.pages(indexable_only=True), sys.stdout)
            else:
                with output.open("w", encoding="utf-8") as f:
                    count = _write(store.pages(indexable_only=True), f)
    except TrawlError as e:
        raise fail(e) from None
    except BrokenPipeError:  # `trawl export | head`: the reader has had enough
        # Python flushes stdout again on the way out; let that go nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit() from None
    except OSError as e:
        raise fail(f"cannot write {output}: {e.strerror}") from None
    err.print(f"exported {count} pages ({export_format})", highlight=False)


def _write(records: Iterable[PageRecord], out: IO[str]) -> int:
    count = 0
    for record in records:
        if record.searchable:
            out.write(json.dumps(page_line(record), ensure_ascii=False) + "\n")
            count += 1
    out.flush()
    return count
