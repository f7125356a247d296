"""Where does the crawl's knowledge live? One store interface; SQLite by default."""
