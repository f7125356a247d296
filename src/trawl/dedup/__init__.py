"""Duplicates: fingerprints of page text, and clusters of copies with one canonical."""
