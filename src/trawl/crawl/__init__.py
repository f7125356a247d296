"""Which URL is fetched next, and when? The frontier and the async crawl loop."""
