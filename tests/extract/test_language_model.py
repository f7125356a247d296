"""The detection model unpacked once into the cache folder and scored without numpy
(trawl.extract.language_model): the same languages as py3langid's own code, on real pages
too, and a cache that cannot be used costs speed only."""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import py3langid
import pytest
from selectolax.lexbor import LexborHTMLParser

from fixture_sites import shared_data
from trawl.extract import language, language_model
from trawl.extract.language_model import cache_folder

TEXTS = [
    "The quick brown fox jumps over the lazy dog while the farmer watches from the porch.",
    "Det er en smuk dag i København, og vi skal ud at cykle langs havnen sammen med vores venner.",
    "Det här är en svensk text om hur man lagar mat och äter den tillsammans med familjen.",
    "Dette er en norsk tekst om hvordan man lager mat og spiser den sammen med familien.",
    "Tämä on suomenkielinen teksti siitä, miten ruokaa tehdään ja syödään perheen kanssa.",
    "Þetta er íslenskur texti um hvernig maður eldar mat og borðar hann með fjölskyldunni.",
    "Heute ist ein schöner Tag in Berlin, und wir fahren mit dem Fahrrad an der Spree entlang.",
    "CREATE INDEX constructs an index on the specified column(s) of the specified relation.",
    "日本語のテキストです。言語を判定します。",
    "x",
]


def load() -> Any:
    """A fresh model for this process, as a new process would load it."""
    return language_model.identifier.__wrapped__()


def answers(model: Any) -> list[tuple[str, float]]:
    return [model.classify(text) for text in TEXTS]


def py3langid_answers() -> list[tuple[str, float]]:
    return [py3langid.classify(text) for text in TEXTS]


def same(ours: list[tuple[str, float]], theirs: list[tuple[str, float]]) -> bool:
    """The same languages, and scores within float32's rounding of py3langid's sums."""
    return [lang for lang, _ in ours] == [lang for lang, _ in theirs] and all(
        a == pytest.approx(b, rel=1e-5, abs=1e-2)
        for (_, a), (_, b) in zip(ours, theirs, strict=True)
    )


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="session")
def built_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache written for the session (unpacking takes a few seconds)."""
    home = tmp_path_factory.mktemp("model") / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(home))
        language_model._unpacked_folder()
    return home / "trawl"


@pytest.fixture
def cached_home(cache_home: Path, built_cache: Path) -> Path:
    """A cache folder holding the written model, as a later process finds it."""
    shutil.copytree(built_cache, cache_home / "trawl")
    return cache_home


def test_same_answers_as_py3langid_from_the_cache(cache_home: Path) -> None:
    expected = py3langid_answers()
    first = load()  # unpacks and writes the cache
    written = list(cache_folder().iterdir())
    assert cache_folder() == cache_home / "trawl"
    assert len(written) == 1 and written[0].name.startswith("py3langid-0.4.0-")
    assert {p.name for p in written[0].iterdir()} == {
        "meta.json",
        "rows.bin",
        "nextmove.bin",
        "rowbase.bin",
        "out_feat.bin",
    }
    second = load()  # maps what the first wrote
    assert same(answers(first), expected)
    assert same(answers(second), expected)
    assert [lang for lang, _ in expected[:8]] == ["en", "da", "sv", "no", "fi", "is", "de", "en"]


def test_an_unwritable_cache_folder_costs_speed_only(cache_home: Path) -> None:
    cache_home.parent.mkdir(parents=True, exist_ok=True)
    cache_home.write_text("a file where the cache folder would be")
    assert same(answers(load()), py3langid_answers())
    assert cache_home.read_text() == "a file where the cache folder would be"


@pytest.mark.parametrize("damage", ["cut short", "emptied", "deleted"])
def test_a_damaged_cache_is_written_again(cached_home: Path, damage: str) -> None:
    (folder,) = cache_folder().iterdir()
    table = folder / "rows.bin"
    if damage == "cut short":  # as a full disk would leave it
        table.write_bytes(table.read_bytes()[:1000])
    elif damage == "emptied":  # as a power cut before the data reached the disk would
        table.write_bytes(b"")
    else:
        table.unlink()
    assert same(answers(load()), py3langid_answers())
    assert table.stat().st_size > 1_000_000


def test_a_killed_writers_staging_folder_is_removed(cache_home: Path) -> None:
    cache_folder().mkdir(parents=True)
    key = language_model._key()
    left = cache_folder() / f".{key}-killed"
    left.mkdir()
    (left / "rows.bin").write_bytes(b"half")
    hour_ago = time.time() - 3600
    os.utime(left, (hour_ago, hour_ago))
    live = cache_folder() / f".{key}-writing"  # another process's, still being written
    live.mkdir()

    load()

    assert not left.exists()
    assert live.exists()


@pytest.mark.parametrize("cached", [False, True])
def test_this_model_in_an_earlier_layout_is_removed(
    cache_home: Path, cached: bool, request: pytest.FixtureRequest
) -> None:
    """The first layout's folder (93 MB, no layout in its name) stayed for ever beside
    the one of today's layout; so would any later one's. Another install's model and a
    staging folder being written (by a process of any version) stay."""
    if cached:  # a later start, the current layout written already
        shutil.copytree(request.getfixturevalue("built_cache"), cache_folder())
    cache_folder().mkdir(parents=True, exist_ok=True)
    model = language_model._key().removesuffix("-" + language_model.FORMAT)
    earlier = [cache_folder() / model, cache_folder() / f"{model}-ints0"]
    kept = [cache_folder() / "py3langid-0.3.9-123456", cache_folder() / f".{model}-writing"]
    for folder in (*earlier, *kept):
        folder.mkdir()
        (folder / "ptc.npy").write_bytes(b"a table")

    assert same(answers(load()), py3langid_answers())

    assert not any(folder.exists() for folder in earlier)
    assert all(folder.exists() for folder in kept)
    assert (cache_folder() / language_model._key() / "rows.bin").stat().st_size > 1_000_000


def test_a_loaded_model_holds_little_heap(cached_home: Path) -> None:
    """py3langid keeps its DFA tables as Python lists of ints (about 10 MB in every
    process that detects a language); the mapped model keeps them as flat arrays, and
    at most ROW_CACHE rows as ints."""
    tracemalloc.start()
    try:
        model = load()
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert same(answers(model), py3langid_answers())
    assert held < 4_000_000, f"the loaded model holds {held / 1e6:.1f} MB of heap"


def test_cache_rows_are_bounded(cached_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(language_model, "ROW_CACHE", 50)
    model = load()
    assert same(answers(model), py3langid_answers())  # several times 50 features
    assert 0 < len(model._row_ints) <= 50


def page_texts() -> dict[str, list[str]]:
    """Texts of real pages: the extraction benchmark's articles (15 languages) and the
    whole text of its pages, and the PostgreSQL and SUMO manuals' pages."""
    folder = shared_data("article-extraction-benchmark")
    truth = json.loads((folder / "ground-truth.json").read_text())
    texts = {"articles": [page["articleBody"] for page in truth.values()], "pages": []}
    for path in sorted((folder / "html").glob("*.html.gz")):
        body = LexborHTMLParser(gzip.decompress(path.read_bytes())).body
        texts["pages"].append(body.text(separator=" ") if body else "")
    for site in ("site-postgresql-15-docs", "site-sumo-docs"):
        paths = sorted(shared_data(site).rglob("*.html"))[:150]
        bodies = (LexborHTMLParser(path.read_bytes()).body for path in paths)
        texts[site] = [body.text(separator=" ") if body else "" for body in bodies]
    return texts


