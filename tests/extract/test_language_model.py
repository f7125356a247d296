"""The detection model unpacked once into the cache folder (trawl.extract.language_model):
the same answers as py3langid's own loading, and a cache that cannot be used costs
speed only."""

from __future__ import annotations

import os
import time
import tracemalloc
from importlib.metadata import version
from pathlib import Path
from typing import Any

import py3langid
import pytest

from trawl.extract import language_model
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


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_same_answers_as_py3langid_from_the_cache(cache_home: Path) -> None:
    expected = [py3langid.classify(text) for text in TEXTS]
    first = load()  # unpacks and writes the cache
    written = list(cache_folder().iterdir())
    assert cache_folder() == cache_home / "trawl"
    assert len(written) == 1 and written[0].name.startswith("py3langid-")
    assert {p.name for p in written[0].iterdir()} == {
        f"{name}.npy" for name in ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")
    }
    second = load()  # maps what the first wrote
    assert answers(first) == expected
    assert answers(second) == expected
    assert [lang for lang, _ in expected[:8]] == ["en", "da", "sv", "no", "fi", "is", "de", "en"]


def test_an_unwritable_cache_folder_costs_speed_only(cache_home: Path) -> None:
    cache_home.parent.mkdir(parents=True, exist_ok=True)
    cache_home.write_text("a file where the cache folder would be")
    assert answers(load()) == [py3langid.classify(text) for text in TEXTS]
    assert cache_home.read_text() == "a file where the cache folder would be"


@pytest.mark.parametrize("damage", ["cut short", "emptied", "deleted"])
def test_a_damaged_cache_is_written_again(cache_home: Path, damage: str) -> None:
    load()
    (folder,) = cache_folder().iterdir()
    table = folder / "ptc.npy"
    if damage == "cut short":  # as a full disk would leave it
        table.write_bytes(table.read_bytes()[:1000])
    elif damage == "emptied":  # as a power cut before the data reached the disk would
        table.write_bytes(b"")
    else:
        table.unlink()
    assert answers(load()) == [py3langid.classify(text) for text in TEXTS]
    assert table.stat().st_size > 1_000_000


def test_a_killed_writers_staging_folder_is_removed(cache_home: Path) -> None:
    cache_folder().mkdir(parents=True)
    key = f"py3langid-{version('py3langid')}-{language_model._MODEL.stat().st_size}"
    left = cache_folder() / f".{key}-killed"
    left.mkdir()
    (left / "ptc.npy").write_bytes(b"half")
    hour_ago = time.time() - 3600
    os.utime(left, (hour_ago, hour_ago))
    live = cache_folder() / f".{key}-writing"  # another process's, still being written
    live.mkdir()

    load()

    assert not left.exists()
    assert live.exists()


def test_a_loaded_model_holds_little_heap(cache_home: Path) -> None:
    """py3langid keeps its DFA tables as Python lists of ints (about 10 MB in every
    process that detects a language); the mapped model keeps them as flat arrays."""
    load()  # writes the cache
    tracemalloc.start()
    try:
        model = load()
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert answers(model) == [py3langid.classify(text) for text in TEXTS]
    assert held < 4_000_000, f"the loaded model holds {held / 1e6:.1f} MB of heap"
