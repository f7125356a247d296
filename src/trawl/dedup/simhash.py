"""Fingerprints of a page's text: an exact hash, and a 64-bit SimHash. Pure.

SimHash (Charikar), as seed 004 describes it: the text's word trigrams (so
word order counts) are each hashed to 64 bits; every bit of the fingerprint
is the majority vote of that bit over all the hashes. Similar texts share
most trigrams, so their fingerprints differ in few bits. The top bit is
cleared, so the value fits a signed 64-bit column in SQLite and PostgreSQL.

No library does this over our tokens with stable hashes (Python's ``hash``
changes from process to process): a word is hashed with zlib's CRC-32 (C speed,
five times faster than BLAKE2b here) plus its length, spread to 64 bits by
splitmix64's finaliser; trigram hashes are mixed from word hashes.

All of it is arithmetic on 64-bit lanes, done without numpy (15-18 MB resident in
a crawl that needs it for nothing else): the lanes are packed into one Python int,
128 bits apart, so that one big-int operation works on every lane at once. A
product of two 64-bit values fits its 128 bits, so multiplying the packed int by
a 64-bit constant and masking keeps each lane's product modulo 2^64, as uint64
arithmetic does; shifts and masks are per lane too. The next word's lane is the
packed int shifted by 128 bits. The vote counts each bit over all lanes with
``int.bit_count`` on one byte column at a time. Same fingerprints as the numpy
code it replaced (tests/dedup/test_simhash.py holds that code and compares), and
about as fast (bench/RESULTS.md, "numpy off the crawl path").

Near duplicates are found with ``BandIndex``: the 63 bits are split into four
bands (16, 16, 16, 15 bits). Two fingerprints at most 3 bits apart cannot
differ in all four bands (pigeonhole), so at least one band is equal: four
exact lookups find every candidate, and the real Hamming distance confirms it.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from array import array
from collections.abc import Iterable

MASK63 = (1 << 63) - 1
MAX_DISTANCE = 3  # what four bands guarantee to find
MIN_WORDS = 3  # one trigram at least
_crc32 = zlib.crc32
_WORD = re.compile(r"[^\W_]+")
# Odd 64-bit constants (from splitmix64) that mix three word hashes into one.
_MIX1 = 0x9E3779B97F4A7C15
_MIX2 = 0xBF58476D1CE4E5B9
_MIX3 = 0x94D049BB133111EB
_LANE = b"\xff" * 8 + b"\x00" * 8  # one lane: 64 bits used, 64 bits of room above


class _Masks:
    """Masks over packed lanes, grown on demand: a mask longer than the value it
    is ANDed with works as well as an exact one (the result is as long as the value)."""

    def __init__(self) -> None:
        self.lanes = 0
        self._capacity = 0
        self.bit_columns: list[int] = []  # bit j of every byte: [j] counts bit j

    def grow(self, lanes: int) -> None:
        if lanes > self._capacity:
            self._capacity = max(2 * self._capacity, lanes, 256)
            self.lanes = int.from_bytes(_LANE * self._capacity, "little")
            self.bit_columns = [
                int.from_bytes(bytes([1 << j]) * self._capacity, "little") for j in range(8)
            ]


_masks = _Masks()


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def text_hash(text: str) -> int | None:
    """A 63-bit hash of the text with whitespace collapsed; None for no text."""
    collapsed = " ".join(text.split())
    if not collapsed:
        return None
    digest = hashlib.blake2b(collapsed.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & MASK63


def _pack(values: array[int]) -> int:
    """64-bit values as lanes 128 bits apart in one int (the first value lowest)."""
    spaced = array("Q", bytes(16 * len(values)))
    spaced[::2] = values
    return int.from_bytes(spaced, "little")


def _mix(values: int, lanes: int) -> int:
    """splitmix64's finaliser on every lane: each input bit moves about half the
    output bits. ``lanes`` masks each lane's low 64 bits (a product's high half and
    a shift's spill from the lane above are dropped)."""
    values ^= values >> 30 & lanes
    values = values * _MIX2 & lanes
    values ^= values >> 27 & lanes
    values = values * _MIX3 & lanes
    return values ^ (values >> 31 & lanes)


def simhash(text: str) -> int | None:
    """The 63-bit SimHash of the text's word trigrams; None under three words."""
    tokens = words(text)
    n = len(tokens)
    if n < MIN_WORDS:
        return None
    _masks.grow(n)
    lanes = _masks.lanes
    # Each distinct word is hashed once (a page repeats most of its words: about a
    # quarter of the manual's words are distinct on their page), in order of first use;
    # the page is then the join of its words' 16-byte lanes.
    distinct = dict.fromkeys(tokens)
    count = len(distinct)
    crcs = array("Q", [_crc32(w.encode()) | (len(w) << 32) for w in distinct])
    mixed = _mix(_pack(crcs), lanes).to_bytes(16 * count, "little")
    lane_of = dict(
        zip(distinct, [mixed[i : i + 16] for i in range(0, 16 * count, 16)], strict=True)
    )
    hashed = int.from_bytes(b"".join(map(lane_of.__getitem__, tokens)), "little")
    # Trigram k mixes words k, k+1 and k+2: the rotated words, shifted down one and
    # two lanes. The last two lanes are not trigrams; the vote reads only the first n - 2.
    rotated21 = (hashed << 21 & lanes) | (hashed >> 43 & lanes)
    rotated42 = (hashed << 42 & lanes) | (hashed >> 22 & lanes)
    trigrams = _mix((hashed * _MIX1 & lanes) ^ (rotated21 >> 128) ^ (rotated42 >> 256), lanes)
    voters = n - 2
    packed = trigrams.to_bytes(16 * n, "little")
    # The vote, bit by bit: byte k of every trigram as one int, and bit j of those
    # bytes counted by a mask and bit_count.
    fingerprint = 0
    for k in range(8):
        column = int.from_bytes(packed[k : 16 * voters : 16], "little")
        for j, bit_column in enumerate(_masks.bit_columns):
            if 2 * (column & bit_column).bit_count() > voters:
                fingerprint |= 1 << (8 * k + j)
    return fingerprint & MASK63


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
    """Every pair (i, j), i < j, of positions whose fingerprints are within 3 bits,
    in order.

    The same four bands as ``BandIndex``, over all fingerprints at once: per band,
    positions grouped by band value; two fingerprints within 3 bits share a band
    (pigeonhole), so every such pair is in some group, and each group's pairs are
    checked by their real distance. Work grows with the pairs that share a band,
    as in the numpy code it replaced (sorted bands, the k-th neighbours compared).
    """
    values = list(fingerprints)
    found: set[tuple[int, int]] = set()
    for shift, width in ((0, 16), (16, 16), (32, 16), (48, 15)):
        mask = (1 << width) - 1
        groups: dict[int, list[int]] = {}
        for position, value in enumerate(values):
            groups.setdefault(value >> shift & mask, []).append(position)
        for members in groups.values():
            for k, low in enumerate(members):
                value = values[low]
                for high in members[k + 1 :]:
                    if (value ^ values[high]).bit_count() <= MAX_DISTANCE:
                        found.add((low, high))
    return sorted(found)
