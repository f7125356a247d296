"""Element nesting bounded before parsing (trawl.extract.nesting): lexbor's parser is
quadratic in the depth of open elements, so a hostile page must not reach it deep."""

from __future__ import annotations

import json
import subprocess
import sys

from selectolax.lexbor import LexborHTMLParser

from trawl.extract.nesting import MAX_ATTRIBUTES, MAX_NESTING, attributes_bounded, nesting_bounded

DEEP = 100_000  # a 600 kB page: minutes of parsing, several times over, unbounded


def depth(html: str) -> int:
    """The depth of the deepest element lexbor builds from ``html`` (<html> is 1)."""
    root = LexborHTMLParser(html).root
    assert root is not None
    deepest, level = 0, [(root, 1)]
    while level:
        node, d = level.pop()
        deepest = max(deepest, d)
        level.extend((child, d + 1) for child in node.iter() if child.tag != "-text")
    return deepest


def test_an_ordinary_page_is_left_as_it_is() -> None:
    page = (
        "<html><body><svg>"
        + "<path d='M0'/>" * 400
        + "</svg>"
        + "<ul>"
        + "<li><a href=x>item</a>" * 400
        + "</ul>"
        + "<div><span>text</span></div>" * 400
        + "<p>one<p>two" * 400
        + "</body></html>"
    )
    assert nesting_bounded(page) is page


def test_deep_nesting_is_flattened_and_keeps_its_text() -> None:
    html = "<div>" * 5_000 + "deep words" + "</div>" * 5_000 + "<p>after</p>"
    bounded = nesting_bounded(html)
    assert depth(bounded) <= MAX_NESTING + 3  # html, body, and the text's parent
    parsed = LexborHTMLParser(bounded).body
    assert parsed is not None and parsed.text(separator=" ").split() == [
        "deep",
        "words",
        "after",
    ]


def test_stray_end_tags_do_not_hide_depth() -> None:
    # lexbor ignores </span> with no <span> open: the divs still nest.
    html = "<div></span>" * 2_000 + "x"
    assert depth(nesting_bounded(html)) <= MAX_NESTING + 3
    # Self-closing syntax outside SVG opens an element like any start tag.
    html = "<div/>" * 2_000 + "x"
    assert depth(nesting_bounded(html)) <= MAX_NESTING + 3


def _documents() -> list[str]:
    return [
        "<title>deep</title>" + "<div>" * DEEP + "deep text" + "</div>" * DEEP,
        "<title>deep list</title>" + "<ul><li>" * (DEEP // 2) + "deep list text",
        "<title>mixed</title>" + "<div><b>" * (DEEP // 2) + "mixed text",
    ]


def test_a_page_nested_100k_deep_parses_in_bounded_time() -> None:
    # Unbounded, the first page takes many minutes (20,000 levels: 9 s a parse, and
    # each doubling four times that). In a child process with a generous deadline, so
    # a loaded machine cannot fail the test, and a hang cannot stall the suite.
    child = (
        "import json, sys\n"
        "from trawl.extract.html import parse_html\n"
        "pages = [parse_html(h.encode(), 'http://example.com/') for h in json.load(sys.stdin)]\n"
        "print(json.dumps([(p.title, p.text) for p in pages]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", child],
        input=json.dumps(_documents()),
        capture_output=True,
        text=True,
        timeout=90,
        check=True,
    )
    assert [tuple(p) for p in json.loads(done.stdout)] == [
        ("deep", "deep text"),
        ("deep list", "deep list text"),
        ("mixed", "mixed text"),
    ]


def _crowded(count: int, attribute: str) -> str:
    """A page whose <p> carries ``count`` attributes written as ``attribute`` % n."""
    attributes = "".join(attribute % n for n in range(count))
    return f"<title>crowded</title><p {attributes}>crowded text</p><p>after</p>"


def test_an_ordinary_tag_keeps_its_attributes() -> None:
    page = _crowded(MAX_ATTRIBUTES, " a%d=1") + "<img src=x alt='>' srcset=\"a 1x, b 2x\">" * 50
    assert attributes_bounded(page) is page


def test_attributes_past_the_cap_are_dropped_however_written() -> None:
    # As lexbor's tokenizer reads them: unquoted, valueless, quoted with ">" inside,
    # run together after a quote, split by "/", with a quote in a name.
    for attribute in (" a%d=1", " a%d", " a%d='>'", ' a%d=""', "/a%d", ' a"%d'):
        bounded = attributes_bounded(_crowded(5_000, attribute))
        tree = LexborHTMLParser(bounded)
        crowded = tree.css_first("p")
        assert crowded is not None and len(crowded.attributes) == MAX_ATTRIBUTES, attribute
        assert tree.body is not None
        assert tree.body.text(separator=" ").split() == ["crowded", "text", "after"]


def test_a_page_of_60k_attributes_on_one_tag_parses_in_bounded_time() -> None:
    # lexbor compares each attribute with those before it on the same element: 20,000
    # (170 kB) took 31 s through parse_page, and these 60,000 take minutes a parse.
    child = (
        "import sys\n"
        "from trawl.extract.html import parse_html\n"
        "page = parse_html(sys.stdin.read().encode(), 'http://example.com/')\n"
        "print(page.title, '|', page.text)"
    )
    done = subprocess.run(
        [sys.executable, "-c", child],
        input=_crowded(60_000, " a%d=1"),
        capture_output=True,
        text=True,
        timeout=90,
        check=True,
    )
    assert done.stdout.split() == ["crowded", "|", "crowded", "text", "after"]
