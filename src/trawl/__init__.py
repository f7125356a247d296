"""Trawl: a self-hosted search engine. See ARCHITECTURE.md for the map."""

__version__ = "0.1.0"
