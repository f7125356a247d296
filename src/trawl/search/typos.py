"""Words the index does not know: their near spellings and, for the last word, completions. Pure.

A query word of 5+ letters that the index barely knows matches the index's own
terms within edit distance 1 (2 for 9+ letters, a transposition costing 1), a
far commoner term preferred; the plan scores such a match below an exact one
(spec.Word.fuzzy). The index holds stems ("calibrator" is "calibr"), so a term
is compared with the word both as a stem and, for English, with the suffixes
the stemmer strips put back ("calibr" + "ator"), the form a person would have
meant; that form is what "Did you mean" shows. The last word of 3+ letters
that the index does not know also completes to the commonest terms it begins
(search as you type: "pedes" finds "pedestrian").

Edit distances come from RapidFuzz (optimal string alignment); the index's
terms from the engine's term dictionary, by prefix (``Terms``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rapidfuzz import process
from rapidfuzz.distance import OSA

from trawl.analysis.text import stem_words

# (prefix, limit) -> [(term, document frequency)], commonest first
Terms = Callable[[str, int | None], Sequence[tuple[str, int]]]

MIN_TYPO_CHARS = 5
LONG_WORD_CHARS = 9  # from here, two edits
MIN_PREFIX_CHARS = 3
COMPLETIONS = 3
_MIN_TERM = 4  # letters of the index term a word is corrected to
_COMMONER = 10  # a correction is on at least this many times more pages than the word
WIDER = False  # see correct()
_RARE_READ = 32  # terms of a range a word on no page may be corrected to, however rare
# English endings Snowball strips, longest first: a stem and one of these is a word.
_SUFFIXES = (
    "ational", "ization", "ations", "ation", "ators", "ingly", "ness", "ment",
    "ions", "ator", "ing", "ion", "ers", "ies", "ive", "ed", "er", "es", "or", "al",
    "ly", "e", "s", "y",
)  # fmt: skip


# The term alone is a form ("pstch": "patch"), and so is a term with a suffix and an
# inflection ("partitoning": "partit" + "ion" + "ing").
# Only pairs seen in words: each ending costs forms for every near term.
_DERIVED = ("ation", "ion", "ator", "ment", "al", "ive", "or")
_INFLECTIONS = ("s", "ed", "ing")
_ENDINGS = tuple(dict.fromkeys(("", *_SUFFIXES, *(a + b for a in _DERIVED for b in _INFLECTIONS))))
_LONGEST = max(map(len, _ENDINGS))
_BY_LENGTH: dict[int, tuple[str, ...]] = {
    n: tuple(s for s in _ENDINGS if len(s) == n) for n in {len(s) for s in _ENDINGS}
}
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True, slots=True)
class Correction:
    word: str  # the query word, folded
    stems: tuple[str, ...]  # index terms it matches besides its own
    shown: str  # the word a person meant: "Did you mean"
    distance: int  # 0: a completion of the last word


def barely_known(df: int, size: int) -> bool:
    """On no page, or on so few that a misspelling is likelier than a word."""
    return df <= max(1, size // 2_000)


def max_distance(word: str) -> int:
    if len(word) >= LONG_WORD_CHARS:
        return 2
    return 1 if len(word) >= MIN_TYPO_CHARS else 0


def correct(word: str, lang: str | None, df: int, terms: Terms) -> Correction | None:
    """The commonest index term within the word's edit distance, when it is far commoner.
    The dictionary is read where an error after the second letter leaves the term; with
    ``WIDER``, for a word on no page that nothing there is near, also where an error in
    the first two letters does (``_wider``)."""
    limit = max_distance(word)
    if not limit or not word.isalpha():
        return None
    stem = stem_words([word], lang)[0]
    counts: dict[str, int] = {}
    floor = _COMMONER * (df + 1)
    # _wider's ranges (an error in the first two letters) would raise one-error MRR on
    # bench/typo_set.py's tuning set from 0.934 to 0.979, but their 104 look-ups per
    # unknown word cost SciFact's search() p95 2.4 ms of 5.6 (bench/search_ab.py):
    # measured, not taken (typo_set.py --wider shows them).
    for prefixes in (_prefixes(stem), _wider(stem) if WIDER and not df else ()):
        for prefix in prefixes:
            for read, (term, count) in enumerate(terms(prefix, None)):
                # Commonest first: the rest are rarer still. A word on no page has nothing
                # to be commoner than, so the first ``_RARE_READ`` terms of a range do,
                # however rare: a small site's word is on a page or two ("glosary":
                # "glossary" is on 1 of 98 Cargo pages), while a large index's ranges
                # hold that many commoner terms (no more work per word).
                if count < floor and (df or read >= _RARE_READ):
                    break
                # A short stem has many neighbours: "boats" is not "bats" (stem "bat").
                if term != stem and len(term) >= _MIN_TERM:
                    counts[term] = count
        fix = _nearest(word, stem, lang, counts, limit) if counts else None
        if fix is not None:
            return fix
    return None


def _nearest(
    word: str, stem: str, lang: str | None, counts: dict[str, int], limit: int
) -> Correction | None:
    names = list(counts)
    # (distance, another first letter, a stem rather than a word, -df, length apart, term,
    # shown): of corrections as near, one keeping the first letter typed, as people seldom
    # mistype it ("soures" is "sources", not "your" + "es"); a word spelt out beats a stem;
    # of two forms as near, the one as long as the word typed ("creaet": "create", not the
    # stem "creat"; "wrkspacess": "workspaces", not "workspacers"). The index holds stems
    # only, so a form that is no word can still win a tie ("sectionm": "sectione").
    found: list[tuple[int, bool, int, int, int, str, str]] = [
        (int(d), t[0] != stem[0], 1, -counts[t], abs(len(t) - len(stem)), t, t)
        for t, d, _ in process.extract(
            stem, names, scorer=OSA.distance, score_cutoff=limit, limit=None
        )
        if len(stem) >= MIN_TYPO_CHARS
    ]
    if lang in (None, "en"):
        forms: dict[str, str] = {}
        for term in _near_prefixes(word, names, limit):
            for suffix in _BY_LENGTH.get(len(word) - len(term), ()):
                forms.setdefault(term + suffix, term)
            for extra in range(1, limit + 1):
                for length in (len(word) - len(term) - extra, len(word) - len(term) + extra):
                    for suffix in _BY_LENGTH.get(length, ()):
                        forms.setdefault(term + suffix, term)
        for form, d, _ in process.extract(
            word, list(forms), scorer=OSA.distance, score_cutoff=limit, limit=None
        ):
            term = forms[form]
            if stem_words([form], lang)[0] == term:
                found.append(
                    (
                        int(d),
                        form[0] != word[0],
                        0,
                        -counts[term],
                        abs(len(form) - len(word)),
                        term,
                        form,
                    )
                )
    if not found:
        return None
    distance, _, kind, *_, term, shown = min(found)
    if kind and word.endswith("y") and term.endswith("i"):
        shown = term[:-1] + "y"  # Snowball's y to i undone: "directori" is "directory"
    return Correction(word, (term,), shown, distance)


def _near_prefixes(word: str, names: list[str], limit: int) -> list[str]:
    """The terms within ``limit`` edits of some start of ``word``, in their order: only these
    can begin a form (term + suffix) within ``limit`` of the word, as the edits from the
    word to a form hold edits from a start of the word to the term (a transposition across
    the join costs one there too). Asked of RapidFuzz once per
    start of the word, not one form at a time: a common prefix ("co", "pa") lists
    ~200 terms and 2,000+ forms, which built one by one cost up to 1.5 ms a word."""
    near: set[int] = set()
    # A term within ``limit`` of a start is within ``limit`` of its length, and a form at
    # most ``limit`` shorter than the word holds a suffix of at most ``_LONGEST`` letters.
    first = max(1, len(word) - 2 * limit - _LONGEST)
    for end in range(first, min(len(word), max(map(len, names)) + limit) + 1):
        for _, _, at in process.extract(
            word[:end], names, scorer=OSA.distance, score_cutoff=limit, limit=None
        ):
            near.add(at)
    return [names[at] for at in sorted(near)]


def complete(word: str, terms: Terms) -> Correction | None:
    """The commonest terms the last word begins: what a person is still typing."""
    if len(word) < MIN_PREFIX_CHARS or not word.isalpha():
        return None
    found = [t for t, _ in terms(word, COMPLETIONS + 1) if t != word][:COMPLETIONS]
    if not found:
        return None
    return Correction(word, tuple(found), found[0], 0)


def _prefixes(stem: str) -> tuple[str, ...]:
    """Where the intended term may sit in the dictionary: the typed first two letters, or
    those two swapped, or the first and third (the second letter typed in error)."""
    if len(stem) < 3:
        return (stem,)
    return tuple(dict.fromkeys((stem[:2], stem[1] + stem[0], stem[0] + stem[2])))


def _wider(stem: str) -> tuple[str, ...]:
    """Where it sits when the first two letters hold the error: the first, any letter,
    then the second or the third typed (the second letter left out or mistyped:
    "wlrkspaces", "pstch"); any letter, then the second and third, or the first and second
    (the first letter mistyped, "sindow", or left out, "anked"). 104 narrow three-letter
    ranges, ~0.4 ms on the SUMO index, where the first letter's whole range ("c", 951
    terms) cost more to list."""
    if len(stem) < 3:
        return ()
    first, second, third = stem[0], stem[1], stem[2]
    found = [first + letter + typed for typed in (second, third) for letter in _LETTERS]
    found += [letter + typed for typed in (stem[1:3], stem[:2]) for letter in _LETTERS]
    return tuple(dict.fromkeys(found))
