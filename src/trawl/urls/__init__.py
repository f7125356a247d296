"""What is a URL's identity, and may we crawl it? Pure functions, no I/O."""
