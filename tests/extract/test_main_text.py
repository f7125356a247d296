"""Main text without navigation, headers, footers and boilerplate (trawl.extract.main_text)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.extract.main_text import main_text

REPO = Path(__file__).resolve().parents[2]
BENCHMARK = REPO.parent / "shared" / "data" / "article-extraction-benchmark"

PARAGRAPHS = [
    "The city council voted on Tuesday to extend the tram line to the harbour, a project"
    " that has been debated for more than a decade and that will cost about 80 million.",
    "Supporters say the line will take thousands of cars off the roads every day, while"
    " critics worry about the noise, the cost and the years of building work ahead.",
    "Construction is expected to start next spring, and the first trams should run in"
    " three years, the mayor said after the vote, adding that tickets would not cost more.",
]


def page(article: str, *, head: str = "<title>Tram line to the harbour - City News</title>") -> str:
    """A news page: the given article inside the furniture every site repeats."""
    return f"""<!doctype html><html><head>{head}</head><body>
    <header class="site-header"><a href="/">City News</a><p>Your daily paper since 1901</p></header>
    <nav><ul><li><a href="/politics">Politics</a></li><li><a href="/sport">Sport</a></li>
      <li><a href="/culture">Culture</a></li></ul></nav>
    <div class="cookie-banner">We use cookies to improve your experience on our website.
      By browsing you agree to our use of cookies. <a href="/privacy">Privacy</a></div>
    <main><article>{article}</article>
      <aside class="sidebar"><h3>Most read</h3><p>Bakery wins a prize for the third year
        in a row, and the baker is proud of it.</p></aside>
      <section id="comments"><h3>Comments</h3>
        <div class="comment"><p>I have been waiting for this tram for twenty years, finally
          someone does something about the traffic in this town!</p></div></section>
    </main>
    <footer><p>Copyright 2024 City News, all rights reserved, registered in the city.</p>
      <a href="/contact">Contact</a></footer>
    </body></html>"""


ARTICLE = "<h1>Tram line to the harbour</h1>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)


def test_article_paragraphs_kept_one_per_line() -> None:
    assert main_text(page(ARTICLE)).splitlines() == PARAGRAPHS


@pytest.mark.parametrize(
    "boilerplate",
    [
        "City News",  # header
        "Your daily paper",  # header
        "Politics",  # nav
        "cookies",  # cookie banner
        "Bakery",  # aside
        "waiting for this tram",  # comments
        "Copyright",  # footer
        "Contact",  # footer
    ],
)
def test_furniture_dropped(boilerplate: str) -> None:
    assert boilerplate not in main_text(page(ARTICLE))


def test_headline_repeating_the_title_dropped() -> None:
    # The title is indexed on its own; repeated as the first line it is noise.
    assert "Tram line to the harbour" not in main_text(page(ARTICLE))


def test_links_list_inside_the_article_dropped() -> None:
    related = (
        '<ul class="links"><li><a href="/a">Bus fares to rise next year</a></li>'
        '<li><a href="/b">New bridge opens in the north of the city</a></li>'
        '<li><a href="/c">Harbour festival draws record crowds</a></li></ul>'
    )
    share = '<div class="share-tools"><a href="/fb">Share on Facebook</a></div>'
    text = main_text(page(ARTICLE + related + share))
    assert "Bus fares" not in text
    assert "Share on Facebook" not in text
    assert text.splitlines() == PARAGRAPHS


def test_hidden_elements_dropped() -> None:
    hidden = (
        '<div style="display: none">Subscribe now to read the full story, only 1 euro</div>'
        "<p hidden>An old version of this paragraph that the site hides from readers.</p>"
    )
    text = main_text(page(ARTICLE + hidden))
    assert "Subscribe" not in text
    assert "old version" not in text


def test_inline_markup_never_splits_a_word() -> None:
    article = "<p><b>T</b>he council <a href='/v'>vot</a>ed, <i>finally</i>, on the tram line.</p>"
    text = main_text(page(article + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)))
    assert text.splitlines()[0] == "The council voted, finally, on the tram line."


def test_paragraphs_written_as_text_and_br_in_a_div() -> None:
    article = f'<div class="entry">{PARAGRAPHS[0]}<br><br>{PARAGRAPHS[1]}<br>{PARAGRAPHS[2]}</div>'
    assert main_text(page(article)).splitlines() == PARAGRAPHS


def test_article_in_a_wrapper_with_an_unlikely_class_name() -> None:
    # "widget" and "sidebar" usually name furniture; here they wrap the article itself.
    article = '<div class="widget Blog"><div class="post-body">' + ARTICLE + "</div></div>"
    assert main_text(page(article)).splitlines() == PARAGRAPHS


def test_article_split_into_sections() -> None:
    sections = "".join(
        f'<section class="chunk"><div class="body"><p>{p}</p><p>{p}</p></div></section>'
        f'<div class="ad">Advertisement</div>'
        for p in PARAGRAPHS
    )
    text = main_text(page(sections))
    assert text.splitlines() == [p for p in PARAGRAPHS for _ in range(2)]


def test_broken_html_still_gives_the_paragraphs() -> None:
    broken = (
        "<html><body><div id=content><p>"
        + "<p>".join(PARAGRAPHS)
        + "<div><span>unclosed <b>bold</i> & stray </td></tr> tags"
    )
    lines = main_text(broken).splitlines()
    assert lines[:3] == PARAGRAPHS


@pytest.mark.parametrize("html", ["", "   \n ", "<html></html>", "<!-- only a comment -->"])
def test_nothing_to_find_gives_empty_text(html: str) -> None:
    assert main_text(html) == ""


def test_plain_text_without_markup_is_its_own_main_text() -> None:
    assert main_text("Just a line of text with no markup around it.") == (
        "Just a line of text with no markup around it."
    )


def test_url_is_accepted() -> None:
    assert main_text(page(ARTICLE), url="https://news.example/tram").splitlines() == PARAGRAPHS


DOCS_PAGE = """<!doctype html><html><head><title>CREATE INDEX - Manual</title></head><body>
<div class="navheader"><table><tr><td><a href="prev.html">Prev</a></td>
  <td><a href="index.html">Home</a></td><td><a href="next.html">Next</a></td></tr></table></div>
<div class="sidebar"><ul><li><a href="a.html">Tutorial</a></li><li><a href="b.html">SQL</a></li>
  <li><a href="c.html">Server</a></li><li><a href="d.html">Reference</a></li></ul></div>
