"""Fingerprints of a page's text: an exact hash, and a 64-bit SimHash. Pure.

SimHash (Charikar), as seed 004 describes it: the text's word trigrams (so
word order counts) are each hashed to 64 bits; every bit of the fingerprint
is the majority vote of that bit over all the hashes. Similar texts share
most trigrams, so their fingerprints differ in few bits. The top bit is
cleared, so the value fits a signed 64-bit column in SQLite and PostgreSQL.

No library does this over our tokens with stable hashes (Python's ``hash``
changes from process to process): a word is hashed with zlib's CRC-32 (C speed,
five times faster than BLAKE2b here) plus its length, spread to 64 bits by
splitmix64's finaliser; trigram hashes are mixed from word hashes with numpy,
and the vote is numpy too.

Near duplicates are found with ``BandIndex``: the 63 bits are split into four
bands (16, 16, 16, 15 bits). Two fingerprints at most 3 bits apart cannot
differ in all four bands (pigeonhole), so at least one band is equal: four
exact lookups find every candidate, and the real Hamming distance confirms it.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

MASK63 = (1 << 63) - 1
MAX_DISTANCE = 3  # what four bands guarantee to find
MIN_WORDS = 3  # one trigram at least
_crc32 = zlib.crc32
_WORD = re.compile(r"[^\W_]+")
# Odd 64-bit constants (from splitmix64) that mix three word hashes into one.
_MIX1 = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xBF58476D1CE4E5B9)
_MIX3 = np.uint64(0x94D049BB133111EB)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def text_hash(text: str) -> int | None:
    """A 63-bit hash of the text with whitespace collapsed; None for no text."""
    collapsed = " ".join(text.split())
    if not collapsed:
        return None
    digest = hashlib.blake2b(collapsed.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & MASK63


def _mix(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """splitmix64's finaliser: every input bit moves about half the output bits."""
    with np.errstate(over="ignore"):  # wrapping multiplication is the point
        values = values ^ (values >> np.uint64(30))
        values = values * _MIX2
        values = values ^ (values >> np.uint64(27))
        values = values * _MIX3
        return values ^ (values >> np.uint64(31))


def simhash(text: str) -> int | None:
    """The 63-bit SimHash of the text's word trigrams; None under three words."""
    tokens = words(text)
    if len(tokens) < MIN_WORDS:
        return None
    # Each distinct word is hashed once (a page repeats most of its words: about
    # a quarter of the manual's words are distinct on their page); ``slot`` numbers
    # them in order of first use, and the word hashes are then spread by position.
    slot: dict[str, int] = {}
    number = slot.setdefault
    positions = np.fromiter(
        (number(w, len(slot)) for w in tokens), dtype=np.intp, count=len(tokens)
    )
    distinct = np.fromiter(
        (_crc32(w.encode()) | (len(w) << 32) for w in slot), dtype=np.uint64, count=len(slot)
    )
    hashed = _mix(distinct)[positions]
    with np.errstate(over="ignore"):
        trigrams = _mix(hashed[:-2] * _MIX1 ^ _rotate(hashed[1:-1], 21) ^ _rotate(hashed[2:], 42))
    # The vote, bit by bit: each hash's eight bytes unpacked into its 64 bits (least
    # significant first), then counted per bit, and the majority packed back.
    bits = np.unpackbits(trigrams.astype("<u8", copy=False).view(np.uint8), bitorder="little")
    ones = bits.reshape(-1, 64).sum(axis=0, dtype=np.int64)
    majority = np.packbits(ones * 2 > len(trigrams), bitorder="little")
    return int(majority.view("<u8")[0]) & MASK63


def _rotate(values: npt.NDArray[np.uint64], bits: int) -> npt.NDArray[np.uint64]:
    return (values << np.uint64(bits)) | (values >> np.uint64(64 - bits))


def distance(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def bands(fingerprint: int) -> tuple[int, int, int, int]:
    return (
        fingerprint & 0xFFFF,
        (fingerprint >> 16) & 0xFFFF,
        (fingerprint >> 32) & 0xFFFF,
        (fingerprint >> 48) & 0x7FFF,
    )


class BandIndex:
    """Fingerprints by band value: finds every stored fingerprint within 3 bits of one.

    In memory: four dicts of band value -> ids. The batch step builds it from the
    store each time (seed 004 does four indexed equality lookups in the database;
    in memory the same lookups cost microseconds).
    """

    def __init__(self) -> None:
        self._tables: tuple[dict[int, list[int]], ...] = ({}, {}, {}, {})
        self._fingerprints: list[int] = []

    def __len__(self) -> int:
        return len(self._fingerprints)

    def add(self, fingerprint: int) -> int:
        """Store ``fingerprint``; return its id (0, 1, 2... in order of adding)."""
        ident = len(self._fingerprints)
        self._fingerprints.append(fingerprint)
        for table, value in zip(self._tables, bands(fingerprint), strict=True):
            table.setdefault(value, []).append(ident)
        return ident

    def fingerprint(self, ident: int) -> int:
        return self._fingerprints[ident]

    def near(self, fingerprint: int, max_distance: int = MAX_DISTANCE) -> list[int]:
        """Ids of stored fingerprints at most ``max_distance`` (<= 3) bits from this one."""
        if not 0 <= max_distance <= MAX_DISTANCE:
            raise ValueError(f"four bands find distances up to {MAX_DISTANCE}")
        stored = self._fingerprints
        first, second, third, fourth = self._tables
        a, b, c, d = bands(fingerprint)
        found = {
            ident
            for ident in (
                *first.get(a, ()),
                *second.get(b, ()),
                *third.get(c, ()),
                *fourth.get(d, ()),
            )
            if (stored[ident] ^ fingerprint).bit_count() <= max_distance
        }
        return sorted(found)


def near_pairs(fingerprints: Iterable[int]) -> list[tuple[int, int]]:
    """Every pair (i, j), i < j, of positions whose fingerprints are within 3 bits.

    The same four bands as ``BandIndex``, over all fingerprints at once with numpy:
    per band, positions sorted by band value; the k-th neighbour in that order
    shares the band exactly when the values match, for k = 1, 2, ... until no
    neighbour does. A lookup per fingerprint in bulk, at numpy speed.
    """
    values = np.fromiter(fingerprints, dtype=np.uint64)
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
            close = np.bitwise_count(values[left] ^ values[right]) <= MAX_DISTANCE
            low, high = np.minimum(left, right)[close], np.maximum(left, right)[close]
            found.append(np.stack([low, high], axis=1))
    if not found:
        return []
    # Each pair once, in order: one key a pair, sorted. (np.unique does the same, but
    # loads numpy.ma with it, 1.3 MB resident in a crawl that has no other use for it.)
    stacked = np.concatenate(found)
    keys = stacked[:, 0] * len(values) + stacked[:, 1]
    keys.sort()
    if not keys.size:
        return []
    keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
    return [(int(k) // len(values), int(k) % len(values)) for k in keys]
