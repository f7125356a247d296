"""PageRecord -> the fields of one index document. Pure.

Fields and how they are analysed:

    url         raw       stored  the page's identity; upserts delete by this term
    title       en_stem   stored  <title>, else the first H1
    headings    en_stem   stored  H1s, H2s and the meta description
    body        en_stem   stored  main text; stored for snippets
    anchors     en_stem           anchor texts of links from other pages to this one
    url_tokens  en_stem           words of the URL path: /sql-createindex.html -> sql createindex
    host        default           host name split on dots: www.postgresql.org -> www postgresql org
    lang        raw       stored  ISO 639-1 code
    discussed   raw       stored  "Discussed on" entries as JSON, shown with the result
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from urllib.parse import unquote, urlsplit

from trawl.records import Discussion, PageRecord

TEXT_FIELDS = ("title", "headings", "body", "anchors", "url_tokens", "host")
_WORDS = re.compile(r"[^\W_]+")
_NOISE_SUFFIXES = frozenset({"html", "htm", "php", "asp", "aspx", "jsp", "index"})


def index_fields(record: PageRecord, anchors: Sequence[str] = ()) -> dict[str, str]:
    parts = urlsplit(record.url)
    headings = list(record.headings)
    if record.description:
        headings.append(record.description)
    return {
        "url": record.url,
        "title": record.title or (record.headings[0] if record.headings else ""),
        "headings": "\n".join(headings),
        "body": record.text,
        "anchors": "\n".join(anchors),
        "url_tokens": " ".join(url_path_words(parts.path)),
        "host": (parts.hostname or "").replace(".", " "),
        "lang": record.lang or "",
        "discussed": discussions_field(record.discussed_on),
    }


def discussions_field(discussions: Sequence[Discussion]) -> str:
    return json.dumps([[d.host, d.url, d.quote] for d in discussions], ensure_ascii=False)


def discussions_from_field(text: str) -> tuple[Discussion, ...]:
    if not text:
        return ()
    return tuple(Discussion(host, url, quote) for host, url, quote in json.loads(text))


def url_path_words(path: str) -> list[str]:
    """Words of a URL path, without file suffixes that say nothing about the page."""
    words = _WORDS.findall(unquote(path).lower())
    # Keep the joined form too ("create-index" -> "createindex"): seed 002's URL concatenation.
    joined = [w.replace("-", "").replace("_", "") for w in re.split(r"[/.]", unquote(path).lower())]
    extra = [j for j in joined if j and j not in words and _WORDS.fullmatch(j)]
    return [w for w in words + extra if w not in _NOISE_SUFFIXES]
