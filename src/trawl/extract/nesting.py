"""A document's element nesting bounded before it is parsed.

lexbor's HTML parser is quadratic in the depth of the open elements: each start
tag of a block (``div``, ``ul``...) looks down the whole stack for a ``p`` to
close, as the HTML standard words it. 20,000 nested ``div``s take seconds to
parse, 100,000 (a 600 kB page) minutes, and a page is parsed several times. No
parser option bounds it, so the markup is: start tags past ``MAX_NESTING``
levels are dropped, with as many end tags after them, which keeps their text
(browsers flatten past a depth too: Chromium's parser at 512 levels).
"""

from __future__ import annotations

import re

MAX_NESTING = 256  # no real page nests this deep; main_text gives up past 128 anyway
# Elements that never stay open under the next one: void elements, and those whose
# end tag may be left out (the parser closes a <p> or an <li> at its next sibling).
_UNNESTED = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
        "keygen",
        "p",
        "li",
        "dt",
        "dd",
        "option",
        "optgroup",
        "tr",
        "td",
        "th",
        "tbody",
        "thead",
        "tfoot",
        "colgroup",
        "caption",
        "rb",
        "rt",
        "rtc",
        "rp",
        "html",
        "head",
        "body",
    ]
)
# SVG and MathML nest cheaply and close their own empty elements (<path/>).
_FOREIGN = frozenset({"svg", "math"})
_TAG = re.compile(r"<(/?[a-zA-Z][a-zA-Z0-9-]*)")


def nesting_bounded(html: str, limit: int = MAX_NESTING) -> str:
    """``html`` itself when no element is opened more than ``limit`` deep, else
    ``html`` without the start tags past that depth and as many end tags after
    them. Approximates the parser's stack (an end tag closes the nearest open
    element of its name, a stray one is ignored), erring deeper: scripts' strings
    count too."""
    if html.count("<") <= limit:
        return html
    if _deepest(_TAG.findall(html), limit) <= limit:
        return html
    return _flattened(html, limit)


def _deepest(names: list[str], limit: int) -> int:
    """The depth the stack of open elements reaches, counted up to ``limit`` + 1."""
    stack: list[str] = []
    open_names: dict[str, int] = {}
    foreign = ""  # the end tag that leaves foreign content
    for tag in names:
        name = tag.lower()
        if foreign:
            if name == foreign:
                foreign = ""
        elif name[0] != "/":
            if name in _UNNESTED:
                continue
            if name in _FOREIGN:
                foreign = "/" + name
                continue
            stack.append(name)
            if len(stack) > limit:
                break
            open_names[name] = open_names.get(name, 0) + 1
        elif open_names.get(name := name[1:]):
            while (top := stack.pop()) != name:
                open_names[top] -= 1
            open_names[name] -= 1
    return len(stack)


def _flattened(html: str, limit: int) -> str:
    """``html`` without start tags deeper than ``limit`` and one end tag for each."""
    kept: list[str] = []
    last = 0
    stack: list[str] = []
    open_names: dict[str, int] = {}
    excess = 0  # start tags dropped and not yet matched by a dropped end tag
    foreign = ""
    for match in _TAG.finditer(html):
        name = match.group(1).lower()
        if foreign:
            if name == foreign:
                foreign = ""
            continue
        if name[0] != "/":
            if name in _UNNESTED:
                continue
            if name in _FOREIGN:
                foreign = "/" + name
                continue
            if len(stack) < limit:
                stack.append(name)
                open_names[name] = open_names.get(name, 0) + 1
                continue
            excess += 1
        elif excess:
            excess -= 1
        else:
            if open_names.get(name := name[1:]):
                while (top := stack.pop()) != name:
                    open_names[top] -= 1
                open_names[name] -= 1
            continue
        end = html.find(">", match.end())
        end = len(html) if end < 0 else end + 1
        kept.append(html[last : match.start()])
        last = end
    kept.append(html[last:])
    return "".join(kept)


# lexbor is quadratic in one element's attributes too (each new one is compared with
# those before it): 20,000 on one tag, a 170 kB page, took 7 s a parse and 31 s for
# parse_page, 500,000 (5 MB) hours. Past MAX_ATTRIBUTES an element's attributes are
# dropped. The pattern follows the HTML tokenizer (names run to white space, "/", ">"
# or "="; a quoted value may hide ">" and end the file), atomic so that a tag with
# fewer attributes fails in time linear in its length.
MAX_ATTRIBUTES = 256  # no real element carries this many
_WS = "\t\n\f\r "
_ATTRIBUTE = (
    rf"""(?>(?:[{_WS}/]++|(?<=["']))[^{_WS}/>][^{_WS}/>=]*+"""
    rf"""(?:[{_WS}]*+=[{_WS}]*+(?:"[^"]*+"?|'[^']*+'?|[^{_WS}>]*+))?)"""
)
_KEPT = re.compile(rf"<[a-zA-Z][^{_WS}/>]*+{_ATTRIBUTE}{{{MAX_ATTRIBUTES}}}")
_CROWDED_TAG = re.compile(rf"{_KEPT.pattern}{_ATTRIBUTE}")
_MORE_ATTRIBUTES = re.compile(rf"{_ATTRIBUTE}*+")


def attributes_bounded(html: str) -> str:
    """``html`` itself when no start tag has more than MAX_ATTRIBUTES attributes, else
    ``html`` with each such tag's attributes past that many left out."""
    if _CROWDED_TAG.search(html) is None:
        return html
    kept: list[str] = []
    last = 0
    for match in _CROWDED_TAG.finditer(html):
        if match.start() < last:  # a "<" in a value of the attributes left out
            continue
        kept_end = _KEPT.match(html, match.start()).end()  # type: ignore[union-attr]
        kept.append(html[last:kept_end])
        last = _MORE_ATTRIBUTES.match(html, kept_end).end()  # type: ignore[union-attr]
    kept.append(html[last:])
    return "".join(kept)