<div class="refentry" id="SQL-CREATEINDEX">
<h2>Synopsis</h2>
<pre class="synopsis">CREATE [ UNIQUE ] INDEX [ CONCURRENTLY ] name ON table ( column )</pre>
<h2>Description</h2>
<p>CREATE INDEX constructs an index on the specified column(s) of the specified relation,
which can be a table or a materialized view. Indexes are primarily used to enhance
database performance, though inappropriate use can result in slower performance.</p>
<h2>Parameters</h2>
<table class="table"><tr><td>UNIQUE</td><td>Causes the system to check for duplicate values
in the table when the index is created, if data already exist, and each time data is added.</td>
</tr><tr><td>CONCURRENTLY</td><td>When this option is used, the index is built without taking
any locks that prevent concurrent inserts, updates, or deletes on the table.</td></tr></table>
<h2>Examples</h2>
<p>To create a unique B-tree index on the column title in the table films, run the command
below; the index is then used by queries that filter on the title.</p>
<pre class="programlisting">CREATE UNIQUE INDEX title_idx ON films (title);</pre>
</div>
<div class="navfooter"><a href="prev.html">Prev</a> <a href="next.html">Next</a></div>
</body></html>"""


def test_docs_page_gives_its_reference_content() -> None:
    text = main_text(DOCS_PAGE)
    for wanted in (
        "CREATE INDEX constructs an index",
        "CREATE [ UNIQUE ] INDEX [ CONCURRENTLY ] name ON table ( column )",
        "Causes the system to check for duplicate values",
        "the index is built without taking any locks",
        "CREATE UNIQUE INDEX title_idx ON films (title);",
        "Parameters",
    ):
        assert wanted in text
    for unwanted in ("Prev", "Tutorial", "Reference"):
        assert unwanted not in text


def test_list_page_gives_its_lists() -> None:
    # A changelog is lists, no prose: the lists are the content.
    items = [
        "Fixed a crash when loading networks with more than one million edges",
        "Added an option to write the routes of every vehicle to a file",
        "The configuration format changed; use the conversion script for old files",
    ]
    html = (
        "<html><body><nav><a href='/'>Home</a> <a href='/docs'>Docs</a></nav>"
        "<div class='main-area'><h1>Changes in version 1.2</h1><ul>"
        + "".join(f"<li>{item}</li>" for item in items)
        + "</ul></div></body></html>"
    )
    text = main_text(html)
    for item in items:
        assert item in text
    assert "Docs" not in text


def _deep_nesting_documents() -> list[str]:
    depth = 20_000
    return [
        "<div>" * depth + PARAGRAPHS[0] + "</div>" * depth,
        "<div>" + f"<div>{PARAGRAPHS[1]}" * depth,
        "<p>" + "<span>word, " * depth,
        "<table><tr><td>" + f"<table><tr><td>{PARAGRAPHS[2]}" * 2_000,
    ]


def test_deep_nesting_is_linear_not_a_hang() -> None:
    # A quadratic walk over 20,000 levels takes many minutes; a linear one well under a
    # second. The work runs in a child process with a generous deadline, so a loaded
    # machine cannot fail the test, and a hang cannot stall the suite.
    child = (
        "import json, sys\n"
        "from trawl.extract.main_text import main_text\n"
        "print(json.dumps([bool(main_text(html)) for html in json.load(sys.stdin)]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", child],
        input=json.dumps(_deep_nesting_documents()),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout) == [True, True, True, True]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "<p>",
                "</p>",
                "<div class=comment>",
                "</div>",
                "<nav>",
                "<table><tr><td>",
                "<br>",
                "<li>",
                "<a href=x>",
                "</a>",
                "<span hidden>",
                "<!--",
                "-->",
                "<script>",
                "&amp;",
            ]
        )
        | st.text(max_size=40),
        max_size=60,
    )
)
def test_never_raises_on_any_markup(pieces: list[str]) -> None:
    assert isinstance(main_text("".join(pieces)), str)


# -- the benchmark ------------------------------------------------------------------

Score = Callable[[Mapping[str, str], Mapping[str, str]], tuple[float, float, float]]
Loader = Callable[[Path], tuple[dict[str, str], dict[str, str]]]


def bench_extraction() -> ModuleType:
    """bench/extraction.py, the one home of the benchmark's metric, loaded by path."""
    spec = importlib.util.spec_from_file_location(
        "bench_extraction", REPO / "bench" / "extraction.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


needs_benchmark = pytest.mark.skipif(
    not (BENCHMARK / "ground-truth.json").is_file(),
    reason=f"article-extraction benchmark not found at {BENCHMARK}",
)


@needs_benchmark
def test_metric_reproduces_the_published_figures() -> None:
    bench = bench_extraction()
    score = cast(Score, bench.article_score)
    _, truths = cast(Loader, bench.load_pages)(BENCHMARK)
    outputs = cast(Callable[[Path], dict[str, dict[str, str]]], bench.published_outputs)(BENCHMARK)
    published = {"trafilatura": 0.958, "readability": 0.922, "readability_js": 0.947}
    published["html-text"] = 0.665
    for name, f1 in published.items():
        assert round(score(outputs[name], truths)[0], 3) == f1, name


@needs_benchmark
def test_main_text_f1_on_the_benchmark() -> None:
    # A floor against regressions only: the extractor was written looking at these
    # pages, so this figure flatters it (bench/extraction.py reports the 5-fold one).
    bench = bench_extraction()
    pages, truths = cast(Loader, bench.load_pages)(BENCHMARK)
    assert len(pages) == 181
    predictions = {key: main_text(html) for key, html in pages.items()}
    f1, precision, recall = cast(Score, bench.article_score)(predictions, truths)
    # Trafilatura, the best published open-source extractor, scores 0.958 here.
    assert f1 >= 0.95, (f1, precision, recall)


def test_corpus_loader_reads_both_layouts_and_splits_by_hash(tmp_path: Path) -> None:
    # --corpus: one folder per page, the expectation as HTML (mozilla/readability's
    # test pages) or as text (newspaper4k's); each page in a half fixed by its name.
    bench = bench_extraction()
    load = cast(
        Callable[[Path], dict[str, tuple[dict[str, str], dict[str, str]]]], bench.load_corpus
    )
    assert load(tmp_path / "absent") == {}
    for n in range(8):
        folder = tmp_path / f"page-{n}"
        folder.mkdir()
        (folder / "source.html").write_text(page(ARTICLE), encoding="utf-8")
        if n % 2:
            html = f"<div><h1>Tram</h1><p>{PARAGRAPHS[n % 3]}</p><figure>Photo</figure></div>"
            (folder / "expected.html").write_text(html, encoding="utf-8")
        else:
            (folder / "expected.txt").write_text(PARAGRAPHS[n % 3], encoding="utf-8")
    (tmp_path / "no-expectation").mkdir()
    (tmp_path / "no-expectation" / "source.html").write_text(page(ARTICLE), encoding="utf-8")
    halves = load(tmp_path)
    half = cast(Callable[[str], str], bench.corpus_half)
    found = {key: name for name, (pages, _) in halves.items() for key in pages}
    assert found == {f"page-{n}": half(f"page-{n}") for n in range(8)}
    assert set(found.values()) == {"tuning", "reporting"}
    truths = {key: text for _, (_, t) in halves.items() for key, text in t.items()}
    assert truths["page-1"].strip() == PARAGRAPHS[1]  # the headline and figure left out
    assert truths["page-2"] == PARAGRAPHS[2]


DocsSets = Callable[[], dict[str, tuple[dict[str, str], dict[str, str]]]]


@pytest.mark.skipif(
    not (REPO.parent / "shared" / "data" / "site-sumo-docs").is_dir(),
    reason="documentation sites of shared/data not found",
)
def test_main_text_f1_on_held_out_docs_pages() -> None:
    # The gate: pages no rule or threshold was tuned on (150 of each site, ground truth
    # from the container the site generator puts the content in). Measured at the
    # change that made this the gate: PostgreSQL 0.973, SUMO 0.981; trafilatura 0.949
    # and 0.975 on the same pages (bench/RESULTS.md).
    bench = bench_extraction()
    sites = cast(DocsSets, bench.docs_pages)()
    assert len(sites) == 2
    for name, (pages, truths) in sites.items():
        assert len(pages) >= 100, name
        predictions = {key: main_text(html) for key, html in pages.items()}
        f1, precision, recall = cast(Score, bench.article_score)(predictions, truths)
        assert f1 >= 0.965, (name, f1, precision, recall)


@needs_benchmark
def test_folds_are_fixed_by_page_id() -> None:
    # Decided before any tuning and never by order: the same page, the same fold.
    bench = bench_extraction()
    fold_of = cast(Callable[[str], int], bench.fold_of)
    _, truths = cast(Loader, bench.load_pages)(BENCHMARK)
    folds = [fold_of(key) for key in truths]
    assert fold_of("042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856") == folds[0]
    assert sorted(set(folds)) == [0, 1, 2, 3, 4]
    assert min(folds.count(n) for n in range(5)) >= 25


def test_renamed_pages_keep_their_text_and_repeats() -> None:
    # The bench's "names unseen" set: every class and id word renamed, one new name per
    # word (repeated cards still repeat), nothing else of the markup touched.
    renamed = cast(Callable[[str], str], bench_extraction().renamed)
    html = (
        "<div class=\"post-content main\" id=story><p class='lede'>Words.</p></div>"
        '<div class="card x"><a href="/a">A</a></div><div class="card y">B</div>'
    )
    out = renamed(html)
    assert "post-content" not in out and "story" not in out and "lede" not in out
    assert "card" not in out and 'href="/a"' in out
    card = "x" + hashlib.sha256(b"card").hexdigest()[:6]
    assert out.count(f'class="{card} x') == 2
    assert re.sub(r"<[^>]*>", "", out) == re.sub(r"<[^>]*>", "", html)


# -- rules that make the scorer generalise (each test fails without its rule) ---------


def test_list_in_the_prose_with_some_links_kept() -> None:
    # An itinerary naming its places as links is part of the article; only a list that
    # is mostly links (a box of related stories) is cut.
    items = [  # a third of the list's text is links
        '<a href="/k">The Elbkantinchen</a> in Geesthacht',
        "The landing stages on the Dove Elbe",
        '<a href="/h">The dog beach at Stein</a>, with lunch nearby',
    ]
    article = ARTICLE + "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"
    text = main_text(page(article))
    assert "The Elbkantinchen in Geesthacht" in text
    assert "The dog beach at Stein" in text


def test_heading_of_a_cut_box_of_links_dropped() -> None:
    related = (
        "<h3>You might also like</h3><ul>"
        '<li><a href="/a">Bus fares to rise next year across the whole region</a></li>'
        '<li><a href="/b">New bridge opens in the north of the city after delays</a></li>'
        "</ul>"
    )
    lines = main_text(page(ARTICLE + related)).splitlines()
    assert lines == PARAGRAPHS


def test_heading_followed_by_its_section_kept() -> None:
    article = (
        "<h2>The vote</h2>"
        + f"<p>{PARAGRAPHS[0]}</p>"
        + "<h2>What comes next</h2><h3>Building work</h3>"
        + f"<p>{PARAGRAPHS[1]}</p><p>{PARAGRAPHS[2]}</p>"
    )
    lines = main_text(page(article)).splitlines()
    assert lines == ["The vote", PARAGRAPHS[0], "What comes next", "Building work", *PARAGRAPHS[1:]]


def test_empty_section_heading_and_sentence_heading() -> None:
    # "Gallery" announces nothing (another h2 follows); a heading ending as a sentence is
    # a standfirst set in a heading's type, and stays.
    article = (
        "<h4>The council voted to extend the tram line to the harbour on Tuesday.</h4>"
        + "<h2>Gallery</h2><h2>The vote</h2>"
        + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    )
    lines = main_text(page(article)).splitlines()
    assert lines == [
        "The council voted to extend the tram line to the harbour on Tuesday.",
        "The vote",
        *PARAGRAPHS,
    ]


def test_lede_in_the_article_header_kept() -> None:
    # The masthead is furniture; the <header> of the <article> holds its standfirst.
    lede = "Work on the line starts next spring, and the first trams run in three years."
    article = f"<header><h1>Tram line to the harbour</h1><p>{lede}</p></header>" + ARTICLE
    text = main_text(page(article))
    assert text.splitlines() == [lede, *PARAGRAPHS]
    assert "Your daily paper" not in text  # the page's own header still goes


def _competing(first: str, second: str) -> str:
    """Two containers of prose in separate wrappers: the second has more of it."""
    more = "".join(f"<p>{p}</p>" for p in [*PARAGRAPHS, PARAGRAPHS[0]]).replace("council", "board")
    return (
        f"<html><body><div><div><div {first}>{ARTICLE}</div></div></div>"
        f"<div><div><div {second}>{more}</div></div></div></body></html>"
    )


def test_schema_org_article_body_preferred() -> None:
    assert "The city council voted" not in main_text(_competing('class="a"', 'class="b"'))
    text = main_text(_competing('itemprop="articleBody"', 'class="b"'))
    assert text.splitlines() == ["Tram line to the harbour", *PARAGRAPHS]


def test_article_in_an_unlikely_wrapper_beside_a_list_of_labels() -> None:
    # Blogger wraps the post in "widget Blog"; the sidebar's labels are a long list.
    # Without the post, the first pass finds no prose, only lists: prose wins the retry.
    labels = "".join(f'<li><a href="/l{n}">Artist number {n}</a> ({n})</li>' for n in range(60))
    html = (
        '<html><body><div class="widget Blog"><div class="post-body">'
        + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
        + f'</div></div><div class="labels"><ul>{labels}</ul></div></body></html>'
    )
    assert main_text(html).splitlines() == PARAGRAPHS


def test_layout_class_naming_a_sidebar_is_not_furniture() -> None:
    # "fixed-sidebar-layout" names the page's grid, which here holds the article.
    links = "".join(
        f'<li><a href="/s{n}">Another story from the archive, {n}</a></li>' for n in range(40)
    )
    forum = (
        "<div class='forum'><p>Readers have written to us, many times, about the tram, over the"
        " years and we print a few of their letters here every week for all to read</p>"
        "<p>The letters page is open to everyone who lives in the city or works here and we"
        " are always glad to hear from new readers about the things they care about</p></div>"
    )
    html = (
        '<html><body><div><div class="c-fixed-sidebar-layout"><div class="col"><article>'
        + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
        + f"</article></div></div>{forum}<ul class='archive'>{links}</ul></div></body></html>"
    )
    assert main_text(html).splitlines() == PARAGRAPHS


def test_box_named_related_goes_whatever_content_word_it_also_has() -> None:
    # "main-box" would save it as content; "related-box" says what it is.
    related = (
        '<div class="main-box vce-related-box"><p>Bus fares will rise next year across the'
        " whole region, the transport authority announced on Monday evening.</p></div>"
    )
    text = main_text(page(ARTICLE + related))
    assert "Bus fares" not in text
    assert text.splitlines() == PARAGRAPHS


def test_standfirst_beside_the_wrapper_of_the_body_kept() -> None:
    # The body sits in a "group" wrapper that adds only a share bar; the standfirst is
    # the wrapper's sibling, not the body's (and the column holds more than prose).
    lede = (
        "One of the smallest wine regions of the country has a long tradition as both an"
        " innovator and an iconoclast."
    )
    body = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    html = (
        "<html><body><div id='page'><div class='col'>"
        f"<h4>Culture</h4><p class='intro'>{lede}</p><ul class='topics'>"
        "<li><a href='/w'>Wine</a></li><li><a href='/t'>Travel and tourism</a></li></ul>"
        f"<div class='group'><div class='longText'>{body}</div><div>Share</div></div>"
        "</div></div></body></html>"
    )
    assert main_text(html).splitlines() == [lede, *PARAGRAPHS]


def test_article_footer_goes_though_named_after_the_article() -> None:
    # "article-footer" names the article, but a <footer> holds what follows it: the
    # comment policy, "powered by" lines, tags. A div so named would be kept.
    footer = (
        '<footer class="article-footer"><p>As you comment, please be respectful of other'
        " commenters and other viewpoints, and keep to the subject of the story.</p></footer>"
    )
    text = main_text(page(ARTICLE + footer))
    assert "As you comment" not in text
    assert text.splitlines() == PARAGRAPHS


@pytest.mark.parametrize(
    "names",
    [
        'class="swiper-container rail"',  # a carousel of teasers
        'class="carousel"',
        'id="emailSignup"',  # a newsletter form's pitch
        'class="noprint"',  # what the site itself leaves out of a printout
        'class="timestamp"',
        'class="overlay"',
        'class="slides"',  # a slideshow's captions, inside the article
        'class="gallery"',
    ],
)
def test_boxes_named_as_furniture_dropped(names: str) -> None:
    box = (
        f"<div {names}><p>Let our news meet your inbox, with the stories that matter"
        " delivered every weekday morning, and more.</p></div>"
    )
    # Between two paragraphs, inside the article: only its name can tell it apart.
    text = main_text(
        page(ARTICLE.replace(f"<p>{PARAGRAPHS[1]}</p>", box + f"<p>{PARAGRAPHS[1]}</p>"))
    )
    assert "news meet your inbox" not in text
    assert text.splitlines() == PARAGRAPHS


def test_page_of_link_lists_keeps_its_visible_text() -> None:
    # A category page: its content is teasers, every one a link, which both passes cut
    # as boxes of links. Its text less the furniture is better than nothing to index.
    sections = "".join(
        f"<h2>Section {s}</h2><ul>"
        + "".join(
            f'<li><a href="/t{s}{n}">Cordless drill number {s}{n} tested against the rest</a></li>'
            for n in range(5)
        )
        + "</ul>"
        for s in range(3)
    )
    html = page(f"<div>{sections}</div>")
    text = main_text(html)
    assert "Cordless drill number 13 tested" in text
    assert "Politics" not in text  # the furniture still goes
    # Cut off mid-tag, as a dropped connection leaves it: the same fallback holds.
    assert "Cordless drill number 01 tested" in main_text(html[: html.index("/t12")])


@pytest.mark.parametrize(
    ("names", "hidden"),
    [
        ("sr-only", True),  # a screen-reader label
        ("d-none d-print-block", True),  # the citation shown in a printout only
        ("hidden", True),
        ("post-text hidden", True),  # hidden wins over a content word
        ("d-none d-md-block", False),  # shown on wider screens: part of the page
        ("hidden md:block", False),  # the same in Tailwind
    ],
)
def test_elements_hidden_by_a_class(names: str, hidden: bool) -> None:
    box = (
        f"<div class='{names}'><p>Cite this article as the tram story, City News, printed"
        " and distributed in the year of the vote, all rights reserved.</p></div>"
    )
    article = ARTICLE.replace(f"<p>{PARAGRAPHS[1]}</p>", box + f"<p>{PARAGRAPHS[1]}</p>")
    text = main_text(page(article))
    assert ("Cite this article" not in text) is hidden
    assert all(p in text for p in PARAGRAPHS)


def test_soft_hyphens_do_not_split_words() -> None:
    # "&shy;" marks where a browser may break a long word; left in, it splits the word
    # for any tokeniser, and "Straßenbahnlinie" is no longer found.
    article = ARTICLE.replace("council", "coun&shy;cil").replace("harbour, a", "har\u00adbour, a")
    text = main_text(page(article))
    assert text.splitlines() == PARAGRAPHS


@pytest.mark.parametrize(
    ("intro", "site", "kept"),
    [
        ("Our picks for the ride:", "https://shop.example", True),
        ("", "https://shop.example", False),  # under a heading: a box of links
        ("Also read:", "https://news.example", False),  # more of the site's own pages
        ("Also read:", "", False),
        ("Broken links:", "http://[::1", False),  # never raises on a broken URL
    ],
)
def test_list_of_links_the_prose_leads_into_kept(intro: str, site: str, kept: bool) -> None:
    # A list of links is a box of them, unless a paragraph of the article leads into
    # it and its links lead off the site (the article's picks, its sources).
    links = "".join(
        f'<li><a href="{site}/{n}">{name}</a></li>'
        for n, name in enumerate(["Folding bicycle for the tram", "Rain jacket with hood"])
    )
    lead = f"<p><strong>{intro}</strong></p>" if intro else "<h3>More</h3>"
    article = ARTICLE + lead + f"<ul>{links}</ul>" + f"<p>{PARAGRAPHS[0]}</p>"
    head = '<title>Tram</title><link rel="canonical" href="https://www.news.example/tram">'
    text = main_text(page(article, head=head))
    assert ("Folding bicycle for the tram" in text) is kept
    assert all(p in text for p in PARAGRAPHS)


@pytest.mark.parametrize(
    ("hosts", "canonical", "kept"),
    [
        (["bikes.example", "rain.example", "maps.example"], False, True),
        (["bikes.example", "rain.example", "maps.example"], True, True),
        (["news.example", "www.news.example", "news.example"], True, False),  # the site's own
        (["shop.example", "shop.example", "shop.example"], False, False),  # one shop's pages
        (["", "", ""], False, False),  # relative links: the site's own pages
    ],
)
def test_list_of_links_to_other_sites_under_a_heading_kept(
    hosts: list[str], canonical: bool, kept: bool
) -> None:
    # An "About this site" page lists the tools it is written with under headings of
    # its own ("Mac Apps": BBEdit, Acorn, ... each a link to its maker); a box of
    # related links under its heading leads to the site's own pages.
    names = ["Folding bicycle for the tram", "Rain jacket with hood", "Map of the new line"]
    links = "".join(
        f'<li><a href="{"https://" + host if host else ""}/{n}">{name}</a></li>'
        for n, (host, name) in enumerate(zip(hosts, names, strict=True))
    )
    article = ARTICLE + f"<h2>What I ride with</h2><ul>{links}</ul><p>{PARAGRAPHS[0]}</p>"
    head = "<title>Tram</title>"
    if canonical:
        head += '<link rel="canonical" href="https://www.news.example/tram">'
    text = main_text(page(article, head=head))
    assert ("Folding bicycle for the tram" in text) is kept
    assert all(p in text for p in PARAGRAPHS)


@pytest.mark.parametrize(("quote", "kept"), [("twitter-tweet", True), ("pull-quote", False)])
def test_post_embedded_from_a_social_network_kept(quote: str, kept: bool) -> None:
    # The site wraps an embedded tweet in a box named like a share bar; the post is
    # quoted by the article. Any other box so named is still furniture.
    post = (
        f'<div class="social-media-embed"><blockquote class="{quote}"><p>The harbour'
        " tram is finally coming, twenty years after the first plan was drawn up.</p>"
        '&mdash; Mayor (@mayor) <a href="https://x.example/1">May 1, 2024</a>'
        "</blockquote></div>"
    )
    article = ARTICLE.replace(f"<p>{PARAGRAPHS[1]}", post + f"<p>{PARAGRAPHS[1]}")
    text = main_text(page(article))
    assert ("twenty years after the first plan" in text) is kept
    assert all(p in text for p in PARAGRAPHS)


@pytest.mark.parametrize(
    ("last", "kept"),
    [
        ("Beitragsbild: Titelseite der Zeitung vom 2.4.2019, Ausriss.", False),
        ("Photo credit: City archive", False),
        ("Photo: " + PARAGRAPHS[0], True),  # a paragraph that starts so is prose
    ],
)
def test_credit_of_the_photo_at_the_end_dropped(last: str, kept: bool) -> None:
    text = main_text(page(ARTICLE + f"<p>{last}</p>"))
    assert (last in text) is kept
    assert all(p in text for p in PARAGRAPHS)


def test_block_of_the_article_in_a_second_column_kept() -> None:
    # TYPO3 sets an article as blocks, one of them in a second column, wrapped deeper
    # than the levels a paragraph gives points to: the column scores as its block.
    box = [
        "Our reporter looked it up in the archive: the first tram to the harbour ran in"
        " 1901, drawn by horses, and carried fishermen and their catch to the market.",
        "The horses were replaced by electric trams in 1912, and the line, loved by the"
        " town, closed in 1961, when buses, cheaper to run, took over.",
    ]
    crumbs = " &rsaquo; ".join(
        f'<a href="/{n}">{name}</a>'
        for n, name in enumerate(
            ["Home", "Topics", "Environment and climate today", "Transport in the city"]
        )
    )
    html = f"""<html><head><title>Tram</title></head><body><nav><a href="/">Home</a></nav>
    <div class="content"><div class="crumbs">{crumbs}</div>
    <div class="col1"><div class="block"><article><h1>Tram line</h1><p>{PARAGRAPHS[0]}</p>
      </article></div><div class="block"><article><div class="text"><p>{PARAGRAPHS[1]}</p>
      <p>{PARAGRAPHS[2]}</p></div></article></div></div>
    <div class="col2"><div class="frame"><div class="block"><article><p>{box[0]}</p>
      <p>{box[1]}</p></article></div><div class="block"><div>© City archive, 1930</div>
      </div></div></div></div><footer>Copyright</footer></body></html>"""
    text = main_text(html)
    assert all(p in text for p in PARAGRAPHS + box)
    assert "Environment and climate" not in text


def test_decomposed_letters_come_out_composed() -> None:
    # "geprüft" written as "u" and a combining diaeresis (as some editors save it): the
    # text must hold the composed form a reader types, or a quoted search misses it.
    decomposed = PARAGRAPHS[1].replace("ahead", "gepru\u0308ft ahead")
    article = ARTICLE.replace(PARAGRAPHS[1], decomposed)
    text = main_text(page(article))
    assert PARAGRAPHS[1].replace("ahead", "geprüft ahead") in text.splitlines()
    assert "\u0308" not in text


@pytest.mark.parametrize("overlay", ["", "&nbsp;"])
def test_row_of_teaser_cards_inside_the_article_cut(overlay: str) -> None:
    # "Most popular": cards of one class, each a title and an excerpt with a link over
    # the card (empty, so link density never sees it), are teasers of other pages.
    teasers = [
        ("Bakery wins a prize", "The baker is proud of it, and so is the town."),
        ("Harbour festival returns", "Boats, music and food by the water again."),
        ("Library opens on Sundays", "Readers asked for it for years, and now it is."),
    ]
    cards = "".join(
        f'<div class="card"><a class="overlay" href="/{n}">{overlay}</a>'
        f'<div class="title">{title}</div>'
        f'<div class="excerpt">{excerpt}</div></div>'
        for n, (title, excerpt) in enumerate(teasers)
    )
    text = main_text(page(ARTICLE + f'<div class="popular"><h3>Most popular</h3>{cards}</div>'))
    assert text.splitlines() == PARAGRAPHS


def test_paragraphs_written_as_divs_with_links_kept() -> None:
    # The same tag and class three times, each with a link, is also how some sites write
    # paragraphs: text of their own around the links tells them from cards.
    paragraphs = "".join(
        f'<div class="para">{p[:40]}<a href="/{n}">{p[40:60]}</a>{p[60:]}</div>'
        for n, p in enumerate(PARAGRAPHS)
    )
    prose = "".join(f"<p>{p}</p>" for p in PARAGRAPHS * 2)  # the divs are a third of it
    article = f"<h1>Tram line to the harbour</h1>{prose}<div>{paragraphs}</div>"
    assert main_text(page(article)).splitlines() == PARAGRAPHS * 3


@pytest.mark.parametrize("label", ["Comments", "3 comments", "Post Comment (+)", "Kommentare"])
def test_label_of_a_comment_box_at_the_end_dropped(label: str) -> None:
    # The box went with its class; its label, outside it, would end the article.
    assert main_text(page(ARTICLE + f"<div><b>{label}</b></div>")).splitlines() == PARAGRAPHS


def test_the_word_comments_inside_the_text_kept() -> None:
    # A section of a manual may be called so: only the article's last lines are labels.
    article = f"<h1>Tram line</h1><p>{PARAGRAPHS[0]}</p><h2>Comments</h2><p>{PARAGRAPHS[1]}</p>"
    assert main_text(page(article)).splitlines() == [PARAGRAPHS[0], "Comments", PARAGRAPHS[1]]


def test_article_not_widened_over_a_row_of_teasers() -> None:
    # Beside the story, teasers of other stories whose excerpts read as paragraphs: the
    # wrapper of both adds mostly "prose", but prose of other pages.
    excerpt = (
        "The council also discussed the budget for the coming year, with long debates on"
        " schools, roads and the new swimming pool that the north of the city wants."
    )
    tiles = "".join(
        f'<div class="tile"><div class="head"><a href="/{n}">Story {n}</a></div>'
        f'<div class="text">{excerpt}</div></div>'
        for n in range(8)
    )
    html = (
        "<html><head><title>Tram line</title></head><body><div>"
        f'<div class="story">{"".join(f"<p>{p}</p>" for p in PARAGRAPHS * 2)}</div>'
        f'<div class="more">{tiles}</div></div></body></html>'
    )
    assert main_text(html).splitlines() == PARAGRAPHS * 2


def test_article_set_in_several_article_blocks_kept_whole() -> None:
    # A CMS that puts each content block in an <article> of its own (TYPO3's content
    # elements): headless blocks side by side are one article, not several.
    blocks = [PARAGRAPHS[:1], PARAGRAPHS[1:]]
    html = (
        "<html><head><title>Tram line</title></head><body>"
        '<nav><a href="/">Home</a> <a href="/news">News</a></nav><div class="content">'
        + "".join(
            '<div class="block"><article><div class="text">'
            + "".join(f"<p>{p}</p>" for p in block)
            + "</div></article></div>"
            for block in blocks
        )
        + "</div></body></html>"
    )
    assert main_text(html).splitlines() == PARAGRAPHS


# Replies of a WordPress-style thread: author, date, text, a reply link; the class
# names of a theme nobody tuned for.
REPLIES = [
    (
        "thelastfan",
        "November 19, 2019 at 6:34 am",
        "It is a good thing we have no trams"
        " left, because this line is a dumpster fire and the council knows it.",
    ),
    (
        "joetoronto",
        "November 19, 2019 at 6:44 am",
        "It is time for the council to come"
        " to grips with reality, the harbour will never see a tram, not in our lifetime.",
    ),
    (
        "theprocess12",
        "November 19, 2019 at 6:58 am",
        "As usual too many promises by the"
        " mayor. The tram to the airport was promised too, and where is it now, I ask?",
    ),
    (
        "harbourview",
        "November 19, 2019 at 7:02 am",
        "Finally some good news for those of"
        " us who live by the water and sit in traffic every morning, well done council.",
    ),
]


def thread(heading: str, names: str = "x2ab6b4") -> str:
    replies = "".join(
        f'<li class="xc44bb2 {names}"><article class="{names}"><footer class="x9c8d86">'
        f'<b class="x0f1e18">{author}</b> <span>says:</span>'
        f'<div class="x39b0cb"><a href="#c{n}"><time>{when}</time></a></div></footer>'
        f'<div class="x2c4c0c"><p>{text}</p></div>'
        f'<a class="x5e2bc8" href="?replytocom={n}">Reply</a></article></li>'
        for n, (author, when, text) in enumerate(REPLIES)
    )
    return (
        f'<div class="xa1"><div class="xb2"><h2>{heading}</h2>'
        f'<ol class="xd3">{replies}</ol></div></div>'
    )


def unnamed_page(article: str, after: str) -> str:
    """A blog page whose boxes are named in words no rule knows (renamed classes)."""
    return (
        "<html><head><title>Tram line to the harbour</title></head><body>"
        f'<div class="x71a"><div class="x0c2">{article}</div>{after}</div></body></html>'
    )


@pytest.mark.parametrize(
    "heading",
    [
        "4 responses to “Tram line to the harbour”",
        "Top Rated Comments",
        "Comments",
        "12 thoughts on “Tram line”",
        "Kommentare (4)",
    ],
)
def test_comment_thread_under_its_heading_dropped_without_its_class_names(heading: str) -> None:
    # The renamed benchmark pages: without "comment" in a class name the thread came in,
    # and where its replies outweighed a short post they were taken instead of it.
    short = "<h1>Tram line to the harbour</h1>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS[:2])
    assert main_text(unnamed_page(short, thread(heading))).splitlines() == PARAGRAPHS[:2]
    assert main_text(unnamed_page(ARTICLE, thread(heading))).splitlines() == PARAGRAPHS


def test_section_under_a_comment_heading_kept_unless_it_is_replies() -> None:
    # "Final thoughts" is an article's section, and a manual's "Comments" section of
    # paragraphs is no thread: only replies of one shape go.
    article = (
        f"<h1>Tram line</h1><p>{PARAGRAPHS[0]}</p><h2>Final thoughts</h2>"
        f"<div>{PARAGRAPHS[1]}</div><div>{PARAGRAPHS[2]}</div>"
    )
    assert main_text(unnamed_page(article, "")).splitlines() == [
        PARAGRAPHS[0],
        "Final thoughts",
        PARAGRAPHS[1],
        PARAGRAPHS[2],
    ]
    article = f"<h1>Tram line</h1><p>{PARAGRAPHS[0]}</p><h2>Comments</h2><p>{PARAGRAPHS[1]}</p>"
    assert main_text(unnamed_page(article, "")).splitlines() == [
        PARAGRAPHS[0],
        "Comments",
        PARAGRAPHS[1],
    ]


def test_comment_form_dropped_without_its_class_names() -> None:
    # "Leave a Reply": a form to write in is no part of the article, whatever its box is
    # called; only its labels would be left once its text box goes.
    form = (
        '<div class="x8a1"><form action="/wp-comments-post.php" method="post">'
        "<p>Your email address will not be published. Required fields are marked *</p>"
        '<p><label for="c">Your thoughts on the tram line, in a few words</label>'
        '<textarea id="c" name="comment"></textarea></p>'
        '<p><label for="a">Name</label> <input id="a" name="author"></p>'
        "<p>Save my name, email, and website in this browser for the next time I comment.</p>"
        '<p><input type="submit" value="Post Comment"></p></form></div>'
    )
    assert main_text(unnamed_page(ARTICLE, form)).splitlines() == PARAGRAPHS


def test_page_wrapped_whole_in_a_form_kept() -> None:
    # ASP.NET wraps the whole page in one <form>: a search box's text area in it does not
    # make the article a comment form.
    article = ARTICLE + '<textarea name="q"></textarea>'
    html = (
        unnamed_page(article, "")
        .replace("<body>", "<body><form>")
        .replace("</body>", "</form></body>")
    )
    assert main_text(html).splitlines() == PARAGRAPHS


def test_list_of_teaser_cards_beside_the_article_not_taken() -> None:
    # "Related posts" as a list, each item one card (title, date, excerpt, a link): the
    # wrapper of article and list adds mostly "prose", but prose of other pages.
    excerpt = (
        "Jetzt heißt es schnell sein: the council also discussed the budget for the coming"
        " year, with long debates on schools, roads and the new swimming pool."
    )
    cards = "".join(
        f'<li><article class="x5c1"><h3><a href="/{n}">Story {n}</a></h3>'
        f'<div class="x7d2">Monday | {n + 1}. July 2019</div>'
        f'<div class="x9e3"><p>{excerpt}</p></div></article></li>'
        for n in range(4)
    )
    html = (
        "<html><head><title>Tram line</title></head><body><div><div>"
        f'<div class="x1">{"".join(f"<p>{p}</p>" for p in PARAGRAPHS)}</div>'
        f'<div class="x2"><ul>{cards}</ul></div></div></div></body></html>'
    )
    assert main_text(html).splitlines() == PARAGRAPHS


def test_box_of_headlines_with_excerpts_beside_the_article_not_gathered() -> None:
    # "Breaking News": a list whose items are a headline link and an excerpt, in a box
    # beside the article's; its excerpts read as paragraphs, and it joined the article.
    excerpt = (
        "NEW DELHI: the council also discussed the budget for the coming year, with long"
        " debates on schools, roads and the new swimming pool the north wants."
    )
    items = "".join(
        f'<li><a href="/{n}">Headline of another story, number {n}</a><span>{excerpt}</span></li>'
        for n in range(10)
    )
    html = (
        "<html><head><title>Tram line</title></head><body><div>"
        f'<div class="x1"><div><b>Breaking News</b></div><div><ul>{items}</ul></div></div>'
        f'<div class="x2">{"".join(f"<p>{p}</p>" for p in PARAGRAPHS * 2)}</div>'
        "</div></body></html>"
    )
    assert main_text(html).splitlines() == PARAGRAPHS * 2


def test_list_of_links_with_notes_in_the_article_kept() -> None:
    # Items of a link and words of the item's own are the article's list: a teaser's
    # excerpt sits in an element of its own beside the headline.
    items = "".join(
        f'<li><a href="/r{n}">Report {n}</a>: what the council read on trams and the'
        f" harbour before the vote, part {n}</li>"
        for n in range(4)
    )
    article = f"{ARTICLE}<ul>{items}</ul>"
    assert main_text(page(article)).splitlines()[-4:] == [
        f"Report {n}: what the council read on trams and the harbour before the vote, part {n}"
        for n in range(4)
    ]


def test_photo_and_its_caption_in_a_box_dropped_without_figure() -> None:
    # A figure written as a box of a photo and a short text: the caption reads as a
    # paragraph ("In this ... file photo, ..."), and beside a short article it won.
    caption = (
        "In this Dec. 12, 2006, file photo, made available by the city, the mayor, left,"
        " and the head of the harbour board, right, walk along the old tram tracks. (AP)"
    )
    article = (
        "<h1>Tram line to the harbour</h1>"
        f'<div class="x3f"><img src="/tram.jpg" alt="Tram"><p>{caption}</p></div>'
        f'<div class="x4a">{"".join(f"<p>{p}</p>" for p in PARAGRAPHS[:2])}</div>'
    )
    assert main_text(unnamed_page(article, "")).splitlines() == PARAGRAPHS[:2]


def test_paragraph_beside_an_icon_with_more_text_kept() -> None:
    # A box of a picture and several paragraphs is the article's, not a figure.
    article = (
        '<h1>Tram line</h1><div class="x3f"><img src="/icon.png" alt="">'
        + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
        + "</div>"
    )
    assert main_text(unnamed_page(article, "")).splitlines() == PARAGRAPHS


def test_a_box_of_the_same_photo_twice_and_a_paragraph_is_no_figure() -> None:
    # Two <img> of one source serialise alike: the box holds two photos and a paragraph,
    # not one photo and its caption. (Told apart by their HTML, the images of a box
    # were each compared with all the others: 20,000 took 478 s.)
    photos = '<img src="/icon.png" alt="">' * 2
    article = (
        f'<h1>Tram line</h1><div class="x3f">{photos}<p>{PARAGRAPHS[0]}</p></div>'
        f'<div class="x4a">{"".join(f"<p>{p}</p>" for p in PARAGRAPHS[1:])}</div>'
    )
    assert main_text(unnamed_page(article, "")).splitlines() == PARAGRAPHS


def test_thread_of_a_reply_inside_a_reply_dropped() -> None:
    # "2 comments": the second is the author's answer, nested in the first; the heading
    # sits alone in a wrapper of its own.
    (author, when, text), (author2, when2, text2) = REPLIES[:2]
    answer = (
        f'<div class="xc44bb2"><div class="x29d"><span>{author2}</span> <span>{when2}</span>'
        f'<div class="x2c4"><p>{text2}</p></div></div></div>'
    )
    replies = (
        f'<div class="xc44bb2"><div class="x29d"><span>{author}</span> <span>{when}</span>'
        f'<div class="x2c4"><p>{text}</p></div><a href="#r">Reply</a></div>{answer}</div>'
    )
    after = (
        f'<div class="x618"><div class="x161"><h4>2 comments</h4></div>'
        f'<div class="x2b4">{replies}</div></div>'
    )
    assert main_text(unnamed_page(ARTICLE, after)).splitlines() == PARAGRAPHS


def test_page_of_many_comment_headings_keeps_its_article() -> None:
    # Hostile: each comment heading reads the rest of its section, and thousands of them
    # cost their square (3,000: 177 s before the cap of MAX_THREADS, 0.8 s after).
    noise = "".join(
        f'<div><h3>Comments</h3></div><div class="a"><p>reply {n}, a few words</p></div>'
        for n in range(300)
    )
    html = (
        f"<html><body><div>{''.join(f'<p>{p}</p>' for p in PARAGRAPHS)}</div>{noise}</body></html>"
    )
    assert main_text(html).splitlines()[:3] == PARAGRAPHS


def test_photo_gallery_dropped_by_its_slide_counter_without_its_class_names() -> None:
    # One news template's gallery: the slide, its caption twice (for the viewer), the
    # credit, a counter "Image 1 of 8" in spans and "Back to Gallery", in boxes whose
    # class names say nothing; the caption reads as the article's prose.
    caption = (
        "The mayor, left, and the head of the harbour board walk along the old tram tracks"
        " on Tuesday, Nov. 19, 2019, before the council voted to extend the line."
    )
    gallery = (
        '<div class="x9a1"><div class="x9a2"><ul><li><div class="x9a3">'
        '<img src="/tram-1.jpg" alt=""></div>'
        f'<div class="x9a4"><p>{caption}</p><span>Photo: Ann Lee, AP</span></div></li></ul></div>'
        '<div class="x9a5"><div class="x9a6"><div class="x9a7">'
        f"<div><p>{caption}</p><span>Photo: Ann Lee, AP</span></div>"
        '<div class="x9a8">Image <span>1</span> <span>of</span> <span>/</span> <span>8</span>'
        '</div><div class="x9a9">Back to Gallery</div></div></div></div></div>'
    )
    article = (
        "<h1>Tram line to the harbour</h1>" + gallery + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    )
    assert main_text(unnamed_page(article, "")).splitlines() == PARAGRAPHS


def test_paragraph_naming_an_image_of_a_series_kept() -> None:
    # Only a box whose whole text is a counter is one: prose may say "Image 2 of 5".
    said = "Image 2 of 5 shows the harbour before the tram tracks were laid in 1905."
    article = (
        '<h1>Tram line</h1><div class="x3f"><img src="/map.png" alt="">'
        + "".join(f"<p>{p}</p>" for p in [*PARAGRAPHS, said])
        + "</div>"
    )
    assert main_text(unnamed_page(article, "")).splitlines() == [*PARAGRAPHS, said]


def test_caption_ending_in_its_picture_credit_dropped() -> None:
    # A tabloid's captions sit between the paragraphs in boxes named in words no rule
    # knows, each with a photo; only their credit, "(Image: GETTY)", tells them apart.
    captions = [
        "The council voted on Tuesday after a long night of debate (Image: GETTY )",
        "Trams last ran to the harbour in 1962 (Image: City Archive)",
        "A tram waits at the depot, Tuesday, Nov. 19, 2019. (AP Photo/Ann Lee, File)",
    ]
    article = "<h1>Tram line to the harbour</h1>" + "".join(
        f'<p>{p}</p><div class="x5c"><div class="x5d"><img src="/t{i}.jpg" alt=""></div>'
        f'<span class="x5e">{caption}</span></div>'
        for i, (p, caption) in enumerate(zip(PARAGRAPHS, captions, strict=True))
    )
    assert main_text(unnamed_page(article, "")).splitlines() == PARAGRAPHS


def test_sentence_ending_in_parentheses_kept() -> None:
    # Only a credit's words before the colon mark a caption: "(see: ...)" is prose.
    said = "The mayor wrote about the line in the city's newsletter (see: Trams, page 4)"
    article = "<h1>Tram line</h1>" + "".join(f"<p>{p}</p>" for p in [*PARAGRAPHS, said])
    assert main_text(unnamed_page(article, "")).splitlines() == [*PARAGRAPHS, said]


@pytest.mark.parametrize(
    "dateline",
    [
        "Published 11:34 PM EST Nov 19, 2019",
        "Updated: 18 Nov 2019 9:38 pm",
        "Posted on November 19, 2019 by Admin",
        "Submitted on Mon, 2019-01-21 13:49",  # Drupal's own line
        "Šodien, 17:40",  # "Today, 17:40", as a Latvian news site dates its items
        "Yesterday 09:05",
    ],
)
def test_line_that_only_dates_the_article_dropped(dateline: str) -> None:
    # The date is the page's metadata; in a box no rule names it came in as a line.
    article = f'<h1>Tram line to the harbour</h1><div class="x7b">{dateline}</div>' + "".join(
        f"<p>{p}</p>" for p in PARAGRAPHS
    )
    assert main_text(unnamed_page(article, "")).splitlines() == PARAGRAPHS


@pytest.mark.parametrize(
    "date",
    [
        "23.10.2018",  # a German motoring club's test report, under its headline
        "2019-01-21 13:49",
        "10/23/2018, 5:04 PM",
        "(23.10.2018)",
        "November 20, 2019 - 11:28 AMT",  # an Armenian news agency's, in English
        "Monday, November 18, 2019",
        "18 novembre 2019 à 10h30",
        "lunes, 18 de noviembre de 2019",
    ],
)
def test_line_that_is_only_a_date_dropped(date: str) -> None:
    # The date in a <time> or a box of its own: the page's metadata, not its text.
    article = f'<h1>Tram line to the harbour</h1><div class="x7b"><time>{date}</time></div>'
    article += "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    assert main_text(unnamed_page(article, "")).splitlines() == PARAGRAPHS


@pytest.mark.parametrize(
    "stamp",
    [
        "24. März 2004, 19:49 | Genesis",  # a fan site's news item: date, time, author
        "Freitag | 14. Juni 2019 | 15:49 VON Sina Giebel IN Fashion | 0 COMMENTS",
        "By HNN Staff | November 18, 2019 at 2:26 PM HST - Updated November 18 at 4:46 PM",
    ],
)
def test_line_of_particulars_with_a_time_above_the_text_dropped(stamp: str) -> None:
    article = f'<h1>Tram line to the harbour</h1><div class="x7b">{stamp}</div>'
    article += "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    assert main_text(unnamed_page(article, "")).splitlines() == PARAGRAPHS


def test_line_with_bars_and_a_time_inside_the_text_kept() -> None:
    # A timetable's line in the article's text, below its first paragraph, is text.
    said = "Harbour | 6:10 | 6:40 | 7:10, then every half hour until midnight"
    article = "".join(f"<p>{p}</p>" for p in [PARAGRAPHS[0], said, *PARAGRAPHS[1:]])
    lines = main_text(unnamed_page(article, "")).splitlines()
    assert lines == [PARAGRAPHS[0], said, *PARAGRAPHS[1:]]


def test_dates_in_a_table_a_list_a_heading_or_the_text_kept() -> None:
    # A release table's dates, a timeline's items and a diary's days are the text; so
    # is the date that opens a later entry of a log (a project's "Following Work" page).
    table = "<table><tr><th>Release</th><th>Date</th></tr>"
    table += "<tr><td>2.0</td><td>23.10.2018</td></tr></table>"
    items = "<ul><li>2019-01-21</li><li>2019-02-04</li></ul>"
    entry = "<h2>Web pages</h2><p><em>07.03.2011</em></p><p>May 2019</p>"
    paragraphs = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    article = f"<h2>12.05.2019</h2>{paragraphs}{entry}{paragraphs}{table}{items}"
    lines = main_text(unnamed_page(article, "")).splitlines()
    assert "12.05.2019" in lines and "23.10.2018" in lines and "07.03.2011" in lines
    assert "May 2019" in lines
    assert "2019-01-21" in lines and "2019-02-04" in lines


def test_sentence_opening_with_today_and_a_time_kept() -> None:
    said = "Today the first tram left the depot at 9:30, an hour late, with the mayor on board."
    article = "<h1>Tram line</h1>" + "".join(f"<p>{p}</p>" for p in [*PARAGRAPHS, said])
    assert main_text(unnamed_page(article, "")).splitlines() == [*PARAGRAPHS, said]


CHINESE_PARAGRAPHS = [
    "新华社北京11月17日电 记者17日从国家卫生健康委获悉，近阶段，相关部门持续依托短缺药品供应保障"  # noqa: RUF001
    "工作会商联动机制，深入优化短缺药品实时监测预警与分级应对体系，全力保障人民群众临床用药需求。",  # noqa: RUF001
    "据了解，短缺药品信息监测共享正在多维度推进。国家卫生健康委依托全国公立医疗卫生机构短缺药品信息"  # noqa: RUF001
    "直报系统开展短缺药品监测预警与分级应对。工业和信息化部对临床必需易短缺药品的生产供应情况开展动态监测。",
    "同时，多环节发挥短缺药品清单抓手作用。国家医保局密切监测国家短缺药品清单和临床必需易短缺药品重点监测"  # noqa: RUF001
    "清单药品价格和配送情况。国家药监局加快短缺药品审评审批进度，持续开展短缺药品基础信息标记和数据管理。",  # noqa: RUF001
]


def test_chinese_editor_and_read_next_lines_after_the_article_dropped() -> None:
    # A Chinese news page closes its article with the editor in charge, a button to
    # report an error and "Read the next one:", inside the article's own box.
    tail = "<p>【纠错】 【责任编辑:张樵苏 】</p><p>阅读下一篇：</p>"  # noqa: RUF001
    article = "".join(f"<p>{p}</p>" for p in CHINESE_PARAGRAPHS) + tail
    assert main_text(unnamed_page(article, "")).splitlines() == CHINESE_PARAGRAPHS


def test_chinese_paragraph_opening_with_the_word_for_correction_kept() -> None:
    said = "纠错是一种美德，编辑部每天都会认真核对读者的来信，并在第二天的报纸上刊登更正。"  # noqa: RUF001
    article = "".join(f"<p>{p}</p>" for p in [*CHINESE_PARAGRAPHS, said])
    assert main_text(unnamed_page(article, "")).splitlines() == [*CHINESE_PARAGRAPHS, said]


def test_short_chinese_article_not_taken_for_the_whole_page() -> None:
    # Two paragraphs of Chinese are 200 characters, a news item's worth of words: the
    # retry for "almost nothing found" counts letters, and took the whole page instead.
    short = CHINESE_PARAGRAPHS[:2]
    article = "".join(f"<p>{p}</p>" for p in short)
    more = "".join(
        f'<div class="x4d{n}"><a href="/news/{n}">{title}</a> <span>11月{n}日</span></div>'
        for n, title in enumerate(
            ["国家医保局发布新规", "药品价格监测持续推进", "多地开展用药保障"]
        )
    )
    assert main_text(unnamed_page(article, more)).splitlines() == short


@pytest.mark.parametrize(("href", "dropped"), [("javascript:void(0)", True), ("/signup", False)])
def test_paywall_box_of_buttons_after_the_article_dropped(href: str, dropped: bool) -> None:
    # A paywall's notice and its buttons, links that script drives and that lead to no
    # page, in a box no rule names; a box whose links lead to pages is left to the
    # other rules.
    box = (
        '<div class="x5e1"><p>Subscribers only. Sign up to read the rest of this story.</p>'
        f'<div class="x9a0"><p>Choose a plan</p><a href="{href}">Sign up now</a></div>'
        f'<div class="x9a1"><p>Already a member?</p><a href="{href}">Log in</a></div></div>'
    )
    article = "<h1>Tram line</h1>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS) + box
    text = main_text(unnamed_page(article, ""))
    assert ("Subscribers only" not in text) is dropped
    assert ("Log in" not in text) is dropped
    assert all(p in text for p in PARAGRAPHS)


def test_box_with_one_link_that_script_drives_kept() -> None:
    said = "The new line will run along the quay, past the old customs house, to the ferry."
    box = f'<div class="x5e2"><p>{said}</p><a href="javascript:void(0)">Show the map</a></div>'
    article = "<h1>Tram line</h1>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS) + box
    assert said in main_text(unnamed_page(article, ""))


@pytest.mark.parametrize(
    ("inside", "dropped"),
    [
        (
            "<strong>DON'T MISS</strong><br><a href='/a'>Bakery wins a prize for the third"
            " year [PICS]</a><br><a href='/b'>Harbour ferry cancelled again [LATEST]</a>",
            True,
        ),
        # A linked picture and its credit are one line of links, not a list of them.
        (
            "<a href='/big.jpg'><img src='/small.jpg' alt='The mayor'></a><br>"
            "<em>Portrait by <a href='https://photo.example'>Ann Lee</a></em>",
            False,
        ),
    ],
)
def test_paragraph_of_links_one_a_line_dropped(inside: str, dropped: bool) -> None:
    # "Related" written as a paragraph: a label, then a headline link a line, <br>
    # between them, in the article's own box and with no class to tell it.
    article = "<h1>Tram line</h1>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    article = article.replace(f"<p>{PARAGRAPHS[2]}", f"<p>{inside}</p><p>{PARAGRAPHS[2]}")
    text = main_text(unnamed_page(article, ""))
    assert ("Harbour ferry" not in text and "Portrait by" not in text) is dropped
    assert all(p in text for p in PARAGRAPHS)


def test_subheading_named_subheader_kept() -> None:
    # "header" names a page's masthead; a "subheader" is a heading inside the article.
    heading = '<h2 class="subheader" id="the-harbour">The harbour waits</h2>'
    article = ARTICLE.replace(f"<p>{PARAGRAPHS[2]}", heading + f"<p>{PARAGRAPHS[2]}")
    assert main_text(page(article)).splitlines() == [
        *PARAGRAPHS[:2],
        "The harbour waits",
        PARAGRAPHS[2],
    ]


def test_changelog_line_opening_with_updated_kept() -> None:
    # A changelog says "Updated" too; without a time or a year it is content.
    items = [f"Updated GDAL library Issue #96{n}" for n in range(10, 16)]
    article = "<h1>Changes</h1><ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"
    assert set(items) <= set(main_text(unnamed_page(article, "")).splitlines())


def test_the_pages_host_is_looked_up_once_however_many_lists_it_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each list led into by "...:" asks for the page's host, a search of the whole
    # tree: asked once per list, a long manual (the Cargo book's print.html, 491 lists)
    # spent 4 of its 6 s there. Counted, not timed: the real look-up, wrapped.
    from trawl.extract import main_text as module

    calls: list[str | None] = []
    real = module._page_host

    def counted(node: object) -> str | None:
        calls.append(host := real(node))  # type: ignore[arg-type]
        return host

    monkeypatch.setattr(module, "_page_host", counted)
    lists = "".join(
        f"<p>{PARAGRAPHS[i % 3]} Read these:</p>"
        f'<ul><li><a href="https://other{i}.example/a">other {i}</a></li>'
        f'<li><a href="https://more{i}.example/b">more {i}</a></li></ul>'
        for i in range(40)
    )
    html = (
        '<html><head><link rel="canonical" href="https://news.example/story"></head>'
        f"<body><article>{lists}</article></body></html>"
    )
    assert "other 39" in main_text(html)
    assert 1 <= len(calls) <= 2  # once per cleaning pass, not once per list
    assert set(calls) == {"news.example"}
