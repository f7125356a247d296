"""PageRecord -> the fields of one index document. Pure.

Text is analysed here, in Python, by the page's language (trawl.analysis),
and handed to the engine as space-separated terms: one analysis for pages and
queries, whatever the language, and the engine only splits on spaces.

    url         raw         the page's identity; upserts delete by this term
    title       terms       <title>, else the first H1
    headings    terms       H1s, H2s and the meta description
    body        terms       main text
    anchors     terms       anchor texts of links from other pages to this one
    aside       terms       visible words the main text left out (a low weight: findable)
    url_tokens  folded      words of the URL path, also joined: /sql-createindex -> sqlcreateindex
    host        folded      host labels, split and whole: a-b.com -> a b ab com
    site        raw         the host and each parent domain, for site:
    lang        raw         ISO 639-1 code
    shape       raw         "long" for a page with headings, over two passages long: its
                            words' proximity weighs more (proximity_long_boost)
    modified_source raw     page, sitemap or http
    modified    date, fast  for after:/before: and sorting by date
    authority, quality  f64, fast   rerank priors
    title_key   u64, fast   key of the folded words of the title's page name (page_name: the
                            site's name around it left out): a navigational title found unread
    home        u64, fast   1 for a site's home page
    name_chars  u64, fast   longest of host and path (hyphens out): shorter than the joined
                            query, neither can hold it, and the page need not be read
    meta        bytes       title, host, lang, modified, published, modified_source, joined
                            by U+001F (ranking reads it often; a result shows the dates)
    text        bytes       the main text, for snippets
    sections    bytes       JSON {"s": [[title, level, anchor, start]] of the headed sections,
                            "p": [[start, section or -1, " distinct terms "]] of the passages}:
                            the best passage gives a result its snippet and deep link
    terms       bytes       the page's distinct terms, for the rerank's coverage
    discussed   bytes       "Discussed on" entries as JSON, shown with the result
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Sequence
from datetime import UTC
from typing import Any
from urllib.parse import unquote, urlsplit

from trawl.analysis.text import (
    fold,
    language_code,
    stem_words,
    words,
    words_with_variants,
)
from trawl.records import Discussion, PageRecord, Section

TEXT_FIELDS = ("title", "headings", "body", "anchors", "url_tokens", "host", "aside")
LONG = "long"  # the shape of a page whose text is cut into passages
_WORDS = re.compile(r"[^\W_]+")
# Between a page's name and the site's name after it, spaced: "a-b" is one word's dash.
_SUFFIX = re.compile(r"\s+[-|\u2014\u2013\u00b7]\s+")  # hyphen, bar, em and en dash, middle dot
_NOISE_SUFFIXES = frozenset({"html", "htm", "php", "asp", "aspx", "jsp", "index"})
SEPARATOR = "\x1f"
_SEPARATOR = SEPARATOR
PASSAGE_CHARS = 1200  # a passage: about four snippets' worth of text


def index_fields(record: PageRecord, anchors: Sequence[str] = ()) -> dict[str, Any]:
    # A collection's documents (doc:ID) have no host or path: not parsed at all.
    web = record.url.partition(":")[0].lower() in {"http", "https"}
    parts = urlsplit(record.url) if web else None
    host, path = (parts.hostname or "", parts.path) if parts else ("", "")
    lang = language_code(record.lang)
    headings = list(record.headings)
    if record.description:
        headings.append(record.description)
    title = record.title or (record.headings[0] if record.headings else "")
    # Words are found once per part: the stems, the title's key and the URL's words.
    title_words, heading_text = words(title), "\n".join(headings)
    # Each part's words, then other spellings of its compounds (analysis.variant_words).
    title_stems = stem_words(words_with_variants(title), lang)
    heading_stems = stem_words(words_with_variants(heading_text), lang) if heading_text else []
    text_stems, section_field = _text_stems(record, lang)
    anchor_stems = stem_words(words_with_variants("\n".join(anchors)), lang) if anchors else []
    aside_stems = stem_words(words_with_variants(record.aside), lang) if record.aside else []
    title_terms = " ".join(title_stems)
    # The title belongs to the text as well: a page whose title holds a word is about it,
    # even when its body is short or empty (measured: CACM nDCG@10 0.40 -> 0.46).
    body_terms = f"{title_terms} {' '.join(text_stems)}"
    url_words = [fold(w) for w in url_path_words(path)] if path else []
    host_terms = host_words(host) if host else []
    # Words left out of the main text are weak evidence of what the page is about: searched,
    # never counted for coverage. A dict, not a set: first-seen order, so a page's document
    # is the same in every process (a set's order follows the process's string hash seed).
    distinct = dict.fromkeys(
        [
            *title_stems,
            *heading_stems,
            *text_stems,
            *anchor_stems,
            *url_words,
            *host_terms,
        ]
    )
    modified = record.modified
    if modified is not None and modified.tzinfo is None:
        modified = modified.replace(tzinfo=UTC)
    # Unit-separator-joined, not JSON: read for a hundred pages a query, and split is cheaper.
    published = record.published
    if published is not None and published.tzinfo is None:
        published = published.replace(tzinfo=UTC)
    # The dates a result shows are here too: answering a search reads the index alone.
    meta = _SEPARATOR.join(
        [
            title.replace(_SEPARATOR, " "),
            host,
            lang,
            modified.isoformat() if modified else "",
            published.isoformat() if published else "",
            record.modified_source or "",
        ]
    )
    fields: dict[str, Any] = {
        "url": record.url,
        "title": title_terms,
        "headings": " ".join(heading_stems),
        "body": body_terms,
        "anchors": " ".join(anchor_stems),
        "aside": " ".join(aside_stems),
        "url_tokens": " ".join(url_words),
        "host": " ".join(host_terms),
        "site": parent_domains(host),
        "lang": lang,
        "shape": LONG if record.sections and len(record.text) > 2 * PASSAGE_CHARS else "",
        "modified_source": record.modified_source or "",
        "authority": float(record.authority),
        "quality": float(record.quality),
        "title_key": title_key(fold(" ".join(words(page_name(title)) or title_words))),
        "home": int(bool(host) and path in _HOME_PATHS),
        "name_chars": name_chars(host, path) if host else 0,
        "meta": meta.encode("utf-8"),
        "text": record.text.encode("utf-8"),
        "sections": section_field.encode("utf-8"),
        "terms": (" " + " ".join(distinct) + " ").encode("utf-8"),
        "discussed": discussions_field(record.discussed_on).encode("utf-8"),
    }
    if modified is not None:
        fields["modified"] = modified
    # An empty value indexes nothing but still costs a conversion and a visit: left out.
    return {name: value for name, value in fields.items() if value not in ("", b"")}


def _text_stems(record: PageRecord, lang: str) -> tuple[list[str], str]:
    """The text's stems, and the sections field (``passages``)."""
    text, sections = record.text, record.sections
    if not sections and len(text) <= 2 * PASSAGE_CHARS:
        return stem_words(words_with_variants(text), lang), ""
    stems: list[str] = []
    rows: list[list[Any]] = []
    for start, end, owner in passages(text, sections):
        part = stem_words(words_with_variants(text[start:end]), lang)
        stems.extend(part)
        rows.append([start, owner, " " + " ".join(dict.fromkeys(part)) + " "])
    heads = [[s.title, s.level, s.anchor, s.start] for s in sections]
    return stems, json.dumps({"s": heads, "p": rows}, ensure_ascii=False)


