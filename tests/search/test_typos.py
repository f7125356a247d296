"""Typo tolerance, completions of the last word, "Did you mean", the soft AND: a real index."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixture_sites import shared_data
from trawl.analysis.text import stem_words
from trawl.index.documents import title_key
from trawl.index.tantivy_index import IndexReader, IndexWriter
from trawl.records import PageRecord
from trawl.search import typos
from trawl.search.plan import _heavy_sets, plan
from trawl.search.query import parse_query
from trawl.search.searcher import _corrections, _shape, rank, search
from trawl.search.typos import barely_known, complete, correct, max_distance
from trawl.settings import Settings

PAGES = {
    "pedestrians": ("Pedestrians", "Pedestrians walk on sidewalks and cross at crossings."),
    "calibrators": ("Calibrators", "A calibrator adapts flows and speeds on a lane."),
    "netconvert": ("netconvert", "netconvert imports road networks from many formats."),
    "teleporting": ("Teleporting", "Vehicles teleport when they wait too long in a jam."),
    "misspelt": ("Notes", "A note on pedestrain crossings, spelt wrong once."),
    "waterways": ("Ships", "Ships sail on waterways and canals."),
    "bats": ("Batch files", "A bat file runs on windows; bat bat bat."),
}


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    settings = Settings(data=tmp_path_factory.mktemp("typos"))
    writer = IndexWriter(settings.index_path)
    # Each word the typos aim at is on ten other pages, once: far commoner than a typo.
    common = ("pedestrian", "calibrator", "netconvert", "teleport")
    filler = [(f"filler{i}", ("Filler", f"roads and {common[i % 4]}.")) for i in range(40)]
    # "pedestrian" on twenty more: far commoner than the one page that misspells it.
    filler += [(f"walk{i}", ("Walk", "a pedestrian walks.")) for i in range(20)]
    for path, (title, text) in [*PAGES.items(), *filler]:
        writer.upsert(
            PageRecord(
                url=f"https://docs.example/{path}", host="docs.example", status=200, depth=0,
                fetched_at=0.0, title=title, text=text, lang="en", indexable=True,
            )
        )  # fmt: skip
    writer.close()
    return settings


def urls(settings: Settings, text: str) -> list[str]:
    page = search(IndexReader(settings.index_path), text, settings)
    return [h.url.rsplit("/", 1)[1] for h in page.hits]


@pytest.mark.parametrize(
    ("typed", "page", "meant"),
    [
        ("netconvrt", "netconvert", "netconvert"),  # a letter left out
        ("calibartor", "calibrators", "calibrator"),  # two swapped: the stem is "calibr"
        ("teleportng vehicles", "teleporting", "teleporting vehicles"),
    ],
)
def test_a_misspelt_word_finds_its_page_and_says_did_you_mean(
    settings: Settings, typed: str, page: str, meant: str
) -> None:
    found = search(IndexReader(settings.index_path), typed, settings)
    assert found.hits and found.hits[0].url.endswith("/" + page)
    assert found.did_you_mean == meant


def test_without_typo_tolerance_a_misspelling_finds_nothing(settings: Settings) -> None:
    off = settings.replace(typo_tolerance=False)
    found = search(IndexReader(settings.index_path), "netconvrt", off)
    assert found.total == 0 and found.did_you_mean is None


def test_a_word_the_index_barely_knows_matches_its_exact_page_first(settings: Settings) -> None:
    # "pedestrain" is on one page (misspelt there): that page comes first, the page
    # with the correction after it, and no "Did you mean": the typing found a page.
    found = search(IndexReader(settings.index_path), "pedestrain", settings)
    assert [h.url.rsplit("/", 1)[1] for h in found.hits[:2]] == ["misspelt", "pedestrians"]
    assert found.did_you_mean is None


def test_never_inside_a_phrase_or_beside_operators(settings: Settings) -> None:
    assert urls(settings, '"netconvrt imports"') == []
    assert urls(settings, "netconvrt -ships") == []


def test_a_short_stem_is_not_corrected_to_a_shorter_one(settings: Settings) -> None:
    # "boats" (stem "boat", on no page) is one edit from "bats" (stem "bat"): too short a
    # stem to trust, so the ships page is not pushed under the batch files.
    assert urls(settings, "ships boats")[:1] == ["waterways"]


def test_the_last_word_completes_as_a_prefix(settings: Settings) -> None:
    assert urls(settings, "pedes")[:1] == ["pedestrians"]
    assert urls(settings, "calibr")[:1] == ["calibrators"]
    off = settings.replace(typo_tolerance=False)
    assert search(IndexReader(settings.index_path), "pedes", off).total == 0


def test_corrections_are_on_the_ranked_result(settings: Settings) -> None:
    ranked = rank(IndexReader(settings.index_path), "netconvrt", settings, limit=5)
    assert [(c.word, c.shown, c.distance) for c in ranked.corrections] == [
        ("netconvrt", "netconvert", 1)
    ]


def terms_of(*pairs: tuple[str, int]):  # type: ignore[no-untyped-def]
    def terms(prefix: str, limit: int | None) -> list[tuple[str, int]]:
        found = [p for p in pairs if p[0].startswith(prefix)]
        return found[:limit] if limit else found

    return terms


def test_edit_distance_grows_with_the_word() -> None:
    assert [max_distance(w) for w in ("abcd", "abcde", "abcdefgh", "abcdefghi")] == [0, 1, 1, 2]
    terms = terms_of(("simul", 90), ("simulator", 40))
    assert correct("simulatr", "en", 0, terms) is not None  # 8 letters: 1 edit
    assert correct("simlatr", "en", 0, terms) is None  # 2 edits for 7 letters: too far
    assert correct("abcd", "en", 0, terms) is None  # under 5 letters: never


def test_a_correction_must_be_far_commoner_than_the_word() -> None:
    assert correct("netconvrt", "en", 1, terms_of(("netconvert", 19))) is None
    assert correct("netconvrt", "en", 1, terms_of(("netconvert", 20))) is not None
    assert correct("netconvrt", "en", 2, terms_of(("netconvert", 29))) is None
    assert barely_known(0, 100) and barely_known(1, 100) and not barely_known(2, 100)


def test_completion_needs_three_letters() -> None:
    terms = terms_of(("pedestrian", 50), ("pedal", 5))
    assert complete("pe", terms) is None
    fix = complete("ped", terms)
    assert fix is not None and fix.stems == ("pedestrian", "pedal") and fix.distance == 0


def test_heavy_sets_are_the_minimal_sets_of_enough_weight() -> None:
    # Weights 3, 2, 1 (total 6), share 0.5: {0} alone is enough; {1, 2} together.
    assert _heavy_sets({0: 3.0, 1: 2.0, 2: 1.0}, 0.5) == [(0,), (1, 2)]
    assert _heavy_sets({0: 3.0, 1: 2.0, 2: 1.0}, 1.0) == [(0, 1, 2)]


def indexed(tmp_path: Path, pages: dict[str, str]) -> tuple[Settings, IndexReader]:
    """An index of one English page per entry: its path (also its title) and its text."""
    settings = Settings(data=tmp_path)
    writer = IndexWriter(settings.index_path)
    for path, text in pages.items():
        writer.upsert(
            PageRecord(
                url=f"https://docs.example/{path}", host="docs.example", status=200, depth=0,
                fetched_at=0.0, title=path, text=text, lang="en", indexable=True,
            )
        )  # fmt: skip
    writer.close()
    return settings, IndexReader(settings.index_path)


def test_soft_and_lets_a_page_miss_a_light_word(tmp_path: Path) -> None:
    padding = " ".join(f"word{n}" for n in range(300))
    pages = {
        "overtake": "vehicles overtake on the oncoming lane",
        **{f"all{i}": f"cars overtake oncoming {padding}" for i in range(16)},
        **{f"other{i}": f"something else entirely {i}" for i in range(40)},
    }
    settings, reader = indexed(tmp_path, pages)
    narrow = settings.replace(rerank_depth=10)
    strict = rank(reader, "cars overtake oncoming", narrow.replace(soft_and_share=1.0), limit=10)
    soft = rank(reader, "cars overtake oncoming", narrow.replace(soft_and_share=0.6), limit=10)
    # Strictly, sixteen long pages hold all three and fill the ranking depth: the short page
    # about overtaking, missing only the light word "cars", is never seen. Softly it is
    # matched in the first step, and its two rare words put it first.
    assert "overtake" not in [h.url.rsplit("/", 1)[1] for _, h in strict.hits]
    assert soft.hits[0][1].url.endswith("/overtake")


def test_coverage_still_orders_a_soft_ands_matches(tmp_path: Path) -> None:
    # A soft AND's first step holds pages missing a word: that is no reason to stop
    # counting words. The page saying "overtake" and "oncoming" over and over, without
    # "cars", must not pass the page holding all three.
    pages = {
        "repeats": "overtake overtake overtake oncoming oncoming oncoming lane",
        "answer": "cars overtake on the oncoming lane when the road is free",
        **{f"cars{i}": f"cars park on street {i}" for i in range(6)},
        **{f"other{i}": f"something else entirely {i}" for i in range(40)},
    }
    settings, reader = indexed(tmp_path, pages)
    soft = settings.replace(soft_and_share=0.6)
    found = rank(reader, "cars overtake oncoming", soft, limit=10)
    assert [h.url.rsplit("/", 1)[1] for _, h in found.hits][:2] == ["answer", "repeats"]


def test_a_page_with_only_common_words_is_no_match(tmp_path: Path) -> None:
    # "lane" is on most pages: a page holding it and not "trucks" is not an answer to
    # "trucks lane", however often it says "lane". With no page holding the rare word,
    # the common one still finds pages.
    pages = {
        "trucks": "trucks may not enter here",
        **{f"lane{i}": f"lane lane lane change {i}" for i in range(20)},
        **{f"other{i}": f"something else entirely {i}" for i in range(9)},
    }
    settings, reader = indexed(tmp_path, pages)
    found = rank(reader, "trucks lane", settings, limit=30)
    assert [h.url.rsplit("/", 1)[1] for _, h in found.hits] == ["trucks"]
    assert found.total == 1
    unknown = rank(reader, "qqqzzzx lane", settings.replace(typo_tolerance=False), limit=30)
    assert unknown.total == 20


def test_feedback_adds_the_terms_the_best_pages_share(tmp_path: Path) -> None:
    # Pages about teleporting say "jam" and "gridlock"; one page says only "gridlock jam".
    # Asked "teleport", feedback finds that page through the words the best pages share.
    pages = {
        **{f"teleport{i}": f"vehicles teleport in a gridlock jam {i}" for i in range(3)},
        "gridlock": "a gridlock jam on the motorway",
        **{f"other{i}": f"something else entirely {i}" for i in range(20)},
    }
    settings, reader = indexed(tmp_path, pages)
    plain = rank(reader, "teleport", settings, limit=10)
    fed = rank(reader, "teleport", settings.replace(feedback_terms=2), limit=10)
    assert "gridlock" not in [h.url.rsplit("/", 1)[1] for _, h in plain.hits]
    assert [h.url.rsplit("/", 1)[1] for _, h in fed.hits][3] == "gridlock"  # after the three


def test_near_spellings_stop_reading_the_dictionary_at_the_first_rare_term() -> None:
    # A two-letter prefix lists thousands of terms, commonest first: reading past the
    # first one too rare to be a correction was most of a long query's correction time.
    class Listed(list[tuple[str, int]]):
        read = 0

        def __iter__(self) -> Iterator[tuple[str, int]]:
            for entry in super().__iter__():
                self.read += 1
                yield entry

    listed = Listed([("pedestrian", 500), *((f"pe{n:05d}", 1) for n in range(2_000))])
    fix = correct("pedestrain", "en", 1, lambda prefix, limit: listed if prefix == "pe" else [])
    assert fix is not None and fix.shown == "pedestrian"
    assert listed.read < 10


def test_a_near_spelling_across_the_join_of_stem_and_suffix_is_still_found() -> None:
    # Only terms near a start of the word are given suffixes: "jumipng" ("jumping" with the
    # stem's last letter and the suffix's first swapped) is one edit from the form, and
    # its start "jumi" one from the term.
    fix = correct("jumipng", "en", 0, terms_of(("jump", 50), ("jumbo", 90)))
    assert fix is not None and (fix.shown, fix.stems, fix.distance) == ("jumping", ("jump",), 1)


def test_near_spellings_match_every_form_tried_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The terms given suffixes are narrowed to those near a start of the word: the answers
    # must be those of every term given every suffix, over a real vocabulary and typos.
    corpus = shared_data("ir/scifact/corpus.jsonl")
    counted: dict[str, int] = {}
    with corpus.open(encoding="utf-8") as lines:
        for line in itertools.islice(lines, 600):
            for word in set(json.loads(line)["text"].lower().split()):
                if word.isalpha():
                    for stem in stem_words([word], "en"):
                        counted[stem] = counted.get(stem, 0) + 1
    by_start: dict[str, list[tuple[str, int]]] = {}
    for entry in sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])):
        by_start.setdefault(entry[0][:2], []).append(entry)

    def terms(prefix: str, limit: int | None) -> list[tuple[str, int]]:
        listed = by_start.get(prefix[:2], [])
        return [entry for entry in listed if entry[0].startswith(prefix)][:limit]

    chance = random.Random(16)
    typed = []
    for word in chance.sample([w for w in counted if len(w) >= 5], 150):
        at = chance.randrange(len(word) - 1)
        edits = (word[:at] + word[at + 1] + word[at] + word[at + 2 :], word[:at] + word[at + 1 :])
        typed += [edit + suffix for edit in edits for suffix in ("", "s", "ing", "ation")]
    narrowed = [correct(word, "en", 0, terms) for word in typed]
    monkeypatch.setattr(typos, "_near_prefixes", lambda word, names, limit: names)
    assert narrowed == [correct(word, "en", 0, terms) for word in typed]
    assert sum(fix is not None for fix in narrowed) > 100


def test_a_word_on_no_page_is_corrected_to_a_term_on_one() -> None:
    # "glossary" is on 1 of the Cargo book's 98 pages: a word on no page has nothing to
    # be ten times rarer than, so any term on a page will do.
    fix = correct("glosary", "en", 0, terms_of(("glob", 14), ("glossari", 1)))
    assert fix is not None and (fix.stems, fix.shown) == (("glossari",), "glossary")


@pytest.mark.parametrize(
    ("typed", "term", "meant"),
    [
        ("wlrkspaces", "workspac", "workspaces"),  # the second letter mistyped
        ("pstch", "patch", "patch"),
        ("anked", "yank", "yanked"),  # the first letter left out
        ("sindow", "window", "window"),  # the first letter mistyped
    ],
)
def test_an_error_in_the_first_two_letters_is_found_with_wider_ranges(
    typed: str, term: str, meant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert correct(typed, "en", 0, terms_of((term, 40), ("other", 90))) is None  # the default
    monkeypatch.setattr(typos, "WIDER", True)
    fix = correct(typed, "en", 0, terms_of((term, 40), ("other", 90)))
    assert fix is not None and (fix.stems, fix.shown, fix.distance) == ((term,), meant, 1)


def test_of_corrections_as_near_one_keeping_the_first_letter_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(typos, "WIDER", True)
    # "soures" is one edit from "sources" and from "youres" ("your" + "es"): people seldom
    # mistype a first letter, so the far commoner "your" does not win.
    fix = correct("soures", "en", 0, terms_of(("your", 900), ("sourc", 20)))
    assert fix is not None and fix.stems == ("sourc",)


@pytest.mark.parametrize(
    ("typed", "term", "meant"),
    [
        ("creaet", "creat", "create"),  # as long as typed: not the stem alone
        ("partitoning", "partit", "partitioning"),  # a suffix and an inflection
        ("directoty", "directori", "directory"),  # Snowball's y to i undone
        ("wrkspacess", "workspac", "workspaces"),  # as long as typed: not "workspacers"
    ],
)
def test_did_you_mean_shows_the_word_meant(
    typed: str, term: str, meant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(typos, "WIDER", True)  # "wrkspacess": the second letter left out
    fix = correct(typed, "en", 0, terms_of((term, 40)))
    assert fix is not None and (fix.stems, fix.shown) == ((term,), meant)


def test_a_corrected_query_keeps_the_bonuses_of_the_query_spelt_right(tmp_path: Path) -> None:
    # On the Cargo book "cargho build" found cargo-build.html second, under a page saying
    # "build" more: the title and URL bonuses looked for the words as typed. The rerank and
    # the URL look-up see a corrected word as the word it was taken for.
    settings = Settings(data=tmp_path)
    writer = IndexWriter(settings.index_path)
    for i in range(3):
        writer.upsert(
            PageRecord(
                url=f"https://doc.example/p{i}", host="doc.example", status=200, depth=1,
                fetched_at=0.0, title="cargo build", text="cargo build", lang="en",
                indexable=True,
            )
        )  # fmt: skip
    writer.close()
    reader = IndexReader(settings.index_path)
    query = parse_query("cargho build")
    fixes = _corrections(reader, query, ("en",))
    assert fixes["cargho"].shown == "cargo"
    planned = plan(query, ("en",), corrections=fixes)
    assert "cargobuild" in planned.lookups and "cargo-build" in planned.lookups
    shape, _, _ = _shape(reader, planned, fixes)
    assert shape.title_key == title_key("cargo build") and shape.joined == "cargobuild"
