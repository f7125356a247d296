"""Quality from visible signals: each signal moves the score the documented way."""

from __future__ import annotations

import random

from trawl.understand.quality import quality, spam_score


def prose(words: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    vocabulary = [f"term{i}" for i in range(800)]
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def score(text: str, *, visible: int | None = None, links: int = 0, title: bool = True) -> float:
    words = len(text.split())
    return quality(
        text=text,
        visible_words=words if visible is None else visible,
        link_words=links,
        has_title=title,
    )


def test_in_range_and_zero_without_text() -> None:
    assert score("") == 0.0
    for words in (1, 10, 100, 1000, 5000):
        assert 0.0 < score(prose(words)) <= 1.0


def test_longer_text_scores_higher_up_to_a_full_page() -> None:
    assert score(prose(10)) < score(prose(100)) < score(prose(1000))
    assert score(prose(1000)) == score(prose(3000))


def test_a_full_clean_article_is_near_the_top_and_a_thin_page_low() -> None:
    assert score(prose(1200)) > 0.9
    assert score("Gallery", title=True) < 0.2


def test_boilerplate_links_missing_title_and_spam_each_cost() -> None:
    text = prose(400)
    clean = score(text)
    assert score(text, visible=1600) < clean  # three quarters boilerplate
    assert score(text, links=380) < clean  # almost all inside links
    assert score(text, title=False) < clean
    stuffed = " ".join(["cheap"] * 100 + text.split()[:300])
    synopsis = "DROP GROUP [ IF EXISTS ] name DROP GROUP is now an alias for DROP ROLE " * 6
    assert spam_score(synopsis, synopsis.split()) == 0.0
    assert spam_score(stuffed, stuffed.split()) > 0
    assert score(stuffed) < 0.5 * clean


def test_shouting_and_exclamations_are_spam() -> None:
    shouted = "BUYING TODAY!!! BEST PRICE!!! LIMITED OFFER!!! " * 8 + prose(50)
    assert spam_score(shouted, shouted.split()) >= 0.6
    assert spam_score(prose(300), prose(300).split()) == 0.0
