"""Fingerprints and the banded lookup: exact hashes, SimHash distances, recall 1.0."""

from __future__ import annotations

import random
import subprocess
import sys
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.dedup.simhash import (
    MASK63,
    BandIndex,
    bands,
    distance,
    near_pairs,
    simhash,
    text_hash,
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


def test_near_pairs_loads_no_numpy_ma() -> None:
    """numpy.ma (1.3 MB resident) comes with np.unique; a crawl's end has no other use."""
    code = (
        "import sys\n"
        "from trawl.dedup.simhash import near_pairs\n"
        "far = (1 << 62) - 1\n"
        "assert near_pairs([far, 1, far ^ 4, 3, far]) == [(0, 2), (0, 4), (1, 3), (2, 4)]\n"
        "print('numpy.ma' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "False"
