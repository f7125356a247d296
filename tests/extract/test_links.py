"""Link and resource occurrences: context, caps, what is followed."""

from __future__ import annotations

from trawl.extract.html import parse_html
from trawl.extract.links import MAX_OCCURRENCES, followed

PAGE = b"""<html><head>
<link rel="stylesheet" href="/s.css"><link rel="canonical" href="/canon">
<script src="/app.js"></script></head><body>
<h1>Intro</h1><a href="/a" rel="nofollow sponsored">A link</a>
<img src="/i.png" srcset="/i-2x.png 2x, /i-3x.png 3x" alt="Picture">
<h2>Later section</h2><a href="https://other.example/x">External</a>
<area href="/map" alt="Map area"><iframe src="/frame"></iframe>
<video src="/v.mp4" poster="/poster.jpg"></video><object data="/o.pdf"></object>
</body></html>"""


def test_every_occurrence_is_kept_with_its_context() -> None:
    page = parse_html(PAGE, "https://site.example/dir/page")
    seen = {(o.element, o.attribute, o.url.rsplit("/", 1)[-1], o.heading) for o in page.links}

    assert ("link", "href", "s.css", "") in seen
    assert ("script", "src", "app.js", "") in seen
    assert ("a", "href", "a", "Intro") in seen
    assert ("img", "srcset", "i-3x.png", "Intro") in seen
    assert ("a", "href", "x", "Later section") in seen
    assert ("area", "href", "map", "Later section") in seen
    assert ("video", "poster", "poster.jpg", "Later section") in seen
    assert ("object", "data", "o.pdf", "Later section") in seen
    a = next(o for o in page.links if o.url.endswith("/a"))
    assert (a.anchor, a.rel, a.nofollow) == ("A link", "nofollow sponsored", True)
    image = next(o for o in page.links if o.url.endswith("/i.png"))
    assert image.anchor == "Picture"


def test_only_followable_anchors_are_followed() -> None:
    page = parse_html(PAGE, "https://site.example/dir/page")
    assert [h.url for h in followed(page.links)] == [
        "https://other.example/x",
        "https://site.example/map",
    ]


def test_canonical_refresh_and_meta_are_collected() -> None:
    html = (
        b'<head><meta name="Robots" content="noindex"><meta http-equiv="Refresh" '
        b'content="0; url=/next"><link rel="Canonical" href="/canon?b=2&a=1"></head>'
    )
    page = parse_html(html, "https://site.example/dir/page")
    assert page.canonical == "https://site.example/canon?a=1&b=2"
    assert page.refresh == "0; url=/next"
    assert page.meta == (("Robots", "noindex"),)


def test_occurrences_are_capped_and_the_rest_counted() -> None:
    links = "".join(f'<a href="/p{i}">p</a>' for i in range(MAX_OCCURRENCES + 25))
    page = parse_html(links.encode(), "https://site.example/")
    assert len(page.links) == MAX_OCCURRENCES
    assert page.links_dropped == 25
