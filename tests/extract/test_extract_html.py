"""HTML -> ParsedPage (trawl.extract.html.parse_html)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.extract.html import _BLOCK_TAG, locate_sections, parse_html
from trawl.extract.links import MAX_TEXT_CHARS as MAX_ANCHOR_CHARS
from trawl.records import Link, ParsedPage

PAGE = "https://example.com/dir/page.html"


def parse(html: str | bytes, **kwargs: str | None) -> ParsedPage:
    body = html.encode("utf-8") if isinstance(html, str) else html
    return parse_html(body, PAGE, **kwargs)


def link_urls(page: ParsedPage) -> list[str]:
    return [link.url for link in page.links]


# -- title ------------------------------------------------------------------------


def test_title_in_head() -> None:
    page = parse("<html><head><title>  Hello \n  World </title></head><body>x</body></html>")
    assert page.title == "Hello World"


def test_title_inside_body() -> None:
    page = parse("<html><head></head><body><title>Lost title</title><p>x</p></body></html>")
    assert page.title == "Lost title"


def test_svg_title_is_not_the_page_title() -> None:
    html = (
        "<html><body><svg><title>Menu icon</title><path d='M0'/></svg>"
        "<title>Real title</title></body></html>"
    )
    assert parse(html).title == "Real title"


def test_svg_title_alone_gives_no_title() -> None:
    assert parse("<body><svg><g><title>Icon</title></g></svg><p>text</p></body>").title == ""


def test_first_non_empty_title_wins() -> None:
    html = "<head><title> </title></head><body><title>Second</title><title>Third</title></body>"
    assert parse(html).title == "Second"


def test_title_entities_are_decoded() -> None:
    assert parse("<title>Fish &amp; Chips &lt;3</title>").title == "Fish & Chips <3"


def test_no_title() -> None:
    assert parse("<p>no title here</p>").title == ""


# -- description and headings ---------------------------------------------------------


def test_meta_description() -> None:
    html = "<head><meta name='description' content='  A short\n summary. '></head>"
    assert parse(html).description == "A short summary."


@pytest.mark.parametrize("name", ["Description", "DESCRIPTION", " description "])
def test_meta_description_name_is_case_insensitive(name: str) -> None:
    html = f"<head><meta name='keywords' content='k'><meta name='{name}' content='d'></head>"
    assert parse(html).description == "d"


def test_no_meta_description() -> None:
    assert parse("<head><meta name='keywords' content='k'></head>").description == ""


def test_h1_and_h2_lists_in_document_order() -> None:
    html = (
        "<body><h1>Main</h1><h2>First  part</h2><p>x</p><h2>Second <em>part</em></h2>"
        "<h1></h1><h3>Not listed</h3></body>"
    )
    page = parse(html)
    assert page.h1 == ("Main",)
    assert page.h2 == ("First part", "Second part")


# -- main text ----------------------------------------------------------------------


def test_text_excludes_script_style_nav_noscript_and_friends() -> None:
    html = """<html><head><title>T</title><script>var head = 1;</script></head><body>
        <nav><a href="/menu">Menu item</a></nav>
        <script>var secret = "script text";</script>
        <style>.x { color: red }</style>
        <noscript>Enable JavaScript</noscript>
        <template><p>template text</p></template>
        <svg><text>svg text</text></svg>
        <p>Visible paragraph.</p>
    </body></html>"""
    page = parse(html)
    assert page.text == "Visible paragraph."
    for hidden in ("secret", "color", "Enable", "template", "svg text", "Menu item", "head"):
        assert hidden not in page.text


def test_nav_links_are_still_extracted() -> None:
    html = "<body><nav><a href='/menu'>Menu item</a></nav><p>Body</p></body>"
    page = parse(html)
    assert page.links == (Link("https://example.com/menu", "Menu item", False),)
    assert "Menu" not in page.text


def test_text_whitespace_is_collapsed_and_blocks_are_separated() -> None:
    page = parse("<body><p>one\n\n  two</p><p>three</p><div>four</div></body>")
    assert page.text == "one two three four"
    assert page.word_count == 4


def test_text_entities_are_decoded() -> None:
    assert parse("<body><p>caf&eacute; &amp; cr&egrave;me</p></body>").text == "café & crème"


def test_inline_markup_does_not_split_words() -> None:
    page = parse("<body><p><span class='dropcap'>T</span>he un<em>believ</em>able</p></body>")
    assert page.text == "The unbelievable"


def test_empty_document() -> None:
    page = parse(b"")
    assert page.title == ""
    assert page.text == ""
    assert page.word_count == 0
    assert page.links == ()
    assert page.lang is None


# -- links ------------------------------------------------------------------------


def test_links_are_resolved_against_the_page_url() -> None:
    html = """<body>
        <a href="sibling.html">Sibling</a>
        <a href="../up.html">Up</a>
        <a href="/root">Root</a>
        <a href="//cdn.example.net/file">CDN</a>
        <a href="https://other.org/x#frag">Other</a>
        <a href="?page=2&utm_source=nav">Next</a>
    </body>"""
    assert link_urls(parse(html)) == [
        "https://example.com/dir/sibling.html",
        "https://example.com/up.html",
        "https://example.com/root",
        "https://cdn.example.net/file",
        "https://other.org/x",
        "https://example.com/dir/page.html?page=2",
    ]


def test_links_are_resolved_against_base_href() -> None:
    html = """<html><head><base href="https://static.example.org/docs/v2/"></head><body>
        <a href="intro.html">Intro</a><a href="/top">Top</a></body></html>"""
    assert link_urls(parse(html)) == [
        "https://static.example.org/docs/v2/intro.html",
        "https://static.example.org/top",
    ]


def test_relative_base_href_is_resolved_against_the_page() -> None:
    html = "<head><base href='/other/'></head><body><a href='x.html'>x</a></body>"
    assert link_urls(parse(html)) == ["https://example.com/other/x.html"]


def test_unusable_base_href_is_ignored() -> None:
    html = "<head><base href='javascript:void(0)'></head><body><a href='x.html'>x</a></body>"
    assert link_urls(parse(html)) == ["https://example.com/dir/x.html"]


def test_anchor_text_is_collapsed() -> None:
    page = parse("<a href='/a'>  Read\n   <b>more</b>  </a>")
    assert page.links[0].anchor == "Read more"


def test_img_alt_is_the_anchor_when_there_is_no_text() -> None:
    html = "<a href='/home'><img src='logo.png' alt='  Example   home '></a>"
    assert parse(html).links == (
        Link("https://example.com/home", "Example home", False),
        Link("https://example.com/dir/logo.png", "Example home", False, "img", "src"),
    )


def test_text_wins_over_img_alt() -> None:
    html = "<a href='/home'><img src='logo.png' alt='Logo'> Home page</a>"
    assert parse(html).links[0].anchor == "Home page"


def test_link_without_any_text_has_an_empty_anchor() -> None:
    assert parse("<a href='/x'><img src='a.png'></a>").links[0].anchor == ""


def test_long_anchor_is_cut() -> None:
    page = parse(f"<a href='/x'>{'word ' * 200}</a>")
    assert len(page.links[0].anchor) == MAX_ANCHOR_CHARS


@pytest.mark.parametrize(
    ("rel", "nofollow"),
    [
        ("nofollow", True),
        ("NoFollow", True),
        ("external nofollow noopener", True),
        ("noopener", False),
        ("", False),
    ],
)
def test_nofollow_flag(rel: str, nofollow: bool) -> None:
    page = parse(f"<a href='/x' rel='{rel}'>x</a>")
    assert page.links[0].nofollow is nofollow


@pytest.mark.parametrize(
    "href",
    [
        "javascript:void(0)",
        "JavaScript:alert(1)",
        "mailto:someone@example.com",
        "tel:+4512345678",
        "ftp://example.com/file",
        "data:text/html,hi",
        "#section",
        "",
        "https://user:pw@example.com/",
        "http://example.com:99999/",
    ],
)
def test_uncrawlable_links_are_skipped(href: str) -> None:
    page = parse(f"<a href='{href}'>skip me</a><a href='/keep'>keep</a>")
    assert link_urls(page) == ["https://example.com/keep"]


def test_anchor_without_href_is_not_a_link() -> None:
    assert parse("<a name='top'>Top</a>").links == ()


def test_duplicate_links_are_kept_in_order() -> None:
    page = parse("<a href='/a'>one</a><a href='/b'>two</a><a href='/a'>three</a>")
    assert [(link.url, link.anchor) for link in page.links] == [
        ("https://example.com/a", "one"),
        ("https://example.com/b", "two"),
        ("https://example.com/a", "three"),
    ]


# -- encodings ----------------------------------------------------------------------

DANISH = (
    "<html><head><title>Rødgrød med fløde</title></head><body><p>Æblegrød på Ærø</p></body></html>"
)


def test_charset_from_the_content_type_header() -> None:
    page = parse_html(DANISH.encode("cp1252"), PAGE, content_type="text/html; charset=windows-1252")
    assert page.title == "Rødgrød med fløde"
    assert page.text == "Æblegrød på Ærø"


def test_charset_from_meta_charset() -> None:
    html = DANISH.replace("<head>", "<head><meta charset='windows-1252'>")
    page = parse_html(html.encode("cp1252"), PAGE, content_type="text/html")
    assert page.title == "Rødgrød med fløde"


def test_charset_from_meta_http_equiv() -> None:
    html = DANISH.replace(
        "<head>", "<head><meta http-equiv='Content-Type' content='text/html; charset=iso-8859-1'>"
    )
    page = parse_html(html.encode("latin-1"), PAGE)
    assert page.text == "Æblegrød på Ærø"


def test_header_charset_wins_over_meta_charset() -> None:
    html = DANISH.replace("<head>", "<head><meta charset='windows-1252'>")
    page = parse_html(html.encode("utf-8"), PAGE, content_type="text/html; charset=utf-8")
    assert page.title == "Rødgrød med fløde"


def test_utf8_bom() -> None:
    page = parse_html(b"\xef\xbb\xbf" + DANISH.encode("utf-8"), PAGE)
    assert page.title == "Rødgrød med fløde"
    assert not page.text.startswith("\ufeff")


def test_utf8_bom_wins_over_a_wrong_header() -> None:
    body = b"\xef\xbb\xbf" + DANISH.encode("utf-8")
    page = parse_html(body, PAGE, content_type="text/html; charset=iso-8859-1")
    assert page.title == "Rødgrød med fløde"


def test_utf16_with_bom() -> None:
    page = parse_html(DANISH.encode("utf-16"), PAGE)
    assert page.title == "Rødgrød med fløde"


def test_utf8_without_any_declaration() -> None:
    page = parse_html(DANISH.encode("utf-8"), PAGE)
    assert page.text == "Æblegrød på Ærø"


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    page = parse_html(b"<title>Bad \xff\xfe bytes</title><p>ok</p>", PAGE, content_type="text/html")
    assert page.title.startswith("Bad")
    assert page.title.endswith("bytes")


def test_unknown_charset_in_header_falls_back() -> None:
    body = DANISH.encode("utf-8")
    page = parse_html(body, PAGE, content_type="text/html; charset=no-such-charset")
    assert page.title == "Rødgrød med fløde"


@pytest.mark.parametrize("label", ["zlib", "base64", "rot13", "undefined", "idna", "punycode"])
def test_a_label_naming_no_text_encoding_is_ignored(label: str) -> None:
    # Python's codec registry knows these names, but they decode bytes to bytes or
    # always fail: w3lib handed them to bytes.decode, which raised, and the crawl lost
    # the page as an internal error. Browsers ignore labels outside the Encoding
    # Standard; so do we, in the header and in <meta>.
    body = DANISH.encode("utf-8")
    in_header = parse_html(body, PAGE, content_type=f"text/html; charset={label}")
    assert in_header.title == "Rødgrød med fløde"
    assert in_header.text.startswith("Æblegrød på Ærø")
    in_meta = body.replace(b"<head>", f"<head><meta charset='{label}'>".encode())
    assert parse_html(in_meta, PAGE).title == "Rødgrød med fløde"
    latin = DANISH.replace("<head>", "<head><meta charset='windows-1252'>").encode("cp1252")
    header_bogus = parse_html(latin, PAGE, content_type=f"text/html; charset={label}")
    assert header_bogus.title == "Rødgrød med fløde"  # the <meta> still read


# -- broken markup --------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"<html><head><title>Unclosed",
        b"<a href='/x'>unclosed <b>link",
        b"</p></div></body></html>",
        b"<<<>>>&&&;;;",
        b"<a href=\"/x\" href='/y'>two hrefs</a>",
        b"<base href='http://[::1'><a href='x'>x</a>",
        b"\x00\x01\x02<p>\x00</p>",
        b"<svg><title>t</svg></title>",
        b"<a href='" + b"a" * 20_000 + b"'>huge</a>",
    ],
)
def test_broken_html_never_raises(body: bytes) -> None:
    assert isinstance(parse_html(body, PAGE), ParsedPage)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2_000))
def test_arbitrary_bytes_give_a_parsed_page(body: bytes) -> None:
    page = parse_html(body, PAGE)
    assert isinstance(page, ParsedPage)
    assert page.word_count == len(page.text.split())


_TAG = st.sampled_from(
    ["<a href='", "'>", "<title>", "</title>", "<svg>", "</svg>", "<base href='", "<p>", "</a>"]
)
_CHUNK = st.one_of(_TAG, st.text(max_size=10), st.sampled_from(["javascript:", "//", "../", "#"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(_CHUNK, max_size=40), st.sampled_from([None, "text/html; charset=utf-8"]))
def test_tag_soup_gives_a_parsed_page(chunks: list[str], content_type: str | None) -> None:
    page = parse_html("".join(chunks).encode("utf-8", "surrogatepass"), PAGE, content_type)
    assert isinstance(page, ParsedPage)
    assert all(link.url.startswith(("http://", "https://")) for link in page.links)


def test_undeclared_legacy_encoding_is_detected() -> None:
    text = "Æblegrød og rødgrød med fløde er dansk mad, som man spiser om sommeren i Danmark."
    body = f"<html><body><p>{text}</p></body></html>".encode("cp1252")
    page = parse_html(body, "https://example.com/")
    assert "rødgrød med fløde" in page.text


def test_undeclared_utf8_is_read_as_utf8() -> None:
    body = "<p>Ærø — “quotes” and €</p>".encode()
    assert parse_html(body, "https://example.com/").text == "Ærø — “quotes” and €"


# -- block separation ---------------------------------------------------------------

# The block tags as first written, one flat alternation; _BLOCK_TAG groups them by
# first letter for speed and must match exactly the same places.
BLOCK_NAMES = [
    *("address", "article", "aside", "blockquote", "br", "caption", "dd", "details"),
    *("dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form"),
    *("h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "img", "legend", "li", "main"),
    *("nav", "ol", "option", "p", "pre", "section", "summary", "table", "tbody", "td"),
    *("tfoot", "th", "thead", "tr", "ul"),
]
FLAT_BLOCK_TAG = re.compile(r"<(?=/?(?:" + "|".join(BLOCK_NAMES) + r")\b)", re.IGNORECASE)
NEAR_MISSES = ["a", "b", "u", "o", "t", "s", "param", "h7", "h", "tbodyx", "bra", "imgs", "mains"]


@pytest.mark.parametrize("tag", BLOCK_NAMES)
def test_every_block_tag_gets_a_space_before_it(tag: str) -> None:
    markup = f"x<{tag}>y</{tag.upper()}>z"
    assert _BLOCK_TAG.sub(" <", markup) == f"x <{tag}>y </{tag.upper()}>z"
    assert FLAT_BLOCK_TAG.sub(" <", markup) == _BLOCK_TAG.sub(" <", markup)


@pytest.mark.parametrize("tag", NEAR_MISSES)
def test_a_tag_that_only_starts_like_a_block_tag_gets_none(tag: str) -> None:
    markup = f"x<{tag} class=a>y</{tag}>"
    assert _BLOCK_TAG.sub(" <", markup) == markup == FLAT_BLOCK_TAG.sub(" <", markup)


@given(st.text(alphabet="<>/ pPrReEaAbBhH1234567890lLiImMgGtTdDuUoOsSxX", max_size=60))
@settings(max_examples=300)
def test_block_tag_pass_matches_the_flat_alternation_on_any_text(text: str) -> None:
    assert _BLOCK_TAG.sub(" <", text) == FLAT_BLOCK_TAG.sub(" <", text)


def test_a_giant_title_description_or_heading_is_cut() -> None:
    # A hostile page's 2 MB <title> would ride along with every result it appears in
    # (the API's JSON, the results page, the report): each field is cut.
    from trawl.extract.html import MAX_FIELD_CHARS

    giant = "word " * 400_000
    page = parse(
        f"<html><head><title>{giant}</title><meta name=description content='{giant}'></head>"
        f"<body><h1>{giant}</h1><h2>{giant}</h2><p>text</p></body></html>"
    )
    assert page.title.startswith("word word") and len(page.title) <= MAX_FIELD_CHARS
    assert page.description.startswith("word") and len(page.description) <= MAX_FIELD_CHARS
    assert [len(h) <= MAX_FIELD_CHARS for h in page.h1 + page.h2] == [True, True]


# An mdBook page as the Cargo book's: each heading's text is a link to itself, in a class
# ("header") that readability's unlikely-candidate words name.
MDBOOK_PAGE = (
    "<html><head><title>Cargo Home - The Cargo Book</title></head><body>"
    '<div id="mdbook-help-container"><h2 class="mdbook-help-title">Keyboard shortcuts</h2>'
    "<p>Press S to search in the book</p></div>"
    '<nav id="mdbook-sidebar" class="sidebar"></nav><div class="page"><main>'
    '<h1 id="cargo-home"><a class="header" href="#cargo-home">Cargo Home</a></h1>'
    "<p>" + "Cargo stores downloaded build dependencies in the Cargo home folder. " * 4 + "</p>"
    '<h2 id="files"><a class="header" href="#files">Files:</a></h2>'
    "<ul><li><p><code>config.toml</code> Cargo's global configuration file, read by every"
    " command before it runs.</p></li></ul>"
    '<h2 id="clearing-the-cache"><a class="header" href="#clearing-the-cache">Clearing the'
    " cache</a></h2><p>" + "In theory, you can always remove any part of the cache. " * 4 + "</p>"
    "</main></div></body></html>"
)


def test_mdbook_headings_that_link_to_themselves_open_sections() -> None:
    page = parse_html(MDBOOK_PAGE.encode(), "https://doc.rust-lang.org/cargo/guide/cargo-home.html")

    found = [(s.title, s.level, s.anchor) for s in page.sections]
    assert ("Files:", 2, "files") in found
    assert ("Clearing the cache", 2, "clearing-the-cache") in found
    assert "Keyboard shortcuts" not in [s.title for s in page.sections]  # outside the main text
    for s in page.sections:
        assert page.text[s.start :].startswith(s.title)


def test_a_short_page_marking_its_content_is_read_from_main_not_the_furniture() -> None:
    # An mdBook chapter that is a list of links: too little for the main-text scorer, so
    # the page stands in by its visible text, which held the help popup and theme menu.
    html = (
        "<html><head><title>Build Commands - The Cargo Book</title></head><body>"
        '<div id="mdbook-help-container"><h2>Keyboard shortcuts</h2>'
        "<p>Press S or / to search in the book</p></div>"
        '<div class="menu-bar"><ul class="theme-popup"><li><button>Coal</button></li>'
        '<li><button>Navy</button></li></ul><h1 class="menu-title">The Cargo Book</h1></div>'
        '<main><h1 id="build-commands"><a class="header" href="#build-commands">Build'
        " Commands</a></h1><ul>"
        + "".join(f'<li><a href="cargo-{c}.html">cargo {c}</a></li>' for c in ("bench", "build"))
        + "</ul></main></body></html>"
    )

    page = parse_html(html.encode(), "https://doc.rust-lang.org/cargo/commands/build-commands.html")

    assert page.text == "Build Commands cargo bench cargo build"
    assert [s.title for s in page.sections] == ["Build Commands"]
    assert {"keyboard", "shortcuts", "search"} <= set(page.aside.split())  # no word lost


def test_a_short_page_without_main_keeps_its_whole_visible_text() -> None:
    html = "<html><body><div><p>word</p><div><table><tr><td>cell</td></tr></table></div></div>"
    page = parse_html(html.encode(), "http://x.example/")
    assert "word" in page.text and "cell" in page.text


def test_a_heading_left_out_of_the_text_does_not_take_the_headings_after_it() -> None:
    # The Cargo book's "Build Scripts" h1 repeats the title, so the main text leaves it
    # out; its words come back in the last section's heading. Taken there, the search for
    # every heading after it started past them: 2 sections of 26.
    headings = [
        ("Build Scripts", 1, "build-scripts"),
        ("Life Cycle", 2, "life-cycle"),
        ("Outputs", 2, "outputs"),
        ("Overriding Build Scripts", 2, "overriding"),
    ]
    text = (
        "Some packages need code. Life Cycle runs first. Outputs are read."
        " Overriding Build Scripts is possible."
    )

    found = [(s.title, s.start) for s in locate_sections(headings, text)]

    assert found == [
        ("Life Cycle", text.index("Life Cycle")),
        ("Outputs", text.index("Outputs")),
        ("Overriding Build Scripts", text.index("Overriding")),
    ]


def test_prose_naming_a_later_heading_does_not_unseat_the_one_before() -> None:
    headings = [("Overview", 2, "overview"), ("Installation", 2, "installation")]
    text = "See Installation below. Overview of it all. Installation takes a minute."

    found = [(s.title, s.start) for s in locate_sections(headings, text)]

    assert found == [("Overview", 24), ("Installation", text.rindex("Installation"))]


def test_a_long_reference_page_keeps_a_section_for_each_of_its_hundreds_of_headings() -> None:
    # The rustc book's warn-by-default lint listing: 146 lints, each an h2 and its Example
    # and Explanation h3s, 419 headings in all. Cut at 256 headings, the 60 lints after
    # redundant-semicolons (unused-variables, unexpected-cfgs...) had no section.
    lints = [f"lint-number-{n}" for n in range(150)]
    body = "".join(
        f'<h2 id="{lint}"><a class="header" href="#{lint}">{lint}</a></h2>'
        f"<p>The {lint.replace('-', '_')} lint detects one kind of mistake.</p>"
        f'<h3 id="example-{n}"><a class="header" href="#example-{n}">Example</a></h3>'
        f"<pre><code>fn main() {{ let x{n} = {n}; }}</code></pre>"
        f'<h3 id="explanation-{n}"><a class="header" href="#explanation-{n}">Explanation</a></h3>'
        f"<p>Why the compiler warns about case {n}.</p>"
        for n, lint in enumerate(lints)
    )
    html = f"<html><head><title>Warn-by-default Lints</title></head><body><main>{body}</main>"
    page = parse_html(html.encode(), "https://doc.rust-lang.org/rustc/lints/listing/w.html")

    assert [s.anchor for s in page.sections if s.level == 2] == lints
    assert len(page.sections) == 3 * len(lints)


class _CountedText(str):
    """A page's text that counts the searches made in it."""

    searches = 0

    def find(self, *args: Any) -> int:
        _CountedText.searches += 1
        return super().find(*args)


def test_headings_the_text_lacks_are_looked_for_a_bounded_number_of_times() -> None:
    # Each heading the text lacks costs a scan of the rest of the text: a hostile page of
    # thousands of them is read only so far, however many headings a page may keep.
    headings = [(f"missing {n}", 2, f"m{n}") for n in range(5000)]
    text = _CountedText("words " * 1000)
    _CountedText.searches = 0

    assert locate_sections(headings, text) == ()
    assert _CountedText.searches <= 256  # of 5000 headings
