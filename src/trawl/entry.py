"""The ``trawl`` console script's module: only the call into the CLI.

A crawl's parse workers are spawned processes, and a spawned process first imports
what its parent's console script imports (multiprocessing runs the script again as
``__mp_main__``). Pointing the script here rather than at ``trawl.cli`` keeps the CLI
(typer, rich, the store and the crawler: 6.6 MB resident) out of every worker.
"""

from __future__ import annotations


def main() -> None:
    from trawl.cli import main as cli  # noqa: PLC0415 - the reason this module exists

    cli()
