"""May this URL be fetched, according to the site's robots.txt? Pure, no I/O."""
