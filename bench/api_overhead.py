"""The server's own CPU for one `/api/search` request, without HTTP and without a search.

    .venv/bin/python bench/api_overhead.py --data DIR [--workers 2] [--requests 2000]

Calls the app as uvicorn would (ASGI), the same query again and again with the result
cache on, so every answer after the first is a look-up: what is left is routing,
parameter checks, the rate limit, the middlewares, the cache, the metrics and the JSON
answer. Prints the process's CPU per request. Run it with another checkout's Python to
compare (its `trawl` is imported).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from trawl.server.app import create_app
from trawl.settings import Settings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    settings = Settings(
        data=args.data,
        search_workers=args.workers,
        search_cache_size=512,
        search_rate_limit="100000000/minute",
    )
    app = create_app(settings, header_checker=None)

    async def one() -> None:
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": "/api/search",
            "raw_path": b"/api/search",
            "query_string": b"q=create+index+concurrently&page=1",
            "root_path": "",
            "headers": [(b"host", b"127.0.0.1"), (b"user-agent", b"bench")],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 80),
            "state": {},
        }
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(dict(message))

        await app(scope, receive, send)
        if sent[0]["status"] != 200:
            raise SystemExit(f"bench: /api/search answered {sent[0]['status']}")

    async def run() -> float:
        async with app.router.lifespan_context(app):
            for _ in range(50):  # warm: imports, the index, the cache
                await one()
            before = time.process_time()
            for _ in range(args.requests):
                await one()
            used: float = (time.process_time() - before) / args.requests * 1000
            return used

    cpu = asyncio.run(run())
    print(f"{cpu:.3f} CPU-ms/request (answers from the result cache, workers {args.workers})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
