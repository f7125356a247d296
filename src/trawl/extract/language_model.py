"""py3langid's detection model, scored without numpy, unpacked once and then mapped.

py3langid (a naive Bayes model over byte n-grams: a DFA finds a text's features,
and each language's score is the sum of their log-probabilities weighted by
log1p of their counts) scores with numpy, and so does every process that imports
it: 15-18 MB resident in a crawl that has no other use for numpy. This module
runs the same model on the same numbers in plain Python; py3langid itself is
never imported (its module imports numpy), only its packaged model is read.

**Exact sums instead of float32 ones.** The table ships as float16: every
log-probability is a multiple of 2^-9 (checked when unpacking), so each is
stored as a small integer, offset to be non-negative. A feature's row (one value
a class, 142 classes) is one big-endian int with a 3-byte lane a class, so adding
rows is one big-int addition. Features are grouped by count: a group's rows are
summed in their 3-byte lanes, widened to 8-byte lanes and multiplied by the
group's weight (float32 log1p of the count, an exact integer at 2^24), so the
scores are exact. py3langid's float32 product rounds; the two can pick
different languages only where two scores tie to float32 precision (none of
7,668 samples from the shared pages, bench/RESULTS.md "numpy off the crawl path").

**Speed.** ``int.from_bytes`` of a row costs about as much as the rest of a
feature's work together, so the rows of the most recent features are kept as
ints (``ROW_CACHE``, about 2 MB when full; emptied when full, so a crawl that
moves to other languages keeps its cache useful).

**Unpacked once.** The model ships LZMA-compressed (4.5 MB); unpacking it (about
a second) is done by the first process that needs it, into the user's cache
folder, and every later one maps the files (the operating system shares the
pages between processes). Where the cache cannot be written or read, the model
is unpacked into memory: slower, never wrong.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import math
import mmap
import os
import re
import shutil
import struct
import sys
import tempfile
import time
import unicodedata
from array import array
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any, cast

log = logging.getLogger(__name__)
Table = bytes | mmap.mmap  # a cache file, mapped or (without a cache) read


def _package() -> Path:
    # The folder without importing the package: py3langid/__init__ imports numpy.
    spec = importlib.util.find_spec("py3langid")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("py3langid is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


_MODEL = _package() / "data" / "model.npz.xz"
FORMAT = "ints1"  # the cache's layout; a new layout gets a new folder
MAX_BYTES = 2047  # of encoded text scored (a language sample is 400 characters)
ROW_CACHE = 4096  # feature rows kept as ints
WEIGHT_BITS = 24  # float32 log1p(count) >= log(2) is an integer at 2^24
STALE_STAGING = 600.0  # seconds: a staging folder this old was left by a killed writer
# py3langid's score of a text without features (with its first class, "af": no answer)
NO_FEATURES = -3.4028234663852886e38


def cache_folder() -> Path:
    """Where unpacked models live: $XDG_CACHE_HOME/trawl, else ~/.cache/trawl."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trawl"


def _version() -> str:
    # Read, not imported (numpy), nor asked of importlib.metadata (0.8 MB of imports).
    text = (_package() / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r"""__version__\s*=\s*['"]([^'"]+)['"]""", text)
    return found.group(1) if found else "unknown"


