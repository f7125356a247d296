"""The ``trawl`` command. Thin: parse flags, call the pipeline, print.

One module a group of commands; ``common`` holds the app and what they share.
Commands import their stages lazily, so ``trawl --help`` stays fast.
"""

from __future__ import annotations

import importlib
import sys

from trawl.cli.common import app

# Each module adds its commands to ``app`` as it is imported: in this order, which
# is the order ``trawl --help`` lists them in.
for _group in ("crawling", "searching", "audit", "evaluation", "keys"):
    importlib.import_module(f"trawl.cli.{_group}")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
