"""Deep links against a golden set: for the queries whose answers name a section
(``/page.html#anchor``), is the page in the top 10, and does the result link to that
section (its ``section`` URL's fragment)?

    .venv/bin/python bench/golden_sections.py bench/golden/cargo-book.tsv /tmp/cargo-data \
        --half tuning
"""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import urlsplit

from trawl.evaluation.golden import HALVES, read_golden_set
from trawl.index.tantivy_index import IndexReader
from trawl.search.request import SearchRequest
from trawl.search.searcher import search
from trawl.settings import Settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", type=Path)
    parser.add_argument("data", type=Path)
    parser.add_argument("--half", choices=HALVES)
    parser.add_argument("--verbose", action="store_true", help="one line per query")
    args = parser.parse_args()
    settings = Settings(data=args.data)
    reader = IndexReader(settings.index_path)
    named = found = linked = 0
    for query in read_golden_set(args.golden):
        if args.half not in (None, query.half) or not any("#" in u for u in query.sections):
            continue
        named += 1
        for hit in search(reader, SearchRequest(query.text, per_page=10), settings).hits:
            path = urlsplit(hit.url).path
            if path not in query.expected:
                continue
            found += 1
            # An answer page named without a section is answered by any of its sections.
            wanted = {u.split("#", 1)[1] for u in query.sections if u.startswith(path + "#")}
            got = urlsplit(hit.section.url).fragment if hit.section else ""
            linked += not wanted or got in wanted
            if args.verbose:
                print(f"{'ok' if not wanted or got in wanted else '--'} {query.text!r}: {got!r}")
            break
    print(
        f"{named} queries name a section; their page in the top 10: {found};"
        f" linked to the named section: {linked}"
    )


if __name__ == "__main__":
    main()
