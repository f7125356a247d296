"""Fingerprints and the banded lookup: exact hashes, SimHash distances, recall 1.0."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import zlib
from itertools import combinations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser as HTMLParser

from fixture_sites import shared_data
from trawl.dedup.simhash import (
    MASK63,
    BandIndex,
    bands,
    distance,
    near_pairs,
    simhash,
    text_hash,
    words,
)


def article(seed: int, words: int = 1500) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"word{i}" for i in range(3000)]
    return [rng.choice(vocabulary) for _ in range(words)]


def test_text_hash_ignores_whitespace_and_fits_a_signed_column() -> None:
    a = text_hash("A page  about\nkiwis")
    assert a == text_hash(" A page about kiwis ")
    assert a != text_hash("A page about kiwi")
    assert a is not None and 0 <= a <= MASK63
    assert text_hash("   ") is None


def test_simhash_is_stable_63_bits_and_needs_a_trigram() -> None:
    text = " ".join(article(1))
    value = simhash(text)
    assert value is not None and 0 <= value <= MASK63
    assert value == simhash(text)
    assert simhash("two words") is None
    assert simhash("three words here") is not None


def test_a_small_edit_of_a_long_text_stays_within_three_bits() -> None:
    words = article(2)
    edited = list(words)
    edited[700] = "changed"
    a, b = simhash(" ".join(words)), simhash(" ".join(edited))
    assert a is not None and b is not None
    assert distance(a, b) <= 3
    other = simhash(" ".join(article(3)))
    assert other is not None and distance(a, other) > 10


def test_word_order_counts() -> None:
    words = article(4, 200)
    shuffled = list(words)
    random.Random(0).shuffle(shuffled)
    a, b = simhash(" ".join(words)), simhash(" ".join(shuffled))
    assert a is not None and b is not None and distance(a, b) > 3


def test_bands_cover_all_63_bits() -> None:
    assert bands(MASK63) == (0xFFFF, 0xFFFF, 0xFFFF, 0x7FFF)
    assert bands(0) == (0, 0, 0, 0)


def test_band_index_finds_within_three_bits_and_refuses_more() -> None:
    index = BandIndex()
    base = 0x1234_5678_9ABC_DEF0 & MASK63
    index.add(base)
    index.add(base ^ (1 << 3) ^ (1 << 20) ^ (1 << 40))  # 3 bits, one in each of three bands
    index.add(base ^ 0b1111)  # 4 bits
    assert index.near(base) == [0, 1]
    assert index.near(base, 0) == [0]
    with pytest.raises(ValueError, match="up to 3"):
        index.near(base, 4)


def brute_force(values: list[int]) -> set[tuple[int, int]]:
    return {
        (i, j)
        for i, j in combinations(range(len(values)), 2)
        if distance(values[i], values[j]) <= 3
    }


fingerprint = st.integers(min_value=0, max_value=MASK63)
flips = st.lists(st.integers(min_value=0, max_value=62), min_size=0, max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    randoms=st.lists(fingerprint, min_size=1, max_size=40),
    variants=st.lists(st.tuples(st.integers(min_value=0), flips), max_size=40),
)
def test_banded_lookup_finds_every_pair_brute_force_finds(
    randoms: list[int], variants: list[tuple[int, list[int]]]
) -> None:
    # Random fingerprints are almost never close, so plant near copies (0 to 4 bits
    # flipped, some in the same band) of earlier ones among them.
    values = list(randoms)
    for which, bits in variants:
        value = values[which % len(values)]
        for bit in bits:
            value ^= 1 << bit
        values.append(value)
    expected = brute_force(values)
    assert near_pairs(values) == sorted(expected)  # each pair once, in order
    index = BandIndex()
    for value in values:
        index.add(value)
    for i, value in enumerate(values):
        within = {j for j in range(len(values)) if (min(i, j), max(i, j)) in expected}
        assert set(index.near(value)) == within | {j for j, v in enumerate(values) if v == value}


def test_near_pairs_and_simhash_load_no_numpy() -> None:
    """numpy is 15-18 MB resident; a crawl's pages and its end step need none of it."""
    code = (
        "import sys\n"
        "from trawl.dedup.simhash import near_pairs, simhash\n"
        "far = (1 << 62) - 1\n"
        "assert near_pairs([far, 1, far ^ 4, 3, far]) == [(0, 2), (0, 4), (1, 3), (2, 4)]\n"
        "assert simhash('the river runs past the old stone mill') is not None\n"
        "print('numpy' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "False"


# --- the numpy code the pure-Python one replaced, held as the reference ----------------

_MIX1 = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xBF58476D1CE4E5B9)
_MIX3 = np.uint64(0x94D049BB133111EB)


