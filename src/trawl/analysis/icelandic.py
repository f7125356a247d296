"""A light Icelandic stemmer. Pure.

No stemming library ships Icelandic (Snowball has none), so this is our own,
kept deliberately light: it strips the commonest inflectional endings of
nouns, adjectives and verbs (the suffix-article -inn/-in/-ið and its case
forms, plural and case endings, the weak adjective and verb endings), longest
first, and never leaves a stem shorter than three letters. It does not undo
vowel changes (umlaut, ablaut): "hestur" and "hesti" meet, "barn" and
"börnum" do not. Light stemming is the usual choice for search in highly
inflected languages: it conflates many forms and almost never merges
unrelated words.
"""

from __future__ import annotations

# Longest first: the first ending that leaves a long enough stem is removed.
_SUFFIXES = tuple(
    sorted(
        {
            # the definite article attached to nouns, with its case endings
            "inum",
            "unum",
            "inni",
            "anna",
            "unni",
            "ins",
            "inn",
            "ina",
            "ið",
            "in",
            "num",
            "nir",
            "nar",
            "nna",
            # plural and case endings of nouns and adjectives
            "um",
            "ar",
            "ir",
            "ur",
            "na",
            "ra",
            "ri",
            "rar",
            "rum",
            "an",
            "a",
            "i",
            "u",
            "s",
            # weak adjectives, superlatives, verbs (infinitive, past, participles)
            "asta",
            "ustu",
            "astur",
            "ustum",
            "aði",
            "aðir",
            "uðu",
            "uðum",
            "andi",
            "ast",
            "ist",
        },
        key=lambda s: (-len(s), s),
    )
)
_MIN_STEM = 3


def stem_icelandic(word: str) -> str:
    """The stem of one lower-cased Icelandic word."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            return word[: -len(suffix)]
    return word