def samples(texts: list[str], rng: random.Random) -> list[str]:
    """What detect_language classifies: a text's first 400 characters; and short
    runs of 5 to 40 words from anywhere in it."""
    found = []
    for text in texts:
        words = text.split()
        found.append(" ".join(words)[:400])
        for _ in range(3):
            if len(words) > 10:
                size = rng.randrange(5, 40)
                start = rng.randrange(len(words) - size) if len(words) > size else 0
                found.append(" ".join(words[start : start + size])[:400])
    return [sample for sample in found if sample]


def test_same_languages_as_py3langid_on_real_pages(cached_home: Path) -> None:
    model = load()
    rng = random.Random(17)
    theirs = py3langid.langid._get_identifier()
    for name, texts in page_texts().items():
        checked = samples(texts, rng)
        expected = [theirs.classify(sample)[0] for sample in checked]
        assert [model.classify(sample)[0] for sample in checked] == expected, name
        if name == "articles":
            assert len(set(expected)) >= 10  # several languages, not English alone


def test_detecting_a_language_imports_no_numpy(cached_home: Path) -> None:
    code = (
        "import sys\n"
        "from trawl.extract.language import detect_language\n"
        "print(detect_language(None, None, 'Det er en smuk dag i København og vi cykler'),"
        " 'numpy' in sys.modules, 'py3langid' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert result.stdout.split() == ["da", "False", "False"]


@pytest.mark.parametrize("table", ["nextmove.bin", "rowbase.bin", "rows.bin"])
def test_a_table_damaged_to_its_own_size_is_written_again(cached_home: Path, table: str) -> None:
    # Damage the size check at mapping time cannot see (bits flipped on the disk, a
    # stray write): scoring raised on every page, and with it every parse.
    (folder,) = cache_folder().iterdir()
    damaged = bytearray((folder / table).read_bytes())
    damaged[::7] = bytes(b ^ 0xA5 for b in damaged[::7])
    (folder / table).write_bytes(damaged)
    models = [language_model.identifier, language_model.rebuilt]
    for model in models:
        model.cache_clear()
    try:
        found = [language.detect_language(None, None, text) for text in TEXTS[:7]]
    finally:
        for model in models:
            model.cache_clear()
    assert found == [lang for lang, _ in py3langid_answers()[:7]]
    assert (folder / table).read_bytes() != damaged


def test_a_killed_writers_staging_folder_is_removed_once_the_cache_is_written(
    cached_home: Path,
) -> None:
    # A writer killed while another finished first (two crawls starting together), or
    # while the next process wrote the cache: no process unpacks again, and only an
    # unpacking one looked for what killed writers left (up to 83 MB each).
    key = language_model._key()
    left = cache_folder() / f".{key}-killed"
    left.mkdir()
    (left / "rows.bin").write_bytes(b"half")
    hour_ago = time.time() - 3600
    os.utime(left, (hour_ago, hour_ago))

    assert same(answers(load()), py3langid_answers())

    assert not left.exists()


@pytest.mark.parametrize("text", ["!!! ??? ... --- *** " * 10, "😀 " * 40, "\0 " * 40])
def test_a_text_with_no_feature_of_any_language_has_none(text: str) -> None:
    # py3langid answers its first class, Afrikaans, for a text none of whose byte
    # n-grams it knows: a page of emoji or punctuation was labelled "af".
    assert py3langid.classify(text)[0] == "af"
    assert language.detect_language(None, None, text) is None
