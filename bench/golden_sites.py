"""Crawl a documentation mirror from ../shared/data into a data folder, served on loopback.

The SUMO mirror names https://sumo.dlr.de in its links and canonicals: it is served
with that origin rewritten to the loopback server's, as tests/test_e2e_sumo_docs.py
does, so a crawl of it sees the site as its live host would serve it.

    .venv/bin/python bench/golden_sites.py sumo /tmp/sumo-data
    .venv/bin/trawl eval golden bench/golden/sumo-docs.tsv --data /tmp/sumo-data

The Cargo book and the rustc book are mdBook copies rustup installs with the toolchain's
docs; each is crawled as its live home (https://doc.rust-lang.org/cargo/, .../rustc/)
through a host alias to a loopback server that answers that folder (and 404 for the rest
of the live host).

    .venv/bin/python bench/golden_sites.py cargo /tmp/cargo-data
    .venv/bin/python bench/golden_sites.py rustc /tmp/rustc-data
"""

from __future__ import annotations

import argparse
import asyncio
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from trawl.pipeline.crawl_run import crawl
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SITES = {
    # name: (mirror folder, live origin its pages name, start paths)
    "sumo": ("site-sumo-docs", b"https://sumo.dlr.de", ["/docs/index.html", "/docs/TraCI.html"]),
    "postgres": ("site-postgresql-15-docs", b"", ["/index.html"]),
}


LIVE_RUST = "doc.rust-lang.org"
# The books rustup installs under share/doc/rust/html, each at /NAME/ on the live host.
RUST_BOOKS = ("cargo", "rustc")


class Server(ThreadingHTTPServer):
    """Python's server with a listen queue a crawl's burst of connections fits in: with
    the default 5, on a loaded machine, refused SYNs are retried for over 10 s and the
    crawl records connect timeouts (pages lost from one run to the next)."""

    request_queue_size = 128
    daemon_threads = True


def rust_book(name: str) -> Path | None:
    """The book ``name`` rustup installed (``rustup component add rust-docs``), if any: the
    first toolchain's in name order (nightly before stable), as the e2e tests take it."""
    found = sorted(Path.home().glob(f".rustup/toolchains/*/share/doc/rust/html/{name}/index.html"))
    return found[0].parent if found else None


def prefix_handler(root: Path, prefix: str) -> type[SimpleHTTPRequestHandler]:
    """Serves ``root`` at ``prefix`` (``/cargo/``), 404 elsewhere, as the live host does for
    a book among other books."""

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def translate_path(self, path: str) -> str:
            if not path.startswith(prefix):
                return str(root / "no such file")
            return super().translate_path("/" + path[len(prefix) :])

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def rewriting_handler(root: Path, live: bytes, origin: bytes) -> type[SimpleHTTPRequestHandler]:
    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self) -> None:
            if self.path == "/robots.txt" and live:
                sitemap = origin + b"/docs/sitemap.xml"
                return self._send(
                    b"User-agent: *\nAllow: /\nSitemap: " + sitemap + b"\n", "text/plain"
                )
            path = Path(self.translate_path(self.path))
            if path.is_dir():
                path = path / "index.html"
            if not live or not path.is_file() or path.suffix not in {".html", ".xml"}:
                return super().do_GET()
            body = path.read_bytes().replace(live, origin)
            return self._send(body, "text/html" if path.suffix == ".html" else "application/xml")

        def _send(self, body: bytes, content_type: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def crawl_rust_book(name: str, data: Path) -> str:
    root = rust_book(name)
    if root is None:
        raise SystemExit(f"no {name} book under ~/.rustup (rustup component add rust-docs)")
    httpd = Server(("127.0.0.1", 0), prefix_handler(root, f"/{name}/"))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    alias = f"{LIVE_RUST}=127.0.0.1:{httpd.server_address[1]}"
    try:
        # Parsed in worker processes from the start: print.html (the whole book: Cargo's
        # 1.9 MB, rustc's 1.5 MB) takes 11-14 s to parse on a loaded 2-core machine, and
        # parsed in the event loop (parse_workers -1 until the loop is busy) it stalled the
        # requests in flight past their 10 s connect deadline: 1 to 3 Cargo chapters lost
        # in 3 of 6 crawls.
        settings = Settings(
            data=data,
            delay=0.0,
            concurrency=8,
            host_concurrency=8,
            host_aliases=alias,
            parse_workers=2,
        )
        store = SQLiteStore(settings.sqlite_path)
        outcome = asyncio.run(crawl([f"https://{LIVE_RUST}/{name}/index.html"], settings, store))
        store.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    return outcome.outcome


def crawl_site(name: str, data: Path) -> str:
    if name in RUST_BOOKS:
        return crawl_rust_book(name, data)
    folder, live, starts = SITES[name]
    httpd = Server(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    origin = f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.RequestHandlerClass = rewriting_handler(SHARED / folder, live, origin.encode())
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        settings = Settings(data=data, delay=0.0, concurrency=8, host_concurrency=8)
        store = SQLiteStore(settings.sqlite_path)
        outcome = asyncio.run(crawl([origin + s for s in starts], settings, store))
        store.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    return outcome.outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", choices=sorted([*SITES, *RUST_BOOKS]))
    parser.add_argument("data", type=Path)
    args = parser.parse_args()
    print(crawl_site(args.site, args.data))


if __name__ == "__main__":
    main()
