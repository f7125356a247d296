"""Nordic pages found by inflected query forms (crawled from a real loopback site), and
queries whose words a host joins (annehathaway.com) finding that host."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fixture_sites import Route, SiteServer, trawl
from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.records import PageRecord
from trawl.search.searcher import search
from trawl.settings import Settings


def page(lang: str, title: str, text: str) -> Route:
    doc = (
        f"<!doctype html><html lang={lang}><head><title>{title}</title></head>"
        f"<body><h1>{title}</h1><p>{text}</p></body></html>"
    )
    return Route(doc.encode())


NORDIC = {
    "/da": page("da-DK", "Bilerne i byen", "Her holder bilerne parkeret langs havnen hele dagen."),
    "/sv": page("sv-SE", "Hundarna i parken", "Hundarna leker i parken varje morgon."),
    "/no": page("nb-NO", "Bøkene på biblioteket", "Bøkene står på hyllene i biblioteket."),
    "/fi": page("fi", "Taloissa asuu", "Taloissa asuu monta perhettä kaupungin keskustassa."),
}
# Inflected forms the pages do not contain, as a person would type them.
QUERIES = [("bil", "/da"), ("hunden", "/sv"), ("boken", "/no"), ("talossa", "/fi")]


@pytest.fixture
def nordic_data(serve: Callable[..., SiteServer], tmp_path: Path) -> Path:
    links = "".join(f'<a href="{p}">{p}</a> ' for p in NORDIC)
    site = serve({"/": page("en", "Home", links), **NORDIC})
    done = trawl("crawl", site.url("/"), "--delay", "0", "--data", str(tmp_path))
    assert done.returncode == 0, done.stderr
    return tmp_path


@pytest.mark.parametrize(("query", "path"), QUERIES)
def test_nordic_pages_are_found_by_inflected_forms(
    nordic_data: Path, query: str, path: str
) -> None:
    found = trawl("search", query, "--json", "--data", str(nordic_data))
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert results and results[0]["url"].endswith(path), (query, results)


def test_lang_operator_restricts_and_analyses(nordic_data: Path) -> None:
    settings = Settings(data=nordic_data)
    reader = IndexReader(settings.index_path)
    assert [h.url[-3:] for h in search(reader, "lang:sv hundar", settings).hits] == ["/sv"]
    assert search(reader, "lang:da hundar", settings).total == 0


def record(url: str, title: str, text: str) -> PageRecord:
    host = url.split("/")[2]
    return PageRecord(
        url=url, host=host, status=200, depth=0, fetched_at=0.0,
        title=title, text=text, lang="en", indexable=True,
    )  # fmt: skip


@pytest.fixture
def hosts(tmp_path: Path) -> Settings:
    settings = Settings(data=tmp_path)
    writer = IndexWriter(settings.index_path, fresh=True)
    writer.add(record("https://annehathaway.com/", "Welcome", "The official site."))
    writer.add(record("https://hathawayarchive.org/", "Photos", "Pictures and press cuttings."))
    writer.add(record("https://anne-hathaway.net/", "Fans", "News for fans."))
    for i in range(5):  # pages that repeat one word of the query
        writer.add(record(f"https://news.example/{i}", "Anne", "anne anne anne hathaway " * 3))
    writer.close()
    return settings


@pytest.mark.parametrize(
    ("query", "host"),
    [
        ("anne hathaway", ("annehathaway.com", "anne-hathaway.net")),
        ("hathaway archive", ("hathawayarchive.org",)),
        ("annehathaway", ("annehathaway.com",)),
    ],
)
def test_url_concatenations_find_hosts_joining_the_words(
    hosts: Settings, query: str, host: tuple[str, ...]
) -> None:
    hits = search(IndexReader(hosts.index_path), query, hosts).hits
    expected = {f"https://{h}/" for h in host}
    assert {h.url for h in hits[: len(host)]} == expected, [h.url for h in hits]


def test_hyphenated_host_is_found_too(hosts: Settings) -> None:
    urls = [h.url for h in search(IndexReader(hosts.index_path), "anne hathaway", hosts).hits]
    assert "https://anne-hathaway.net/" in urls[:3]