def passages(text: str, sections: Sequence[Section]) -> list[tuple[int, int, int]]:
    """(start, end, section position or -1) of the text's passages: each section (and the
    text before the first) cut at spaces into parts of about ``PASSAGE_CHARS``.

    A result's snippet and deep link come from its best passage: a search reads a few
    passages, never a whole long page (which cost most of a query's time).
    """
    bounds = [(s.start, position) for position, s in enumerate(sections)]
    if not bounds or bounds[0][0] > 0:
        bounds.insert(0, (0, -1))
    found: list[tuple[int, int, int]] = []
    for (first, owner), (end, _) in itertools.pairwise([*bounds, (len(text), -1)]):
        begin = first
        while end - begin > PASSAGE_CHARS + PASSAGE_CHARS // 2:
            cut = text.find(" ", begin + PASSAGE_CHARS, end)
            if cut == -1:
                break
            found.append((begin, cut, owner))
            begin = cut
        if end > begin:
            found.append((begin, end, owner))
    return found


def page_name(title: str) -> str:
    """The title without a site's name around it: "What is rustc? - The rustc book",
    "Shapes | SUMO", "Intro — Sphinx docs" -> the part before the last separator; "PostgreSQL:
    Documentation: 15: CREATE INDEX" (a path of two colons or more) -> the part after the last.

    A navigational query names the page, not the site around it. Read from the title alone,
    per page: a host's shared affix would need every title of the host before any is indexed.
    """
    last = None
    for last in _SUFFIX.finditer(title):  # noqa: B007 - the last one is wanted
        pass
    if last is not None and title[: last.start()].strip() and title[last.end() :].strip():
        return title[: last.start()]
    prefixed = title.split(": ")
    if len(prefixed) > 2 and prefixed[-1].strip():
        return prefixed[-1]
    return title


def title_key(folded_words: str) -> int:
    """A stable 63-bit key of a title's folded words, space-joined (Python's hash() is salted)."""
    digest = hashlib.blake2b(folded_words.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def name_chars(host: str, path: str) -> int:
    """Characters of the longer of host and path, lower-cased, hyphens removed."""
    return max(len(host.lower().replace("-", "")), len(path.lower().replace("-", "")))


def discussions_field(discussions: Sequence[Discussion]) -> str:
    if not discussions:
        return ""  # most pages: no JSON to write or read
    return json.dumps([[d.host, d.url, d.quote] for d in discussions], ensure_ascii=False)


def discussions_from_field(text: str) -> tuple[Discussion, ...]:
    if not text:
        return ()
    return tuple(Discussion(host, url, quote) for host, url, quote in json.loads(text))


def url_path_words(path: str) -> list[str]:
    """Words of a URL path, without file suffixes that say nothing about the page."""
    found = _WORDS.findall(unquote(path).lower())
    # Keep the joined form too ("create-index" -> "createindex"): seed 002's URL concatenation.
    joined = [w.replace("-", "").replace("_", "") for w in re.split(r"[/.]", unquote(path).lower())]
    extra = [j for j in joined if j and j not in found and _WORDS.fullmatch(j)]
    return [w for w in found + extra if w not in _NOISE_SUFFIXES]


def host_words(host: str) -> list[str]:
    """Host labels split at hyphens: anne-hathaway.com -> anne hathaway annehathaway com."""
    out: list[str] = []
    for label in host.lower().split("."):
        parts = words(label)
        out.extend(fold(p) for p in parts)
        if len(parts) > 1:
            out.append(fold("".join(parts)))
    return out


def parent_domains(host: str) -> list[str]:
    """www.postgresql.org -> www.postgresql.org, postgresql.org, org."""
    labels = host.lower().split(".") if host else []
    return [".".join(labels[i:]) for i in range(len(labels))]


_HOME_PATHS = frozenset({"", "/", "/index.html", "/index.htm", "/index.php"})
