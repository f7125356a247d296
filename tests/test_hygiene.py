"""Corpus hygiene end to end: real crawls of loopback sites, then search, explain, evict."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from fixture_sites import Route, SiteServer, html_page, trawl
from trawl.dedup.simhash import distance, simhash
from trawl.index.tantivy_index import IndexReader
from trawl.pipeline.crawl_run import CrawlOutcome, crawl
from trawl.pipeline.upkeep import evict
from trawl.search.searcher import search
from trawl.settings import Settings
from trawl.store.sqlite import SQLiteStore

Serve = Callable[..., SiteServer]


def article(seed: int, words: int = 1200, marker: str = "zebrafinch") -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"word{i}" for i in range(3000)]
    text = [rng.choice(vocabulary) for _ in range(words)]
    text[10] = marker
    return text


def paragraphs(words: list[str]) -> str:
    return "".join(f"<p>{' '.join(words[i : i + 60])}</p>" for i in range(0, len(words), 60))


def settings_for(tmp_path: Path) -> Settings:
    return Settings(data=tmp_path / "data", delay=0.0, parse_workers=0)


async def run(settings: Settings, *urls: str) -> CrawlOutcome:
    store = SQLiteStore(settings.sqlite_path)
    try:
        return await crawl(list(urls), settings, store)
    finally:
        store.close()


def found(settings: Settings, query: str) -> list[str]:
    return [h.url for h in search(IndexReader(settings.index_path), query, settings).hits]


async def test_url_variants_with_identical_text_collapse_to_one_result(
    serve: Serve, tmp_path: Path
) -> None:
    body = paragraphs(article(1))
    page = html_page("Zebra finches", body)
    variants = ["/article", "/article?sessionid=9f8e7d", "/article?sid=abc123", "/print/article"]
    home = "".join(f'<a href="{v}">variant</a>' for v in variants)
    # The plain address is the one the site itself links to most.
    more = "".join(f'<a href="/more{i}">more {i}</a>' for i in range(3))
    routes: dict[str, Route] = {"/": html_page("Home", home + more)}
    routes |= dict.fromkeys(variants, page)
    routes |= {
        f"/more{i}": html_page(f"More {i}", f'<p>see <a href="/article">the article</a> {i}</p>')
        for i in range(3)
    }
    site = serve(routes)
    settings = settings_for(tmp_path)
    outcome = await run(settings, site.url("/"))
    assert outcome.indexed >= 4
    assert found(settings, "zebrafinch") == [site.url("/article")]
    store = SQLiteStore(settings.sqlite_path)
    try:
        copies = store.duplicates_of(site.url("/article"))
        record = store.page(site.url("/print/article"))
    finally:
        store.close()
    assert sorted(copies) == sorted(site.url(v) for v in variants[1:])
    assert record is not None and record.duplicate_of == site.url("/article")
    assert record.indexable and not record.searchable
    # `trawl index` rebuilds from the store: the copies stay out.
    rebuilt = trawl("index", "--data", str(settings.data))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert found(settings, "zebrafinch") == [site.url("/article")]


async def test_a_mirror_with_small_edits_is_found_across_hosts(
    serve: Serve, tmp_path: Path
) -> None:
    words = article(2)
    a = simhash(" ".join(words))
    # A few words edited, so that the fingerprints differ (1 to 3 bits): only the
    # banded near-duplicate lookup can join these two, not the exact text hash.
    for edits in range(1, 40):
        edited = [*words[:600], *(["edited"] * edits), *words[600 + edits :]]
        b = simhash(" ".join(edited))
        if a is not None and b is not None and 0 < distance(a, b) <= 3:
            break
    else:
        raise AssertionError("no small edit moved the fingerprint by 1 to 3 bits")
    original = {
        "/": html_page("Birds", '<a href="/finches">Finches</a><a href="/x">x</a>'),
        "/x": html_page("X", '<p>all about <a href="/finches">finches</a></p>'),
        "/finches": html_page("Zebra finches", paragraphs(words)),
    }
    mirror = {
        "/": html_page("Mirror", '<a href="/copy/finches">Finches</a>'),
        "/copy/finches": html_page("Zebra finches", paragraphs(edited)),
    }
    first = serve(original)
    second = serve(mirror, host="127.0.0.2")
    settings = settings_for(tmp_path)
    # The mirror is crawled first (a crawl of its own): it is the only copy, and
    # searchable. The original, better linked, takes over when it is crawled.
    await run(settings, second.url("/"))
    assert found(settings, "zebrafinch") == [second.url("/copy/finches")]
    await run(settings, first.url("/"))
    assert found(settings, "zebrafinch") == [first.url("/finches")]
    explained = trawl("explain", second.url("/copy/finches"), "--data", str(settings.data))
    assert explained.returncode == 0, explained.stderr
    assert f"duplicate of {first.url('/finches')}" in explained.stdout
    assert "searchable: no" in explained.stdout
    assert "higher authority and quality" in explained.stdout


async def test_the_copy_others_name_as_canonical_wins_even_when_crawled_last(
    serve: Serve, tmp_path: Path
) -> None:
    body = paragraphs(article(3))
    canonical = '<link rel="canonical" href="/original">'
    routes = {
        # /popular is linked from everywhere and declares nothing; /b and /c name
        # /original, which nothing links to: it is found last, through their declarations.
        "/": html_page("Home", '<a href="/popular">a</a><a href="/b">b</a><a href="/c">c</a>'),
        "/popular": html_page("Finches", body),
        "/b": html_page("Finches", body, head=canonical),
        "/c": html_page("Finches", body, head=canonical),
        "/original": html_page("Finches", body),
    }
    site = serve(routes)
    settings = settings_for(tmp_path)
    await run(settings, site.url("/"))
    paths = site.page_paths()
    assert paths.index("/original") > paths.index("/popular")
    assert found(settings, "zebrafinch") == [site.url("/original")]
    explained = trawl("explain", site.url("/original"), "--data", str(settings.data))
    assert "named as canonical (rel=canonical) by 2 other copies" in explained.stdout
    assert site.url("/popular") in explained.stdout


async def test_a_community_page_linking_to_a_result_is_discussed_on_with_its_anchor(
    serve: Serve, tmp_path: Path
) -> None:
    target = {
        "/": html_page("Kiwi site", '<a href="/guide">Guide</a>'),
        "/guide": html_page("Growing kiwis", "<p>The kiwi vine wants a warm wall.</p>"),
    }
    site = serve(target)
    forum = {
        "/": html_page("Forum", '<a href="/forum/thread-1">Kiwi thread</a>'),
        "/forum/thread-1": html_page(
            "Kiwi thread",
            f'<p>Look: <a rel="ugc nofollow" href="{site.url("/guide")}">the best kiwi'
            " guide I found</a></p>",
        ),
    }
    community = serve(forum, host="127.0.0.2")
    settings = settings_for(tmp_path)
    await run(settings, site.url("/"), community.url("/"))
    answer = trawl("search", "kiwi vine", "--json", "--data", str(settings.data))
    assert answer.returncode == 0, answer.stderr
    results = json.loads(answer.stdout)["results"]
    assert results[0]["url"] == site.url("/guide")
    assert results[0]["discussed_on"] == [
        {
            "host": "127.0.0.2",
            "url": community.url("/forum/thread-1"),
            "quote": "the best kiwi guide I found",
        }
    ]


async def test_evict_dry_run_lists_by_rule_and_evict_removes_from_store_and_index(
    serve: Serve, tmp_path: Path
) -> None:
    body = paragraphs(article(4))
    routes = {
        "/": html_page("Home", '<a href="/a">a</a><a href="/a?sid=1">b</a><a href="/gone">c</a>'),
        "/a": html_page("Finches", body),
        "/a?sid=1": html_page("Finches", body),
        "/gone": Route(b"gone", 410, {"Content-Type": "text/html"}),
    }
    site = serve(routes)
    settings = settings_for(tmp_path)
    await run(settings, site.url("/"))
    data = str(settings.data)
    store = SQLiteStore(settings.sqlite_path)
    try:
        # Both copies are linked once from home: the one fetched first is canonical.
        kept, copy = site.url("/a"), site.url("/a?sid=1")
        if store.duplicates_of(copy):
            kept, copy = copy, kept
        assert store.duplicates_of(kept) == [copy]
    finally:
        store.close()
    dry = trawl("evict", "--dry-run", "--data", data)
    assert dry.returncode == 0, dry.stderr
    assert "1  near-duplicate" in dry.stdout and f"e.g. {copy}\n" in dry.stdout
    assert "1  gone" in dry.stdout and site.url("/gone") in dry.stdout
    # The home page is three links and no text, and nothing links to it: low value.
    assert "1  low value" in dry.stdout
    assert "would evict 3 pages" in dry.stdout
    store = SQLiteStore(settings.sqlite_path)
    try:
        assert store.page(copy) is not None
        result = evict(store, settings, dry_run=False)
        assert result.removed == 3
        assert result.counts == {"near-duplicate": 1, "gone": 1, "low value": 1}
        assert store.page(copy) is None
        assert store.page(site.url("/gone")) is None
        assert store.page(kept) is not None
    finally:
        store.close()
    assert found(settings, "zebrafinch") == [kept]


def test_explain_names_a_page_that_is_not_stored_in_a_clear_error(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "data" / "trawl.sqlite").close()
    answer = trawl("explain", "https://nowhere.example/page", "--data", str(tmp_path / "data"))
    assert answer.returncode == 2
    assert "https://nowhere.example/page is not in the store" in answer.stderr
    assert "Traceback" not in answer.stderr