class Model:
    """py3langid's classifier over the unpacked tables (mapped files or bytes)."""

    def __init__(self, tables: dict[str, Table], meta: dict[str, Any]) -> None:
        self.classes: list[str] = meta["classes"]
        self._aliases = _alias_pairs(self.classes)
        self._lane: int = meta["lane_bytes"]
        self._row_bytes = self._lane * len(self.classes)
        self._low: int = meta["low"]
        self._scale: int = meta["scale_bits"] + WEIGHT_BITS  # of the weighted sums
        # The class priors as integers at the scores' scale, checked exact.
        self._prior_bits: int = meta["prior_bits"]
        self._priors = [_exact(float.fromhex(p), self._prior_bits) for p in meta["priors"]]
        self._rows = tables["rows.bin"]
        self._nextmove = memoryview(tables["nextmove.bin"]).cast(meta["nextmove_code"])
        self._rowbase = memoryview(tables["rowbase.bin"]).cast("I")
        self._out = memoryview(tables["out_feat.bin"]).cast("i")
        self._row_ints = _Rows(self._rows, self._row_bytes)
        self._weights: dict[int, int] = {}

    def classify(self, text: str) -> tuple[str, float]:
        """(language, score) as py3langid's ``classify`` gives them, for a str."""
        data = _encode(text)[:MAX_BYTES]
        visits = self._visits(data)
        if not visits:
            return self.classes[0], NO_FEATURES
        scores, offset = self._scores(visits)
        for first, dupe in self._aliases:  # script aliases (srl -> sr) share one label
            scores[first] = max(scores[first], scores[dupe])
            scores[dupe] = -(1 << 400)
        best = max(range(len(scores)), key=scores.__getitem__)  # the first of equals
        return self.classes[best], (scores[best] + offset) / (1 << self._prior_bits)

    def _visits(self, data: bytes) -> Counter[int]:
        # py3langid's ``visit_counts``: the DFA walked byte by byte.
        nextmove, rowbase, out = self._nextmove, self._rowbase, self._out
        state = 0
        found: list[int] = []
        append = found.append
        for byte in data:
            state = nextmove[rowbase[state] + byte]
            feature = out[state]
            if feature >= 0:
                append(feature)
        return Counter(found)

    def _scores(self, visits: Counter[int]) -> tuple[list[int], int]:
        """Each class's score at 2^prior_bits, less ``offset`` (the same for all).

        Every feature is weighted as if seen once (one sum over all rows), then the
        features seen more often add the difference of weights, a sum per count."""
        rows = self._row_ints.__getitem__  # a row read from the table on a miss
        once = self._weight(1)
        total = self._widen(sum(map(rows, visits))) * once
        weights = once * len(visits)
        more: dict[int, list[int]] = {}
        for feature, count in visits.items():
            if count > 1:
                more.setdefault(count, []).append(feature)
        for count, features in more.items():
            extra = self._weight(count) - once
            total += self._widen(sum(map(rows, features))) * extra
            weights += extra * len(features)
        lanes = array("Q", total.to_bytes(8 * len(self.classes), "big"))
        if sys.byteorder == "little":
            lanes.byteswap()
        shift = self._prior_bits - self._scale
        scores = [
            (value << shift) + prior for value, prior in zip(lanes, self._priors, strict=True)
        ]
        return scores, (self._low * weights) << shift

    def _widen(self, summed: int) -> int:
        """Row lanes (3 bytes) as 8-byte lanes, room for the products by weights."""
        lane = self._lane
        narrow = summed.to_bytes(self._row_bytes, "big")
        wide = bytearray(8 * len(self.classes))
        for k in range(lane):
            wide[8 - lane + k :: 8] = narrow[k::lane]
        return int.from_bytes(wide, "big")

    def _weight(self, count: int) -> int:
        weight = self._weights.get(count)
        if weight is None:  # numpy's float32 log1p, to its last bit or one off
            rounded = struct.unpack("f", struct.pack("f", math.log1p(count)))[0]
            weight = self._weights[count] = _exact(rounded, WEIGHT_BITS)
        return weight


class _Rows(dict[int, int]):
    """Feature -> its row as an int, read from the table on first use; emptied when
    it holds ``ROW_CACHE`` rows. (A dict lookup in ``map`` costs a tenth of reading
    a row, and hits stay in C.)"""

    def __init__(self, table: Table, row_bytes: int) -> None:
        super().__init__()
        self._table = table
        self._row_bytes = row_bytes

    def __missing__(self, feature: int) -> int:
        if len(self) >= ROW_CACHE:
            self.clear()
        start = feature * self._row_bytes
        value = self[feature] = int.from_bytes(self._table[start : start + self._row_bytes], "big")
        return value


def _exact(value: float, bits: int) -> int:
    scaled = value * (1 << bits)
    if not scaled.is_integer():
        raise ValueError(f"{value!r} is not a multiple of 2^-{bits}")
    return int(scaled)


def _alias_pairs(classes: list[str]) -> list[tuple[int, int]]:
    first: dict[str, int] = {}
    pairs = []
    for i, label in enumerate(classes):
        if label in first:
            pairs.append((first[label], i))
        else:
            first[label] = i
    return pairs


def _encode(text: str) -> bytes:
    # py3langid's ``_encode`` for a str.
    if text.isupper():
        text = text.lower()
    return unicodedata.normalize("NFC", text).encode("utf8", errors="surrogatepass")


@cache
def identifier() -> Model:
    """The detection model of this process."""
    for _ in range(2):
        try:
            folder = _unpacked_folder()
        except Exception:  # no home, no writable cache folder: slower, not wrong
            break
        try:
            return _mapped(folder)
        except Exception:  # damaged from outside: written again, once
            log.warning("language model cache %s is damaged: writing it again", folder)
            shutil.rmtree(folder, ignore_errors=True)
    tables, meta = _unpack()
    return Model(dict[str, Table](tables), meta)


