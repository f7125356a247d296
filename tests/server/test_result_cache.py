"""The served search's result cache: a repeated request skips search(), and an index
commit makes every older answer unreachable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service_fixtures import index_guide
from trawl.search import searcher
from trawl.search.request import search_request
from trawl.server import api_search, search_pool
from trawl.server.context import Context
from trawl.server.result_cache import ResultCache
from trawl.settings import Settings


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts search() was really run for (the real search, counted)."""
    ran: list[str] = []
    real = searcher.search

    def counted(reader: Any, request: Any, settings: Settings) -> Any:
        ran.append(request.text)
        return real(reader, request, settings)

    monkeypatch.setattr(search_pool, "search", counted)
    return ran


def test_a_repeated_search_is_answered_from_the_cache(tmp_path: Path, searches: list[str]) -> None:
    settings = Settings(data=tmp_path)
    index_guide(settings, range(3))
    ctx = Context(settings)
    first = api_search.run_search(ctx, search_request("tortoise"), source="api")
    again = api_search.run_search(ctx, search_request("tortoise"), source="api")
    other = api_search.run_search(ctx, search_request("tortoise", page=2), source="api")
    assert searches == ["tortoise", "tortoise"]  # the page-2 request is a request of its own
    assert {k: v for k, v in again.items() if k != "took_ms"} == {
        k: v for k, v in first.items() if k != "took_ms"
    }
    assert first["total"] == 3 and other["page"] == 2
    assert ctx.metrics.queries.labels("api")._value.get() == 3  # a cached answer counts too


def test_an_index_commit_is_seen_by_the_next_search(tmp_path: Path, searches: list[str]) -> None:
    settings = Settings(data=tmp_path)
    index_guide(settings, range(3))
    ctx = Context(settings)
    assert api_search.run_search(ctx, search_request("tortoise"), source="api")["total"] == 3
    index_guide(settings, range(3, 5))  # a crawl commits two more pages
    assert api_search.run_search(ctx, search_request("tortoise"), source="api")["total"] == 5
    assert len(searches) == 2


def test_size_zero_turns_the_cache_off(tmp_path: Path, searches: list[str]) -> None:
    settings = Settings(data=tmp_path, search_cache_size=0)
    index_guide(settings, range(3))
    ctx = Context(settings)
    for _ in range(3):
        api_search.run_search(ctx, search_request("tortoise"), source="api")
    assert len(searches) == 3 and len(ctx.results) == 0


def test_the_least_recently_used_answer_goes_first() -> None:
    cache = ResultCache(2)
    cache.put("a", {"n": 1})
    cache.put("b", {"n": 2})
    assert cache.get("a") == {"n": 1}  # a is now the most recent
    cache.put("c", {"n": 3})
    assert cache.get("b") is None
    assert cache.get("a") == {"n": 1} and cache.get("c") == {"n": 3}
