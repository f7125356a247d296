"""The only package that knows the order of the stages, and a crawl's life.

    start URLs -> Crawler (frontier, robots, fetch) -> pages.PagePipeline.fetched:
        understand -> parse (extract, dedup fingerprints, quality) -> PageRecord
        -> store.save_page -> index

    crawl_run.py        a crawl from start to end; judges its outcome
    pages.py            each fetched page through the stages, in order
    parse.py            one response: extract, then fingerprints and quality
    crawl_end.py        prune, the corpus batch step, the index, the crawl-log row
    corpus.py           the batch step: PageRank, canonicals, "Discussed on"
    stage_pool.py       parsing and index documents in worker processes
    resource_checks.py  HEAD checks of the pages' resources and of any URLs
    workers.py          one of many workers sharing a store's frontier
    upkeep.py           rebuild the index, re-crawl every site, evict pages

Everything else is a stage that does one thing and knows nothing of its
neighbours.
"""