@cache
def rebuilt() -> Model:
    """``identifier`` again, after its tables raised while scoring: damage the size
    check cannot see (bits flipped on disk, a stray write), which would fail every
    page's parse. The cache is removed and written again, once a process: an error
    the new tables raise too is a bug, and is raised."""
    folder = cache_folder() / _key()
    log.warning("language model cache %s is damaged: writing it again", folder)
    shutil.rmtree(folder, ignore_errors=True)
    identifier.cache_clear()
    return identifier()


def _mapped(folder: Path) -> Model:
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    tables: dict[str, Table] = {}
    for name, size in meta["sizes"].items():
        with (folder / name).open("rb") as f:
            mapped = tables[name] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        # Each text reads a few hundred scattered rows: without read-around, a fault
        # brings in its own page only (resident model after 181 articles 85 -> 58 MB).
        mapped.madvise(mmap.MADV_RANDOM)
        if len(mapped) != size:
            raise ValueError(f"{name} is {len(tables[name])} bytes, not {size}")
    return Model(tables, meta)


def _unpacked_folder() -> Path:
    """The cache folder of this exact model, written first if missing: the files are
    synced to disk in a staging folder, which is then renamed into place, so no
    process (and no power cut) ever leaves half of one where a reader looks."""
    key = _key()
    parent = cache_folder()
    folder = parent / key
    if folder.is_dir():
        # Every process looks (one listing): a writer killed after another wrote the
        # cache left a staging folder that no later unpacking would see.
        _remove_stale(parent, key)
        return folder
    parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(parent, key)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=parent))
    try:
        tables, meta = _unpack()
        for name, data in (("meta.json", json.dumps(meta).encode()), *tables.items()):
            with (staging / name).open("wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
                # Written pages stay cached in large folios, and mapping any byte of
                # one maps all of it (2 MB resident for a 426-byte row): dropped, they
                # come back a page at a time as readers fault them in.
                os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        _fsync_folder(staging)
        staging.rename(folder)
        _fsync_folder(parent)
    except BaseException as e:  # Ctrl-C too: its staging folder is not left behind
        shutil.rmtree(staging, ignore_errors=True)
        # another process's rename wins a race; else a real error
        if not isinstance(e, OSError) or not folder.is_dir():
            raise
    return folder


def _model() -> str:
    """The shipped model's name in a cache folder's, without the layout."""
    return f"py3langid-{_version()}-{_MODEL.stat().st_size}"


def _key() -> str:
    return f"{_model()}-{FORMAT}"


def _remove_stale(parent: Path, key: str) -> None:
    """Staging folders a killed writer left (83 MB each); a live one is younger. And
    this model unpacked in a layout of an earlier version (93 MB for the first): no
    process of this version reads it. A staging folder's name starts with a dot, so
    one being written now is never among them; another model's folders (another
    install's py3langid) are left alone."""
    now = time.time()
    for left in parent.glob(f".{key}-*"):
        with contextlib.suppress(OSError):
            if now - left.stat().st_mtime > STALE_STAGING:
                shutil.rmtree(left, ignore_errors=True)
    model = _model()
    for old in (parent / model, *parent.glob(f"{model}-*")):
        if old.name != key and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- unpacking the shipped archive (an npz: a zip of .npy files) --------------------


def _unpack() -> tuple[dict[str, bytes], dict[str, Any]]:
    """The cache's files from the shipped model, read without numpy."""
    # Imported here: only the first process on a machine unpacks.
    import lzma  # noqa: PLC0415
    import zipfile  # noqa: PLC0415

    # Through a temporary file, as py3langid does: the 68 MB archive is never held in
    # memory beside the arrays read from it.
    with tempfile.TemporaryFile(suffix=".npz") as unpacked:
        with lzma.open(_MODEL) as packed:
            shutil.copyfileobj(packed, unpacked, length=1 << 20)
        unpacked.seek(0)
        with zipfile.ZipFile(unpacked) as archive:
            read = {name: _npy(archive.read(f"{name}.npy")) for name in _NAMES}
    (_, (classes_count,), classes_raw) = read["classes"]
    width = len(classes_raw) // classes_count
    classes = [
        classes_raw[i : i + width].decode("utf-32-le").rstrip("\0")
        for i in range(0, len(classes_raw), width)
    ]
    priors = _numbers(read["pc"], {"<f4": "f"})
    rows, order, lane, scale, low = _rows(read["ptc"], len(classes))
    position = {feature: i for i, feature in enumerate(order)}
    prior_bits = scale + WEIGHT_BITS
    while not all((p * (1 << prior_bits)).is_integer() for p in priors):
        prior_bits += 1
    nextmove = _numbers(read["nextmove"], {"<u2": "H", "<u4": "I"})
    row_index = _numbers(read["nextmove_row"], {"<u2": "H", "<u4": "I"})
    out_feat = array("i", [position.get(f, f) for f in _numbers(read["out_feat"], {"<i4": "i"})])
    meta = {
        "classes": classes,
        "priors": [float(p).hex() for p in priors],
        "prior_bits": prior_bits,
        "features": len(order),
        "lane_bytes": lane,
        "scale_bits": scale,
        "low": low,
        "nextmove_code": nextmove.typecode,
    }
    tables = {
        "rows.bin": rows,
        "nextmove.bin": nextmove.tobytes(),
        "rowbase.bin": array("I", [row << 8 for row in row_index]).tobytes(),
        "out_feat.bin": out_feat.tobytes(),
    }
    meta["sizes"] = {name: len(data) for name, data in tables.items()}
    return tables, meta


_NAMES = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")
_Npy = tuple[str, tuple[int, ...], bytes]


def _npy(data: bytes) -> _Npy:
    """(dtype, shape, raw data) of a .npy file (format versions 1 to 3)."""
    if data[:6] != b"\x93NUMPY":
        raise ValueError("not a .npy file")
    size_bytes = 2 if data[6] == 1 else 4
    start = 8 + size_bytes
    header_size = int.from_bytes(data[8:start], "little")
    import ast  # noqa: PLC0415 (only when unpacking)

    header = ast.literal_eval(data[start : start + header_size].decode("latin-1"))
    if header["fortran_order"]:
        raise ValueError("a Fortran-ordered array")
    return str(header["descr"]), tuple(header["shape"]), data[start + header_size :]


def _numbers(read: _Npy, codes: dict[str, str]) -> array[Any]:
    descr, _shape, raw = read
    if descr not in codes:
        raise ValueError(f"unexpected dtype {descr}")
    numbers = array(codes[descr])
    numbers.frombytes(raw)
    if sys.byteorder == "big":  # .npy's "<" is little-endian
        numbers.byteswap()
    return numbers


def _rows(read: _Npy, classes: int) -> tuple[bytes, list[int], int, int, int]:
    """The float16 table as big-endian rows of fixed-width integer lanes:
    (rows, the features in the rows' order, lane bytes, scale bits, low).

    Rows are ordered by their largest log-probability, highest first: features that
    are frequent in some language come first, so that the rows a text reads share
    pages (a crawl's resident share of the 43 MB table: bench/RESULTS.md)."""
    descr, (features, width), raw = read
    if descr != "<f2" or width != classes:
        raise ValueError(f"unexpected class-probability table {descr} {read[1]}")
    halves = _numbers((descr, read[1], raw), {"<f2": "H"})
    values = {h: cast(float, struct.unpack("<e", h.to_bytes(2, "little"))[0]) for h in set(halves)}
    if not all(math.isfinite(v) for v in values.values()):
        raise ValueError("the table holds a value that is not a number")
    scale = 0  # the fewest fraction bits that make every value an integer
    while not all((v * (1 << scale)).is_integer() for v in values.values()):
        scale += 1
    low = min(int(v * (1 << scale)) for v in values.values())
    high = max(int(v * (1 << scale)) for v in values.values())
    # A lane holds the sum of up to MAX_BYTES features' values (one feature a byte).
    lane = (((high - low) * MAX_BYTES).bit_length() + 7) // 8
    encoded = [b""] * (1 << 16)  # by float16 bit pattern: a list is quicker than a dict
    for h, v in values.items():
        encoded[h] = (int(v * (1 << scale)) - low).to_bytes(lane, "big")
    encoded_rows: list[bytes] = []
    largest: list[int] = []  # a row's largest value as its smallest bit pattern
    block = 1024 * classes
    for start in range(0, len(halves), block):
        patterns = halves[start : start + block].tolist()
        for row in range(0, len(patterns), classes):
            cells = patterns[row : row + classes]
            largest.append(min(cells))
            encoded_rows.append(b"".join(map(encoded.__getitem__, cells)))
    order = list(range(features))
    if high < 0:  # log-probabilities: a larger value has the smaller float16 bit pattern
        order.sort(key=largest.__getitem__)
    rows = b"".join(map(encoded_rows.__getitem__, order))
    return rows, order, lane, scale, low
