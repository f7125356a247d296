"""A page's language: declared first (<html lang>, Content-Language), else detected.

Detection uses py3langid, whose model ships inside the package: nothing is
downloaded at run time (trawl.extract.language_model loads it).
"""

from __future__ import annotations

import re
import threading

from trawl.extract.language_model import NO_FEATURES, identifier, rebuilt

MIN_WORDS_TO_DETECT = 5
SAMPLE_CHARS = 400  # enough for a confident guess; detection time grows with it

_PRIMARY = re.compile(r"^\s*([a-zA-Z]{2,3})(?:[-_][a-zA-Z0-9]+)*\s*$")


def normalise_tag(tag: str | None) -> str | None:
    """ "da-DK" -> "da", "en_US" -> "en", "EN" -> "en"; None for anything else."""
    if not tag:
        return None
    first = tag.split(",", 1)[0]
    match = _PRIMARY.match(first)
    return match.group(1).lower() if match else None


def detect_language(html_lang: str | None, content_language: str | None, text: str) -> str | None:
    declared = normalise_tag(html_lang) or normalise_tag(content_language)
    if declared:
        return declared
    sample = text[:SAMPLE_CHARS]
    if len(sample.split()) < MIN_WORDS_TO_DETECT:
        return None
    return _classify(sample)


# The model loads on first use, in whichever thread asks first; the lock makes it
# load once when ``preload`` runs in a thread beside the crawl.
_model_lock = threading.Lock()


def _classify(sample: str) -> str | None:
    with _model_lock:
        try:
            lang, score = identifier().classify(sample)
        except (IndexError, OverflowError):  # tables damaged on disk: written again
            lang, score = rebuilt().classify(sample)
    if score == NO_FEATURES:  # no n-gram of any language (emoji, punctuation): "af"
        return None
    return str(lang)


def preload() -> None:
    """Load the detection model now (about 10 ms once its unpacked copy is cached,
    half a second before), so that a crawl can do it beside its first requests."""
    _classify("warm up")
