"""The HTTP API and the search page, served by a real uvicorn on loopback."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from trawl.index.tantivy_index import IndexWriter
from trawl.records import PageRecord
from trawl.server.app import create_app
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Get = Callable[[str], tuple[int, str, str]]


def _start(settings: Settings) -> tuple[uvicorn.Server, threading.Thread, str]:
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=0, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, thread, f"http://127.0.0.1:{port}"


def _getter(base: str) -> Get:
    def get(path: str) -> tuple[int, str, str]:
        try:
            with urllib.request.urlopen(base + path, timeout=10) as r:
                return r.status, r.headers.get("content-type", ""), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("content-type", ""), e.read().decode()

    return get


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Get]:
    settings = Settings(data=tmp_path)
    writer = IndexWriter(settings.index_path)
    store = SQLiteStore(settings.sqlite_path)  # the same pages: store and index agree
    for i in range(30):
        record = PageRecord(
            url=f"https://docs.example/{i}",
            host="docs.example",
            status=200,
            depth=0,
            fetched_at=0.0,
            title=f"Tortoise care {i}",
            text=f"Tortoises need warmth. Page {i} <b>not markup</b>.",
            lang="en",
            indexable=True,
        )
        writer.upsert(record)
        store.save_page(record)
    store.close()
    writer.close()
    server, thread, base = _start(settings)
    yield _getter(base)
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def served_empty(tmp_path: Path) -> Iterator[Get]:
    server, thread, base = _start(Settings(data=tmp_path / "never-crawled"))
    yield _getter(base)
    server.should_exit = True
    thread.join(10)


def _json(body: str) -> Any:
    return json.loads(body)


def test_api_search_answers_the_documented_shape(served: Get) -> None:
    status, ctype, body = served("/api/search?q=tortoise&per_page=5&page=2")
    data = _json(body)

    assert status == 200 and ctype.startswith("application/json")
    assert set(data) >= {"query", "total", "took_ms", "results"}
    assert data["query"] == "tortoise" and data["total"] == 30
    assert len(data["results"]) == 5
    first = data["results"][0]
    assert set(first) >= {"url", "title", "snippet", "score"}
    assert "<mark>Tortoises</mark>" in first["snippet"]
    assert "&lt;b&gt;" in first["snippet"]  # page text is escaped, only <mark> is markup


@pytest.mark.parametrize(
    "query",
    [
        "/api/search",
        "/api/search?q=x&page=0",
        "/api/search?q=x&per_page=101",
        "/api/search?q=x&page=abc",
        "/api/search?q=" + "x" * 1001,
    ],
)
def test_bad_parameters_get_a_400_with_a_json_error(served: Get, query: str) -> None:
    status, _, body = served(query)
    assert status == 400
    assert _json(body)["error"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("sort=newest", "sort must be one of relevance, date"),
        ("lang=english", "language must be a two- or three-letter code"),
        ("after=31/05/2024", "after must be a date"),
        ("before=soon", "before must be a date"),
    ],
)
def test_bad_filters_are_a_400_on_the_api_and_the_page(
    served: Get, query: str, message: str
) -> None:
    status, _, body = served(f"/api/search?q=tortoise&{query}")
    assert status == 400 and _json(body)["error"]
    # The page reads the same parameters through the same request builder: its message.
    status, _, body = served(f"/?q=tortoise&{query}")
    assert status == 400 and message in body and 'class="result"' not in body


def test_no_index_yet_is_503_not_500(served_empty: Get) -> None:
    status, _, body = served_empty("/api/search?q=anything")
    assert status == 503 and "crawl a site first" in _json(body)["error"]
    status, _, body = served_empty("/healthz")
    assert status == 200 and _json(body)["documents"] is None


def test_healthz_counts_documents(served: Get) -> None:
    status, _, body = served("/healthz")
    assert status == 200 and _json(body) | {"version": None} == {
        "status": "ok",
        "documents": 30,
        "version": None,
    }


def test_html_search_page_works_without_javascript(served: Get) -> None:
    status, ctype, body = served("/?q=tortoise&page=2")

    assert status == 200 and ctype.startswith("text/html")
    # The only script is the suggest box's, external and deferred: results need none.
    assert body.count("<script") == 1 and '<script src="/static/suggest.js" defer>' in body
    assert body.count('class="result"') == 20 - 10  # 30 hits, 20 a page: page 2 holds 10
    assert "<mark>Tortoises</mark>" in body
    assert 'rel="prev"' in body and 'rel="next"' not in body


def test_html_page_escapes_the_query(served: Get) -> None:
    query = urllib.parse.quote("<script>alert(1)</script>")
    status, _, body = served(f"/?q={query}")

    assert status == 200
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;" in body


def test_html_page_survives_a_bad_page_number(served: Get) -> None:
    status, _, body = served("/?q=tortoise&page=-3")
    assert status == 200 and 'class="result"' in body


def test_a_page_past_the_last_says_so_and_links_back(served: Get) -> None:
    status, _, body = served("/?q=tortoise&page=9")  # 30 hits, 20 a page: 2 pages

    assert status == 200 and 'class="result"' not in body
    assert "Page 9 of 2: no results on this page." in body
    assert '<a href="/?q=tortoise&amp;page=2">Back to the last page</a>' in body
    assert "Nothing matched" not in body  # 30 pages did match, just not on page 9
    _, _, none = served("/?q=zebra&page=9")
    assert "Nothing matched" in none and "no results on this page" not in none


def test_api_suggest_completes_the_last_word_from_titles(served: Get) -> None:
    status, ctype, body = served("/api/suggest?q=tort")
    data = _json(body)
    assert status == 200 and ctype.startswith("application/json")
    assert data["query"] == "tort"
    assert len(data["suggestions"]) == 8  # at most 8, of the 30 titles that complete it
    assert all(s.startswith("Tortoise care ") for s in data["suggestions"])
    # A finished word and the next begun; a text nothing completes; too short a text.
    two = _json(served("/api/suggest?q=tortoise%20ca&limit=2")[2])["suggestions"]
    assert len(two) == 2 and all(s.startswith("Tortoise care ") for s in two)
    assert _json(served("/api/suggest?q=zebr")[2])["suggestions"] == []
    assert _json(served("/api/suggest?q=t")[2])["suggestions"] == []


@pytest.mark.parametrize(
    "query", ["/api/suggest", "/api/suggest?q=to&limit=9", "/api/suggest?q=" + "x" * 201]
)
def test_api_suggest_bad_parameters_get_a_400(served: Get, query: str) -> None:
    status, _, body = served(query)
    assert status == 400 and _json(body)["error"]


def test_api_search_says_did_you_mean(served: Get) -> None:
    data = _json(served("/api/search?q=tortoyses")[2])
    assert data["did_you_mean"] == "tortoises" and data["total"] == 30
    assert _json(served("/api/search?q=tortoises")[2])["did_you_mean"] is None
    status, _, body = served("/?q=tortoyses")
    assert status == 200 and 'Did you mean <a href="/?q=tortoises">tortoises</a>?' in body


def test_openapi_docs_are_served(served: Get) -> None:
    status, _, body = served("/openapi.json")
    assert status == 200 and "/api/search" in _json(body)["paths"]


def test_serve_recrawls_on_schedule(serve: Callable[..., Any], tmp_path: Path) -> None:
    import asyncio

    from fixture_sites import html_page
    from trawl.pipeline.crawl_run import crawl
    from trawl.store.sqlite import SQLiteStore

    site = serve({"/": html_page("Home", "<p>heron</p>")})
    settings = Settings(
        data=tmp_path,
        delay=0.0,
        recrawl_hours=0.5 / 3600,  # every 0.5 s
        admin_allow_hosts=urllib.parse.urlsplit(site.url("/")).netloc,
    )
    store = SQLiteStore(settings.sqlite_path)
    asyncio.run(crawl([site.url("/")], settings, store))

    server, thread, _ = _start(settings)
    try:
        deadline = time.monotonic() + 30
        while len(store.crawls()) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        server.should_exit = True
        thread.join(10)
    runs = store.crawls()
    store.close()
    assert len(runs) >= 3 and all(r.outcome == "complete" for r in runs[1:])