def _numpy_mix(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    with np.errstate(over="ignore"):
        values = values ^ (values >> np.uint64(30))
        values = values * _MIX2
        values = values ^ (values >> np.uint64(27))
        values = values * _MIX3
        return values ^ (values >> np.uint64(31))


def _numpy_rotate(values: npt.NDArray[np.uint64], bits: int) -> npt.NDArray[np.uint64]:
    return (values << np.uint64(bits)) | (values >> np.uint64(64 - bits))


def numpy_simhash(text: str) -> int | None:
    tokens = words(text)
    if len(tokens) < 3:
        return None
    slot: dict[str, int] = {}
    number = slot.setdefault
    positions = np.fromiter(
        (number(w, len(slot)) for w in tokens), dtype=np.intp, count=len(tokens)
    )
    distinct = np.fromiter(
        (zlib.crc32(w.encode()) | (len(w) << 32) for w in slot), dtype=np.uint64, count=len(slot)
    )
    hashed = _numpy_mix(distinct)[positions]
    with np.errstate(over="ignore"):
        trigrams = _numpy_mix(
            hashed[:-2] * _MIX1 ^ _numpy_rotate(hashed[1:-1], 21) ^ _numpy_rotate(hashed[2:], 42)
        )
    bits = np.unpackbits(trigrams.astype("<u8", copy=False).view(np.uint8), bitorder="little")
    ones = bits.reshape(-1, 64).sum(axis=0, dtype=np.int64)
    majority = np.packbits(ones * 2 > len(trigrams), bitorder="little")
    return int(majority.view("<u8")[0]) & MASK63


def numpy_near_pairs(fingerprints: list[int]) -> list[tuple[int, int]]:
    values = np.array(fingerprints, dtype=np.uint64)
    found: list[npt.NDArray[np.int64]] = []
    for shift, width in ((0, 16), (16, 16), (32, 16), (48, 15)):
        band = (values >> np.uint64(shift)) & np.uint64((1 << width) - 1)
        order = np.argsort(band, kind="stable")
        ranked = band[order]
        for k in range(1, len(values)):
            same = np.flatnonzero(ranked[:-k] == ranked[k:])
            if same.size == 0:
                break
            left, right = order[same], order[same + k]
            close = np.bitwise_count(values[left] ^ values[right]) <= 3
            low, high = np.minimum(left, right)[close], np.maximum(left, right)[close]
            found.append(np.stack([low, high], axis=1))
    if not found:
        return []
    pairs = {(int(a), int(b)) for a, b in np.concatenate(found)}
    return sorted(pairs)


def real_texts() -> list[str]:
    """Article bodies of the extraction benchmark (several languages) and the text of
    the PostgreSQL and SUMO manuals' pages."""
    truth = json.loads(shared_data("article-extraction-benchmark/ground-truth.json").read_text())
    texts = [page["articleBody"] for page in truth.values()]
    for site in ("site-postgresql-15-docs", "site-sumo-docs"):
        for path in sorted(shared_data(site).rglob("*.html"))[:150]:
            body = HTMLParser(path.read_bytes()).body
            texts.append(body.text(separator=" ") if body else "")
    return texts


def test_same_fingerprints_as_the_numpy_code_on_real_pages() -> None:
    texts = real_texts()
    assert len(texts) > 400
    ours = [simhash(text) for text in texts]
    assert ours == [numpy_simhash(text) for text in texts]
    # Short, empty, repeated and non-Latin texts, and lengths around the lanes' masks.
    odd = [
        "",
        "a b",
        "a b c",
        "x " * 5000,
        "日本語 の テキスト です",
        "über straße éa",
        "_ _ _ a b c",
    ]
    odd += [" ".join(article(seed, size)) for seed, size in enumerate((3, 4, 255, 256, 257, 600))]
    assert [simhash(text) for text in odd] == [numpy_simhash(text) for text in odd]


def test_same_pairs_as_the_numpy_code_on_real_fingerprints() -> None:
    fingerprints = [value for value in map(simhash, real_texts()) if value is not None]
    # Near copies and exact copies among them, as a site's mirrors and templates give.
    rng = random.Random(5)
    for value in fingerprints[:200]:
        fingerprints.append(value ^ (1 << rng.randrange(63)) ^ (1 << rng.randrange(63)))
        fingerprints.append(value)
    rng.shuffle(fingerprints)
    pairs = near_pairs(fingerprints)
    assert len(pairs) > 400
    assert pairs == numpy_near_pairs(fingerprints)
    assert near_pairs([]) == numpy_near_pairs([]) == []
