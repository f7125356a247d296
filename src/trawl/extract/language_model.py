"""py3langid's detection model, unpacked once and then mapped from disk.

py3langid ships its model LZMA-compressed (4.5 MB; 68 MB of arrays unpacked) and
unpacks it in every process that detects a language: about half a second of CPU,
paid by each of a crawl's parse workers at every crawl. py3langid has no other way
to load it, so this module does the one thing it lacks: the first process to need
the model writes the unpacked arrays to the user's cache folder, and every later
one maps them (about 10 ms); the operating system shares the mapped pages between
processes. Classification is still py3langid's own code, on the same numbers.

The class-probability table is stored as float32, upcast from the shipped float16
(the same values): scoring then converts nothing per page (120 -> 75 us a page).

Where the cache cannot be written or read, the model is unpacked in memory, as
py3langid would do it: slower, never wrong.
"""

from __future__ import annotations

import contextlib
import logging
import lzma
import os
import shutil
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import py3langid
from py3langid.langid import LanguageIdentifier

log = logging.getLogger(__name__)
_MODEL = Path(py3langid.__file__).parent / "data" / "model.npz.xz"
_ARRAYS = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")


def cache_folder() -> Path:
    """Where unpacked models live: $XDG_CACHE_HOME/trawl, else ~/.cache/trawl."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trawl"


STALE_STAGING = 600.0  # seconds: a staging folder this old was left by a killed writer


@cache
def identifier() -> Any:
    """The detection model of this process (a py3langid ``LanguageIdentifier``)."""
    for _ in range(2):
        try:
            folder = _unpacked_folder()
        except Exception:  # no home, no writable cache folder: slower, not wrong
            break
        try:
            return _identifier(_mapped(folder))
        except Exception:  # damaged from outside: written again, once
            log.warning("language model cache %s is damaged: writing it again", folder)
            shutil.rmtree(folder, ignore_errors=True)
    return _identifier(_unpack())


def _unpacked_folder() -> Path:
    """The cache folder of this exact model, written first if missing: the arrays are
    synced to disk in a staging folder, which is then renamed into place, so no
    process (and no power cut) ever leaves half of one where a reader looks."""
    # py3langid's own version, not importlib.metadata's: that module and what it
    # imports (zipfile, csv...) are 0.8 MB in a crawl that needs nothing else of them.
    key = f"py3langid-{py3langid.__version__}-{_MODEL.stat().st_size}"
    parent = cache_folder()
    folder = parent / key
    if folder.is_dir():
        return folder
    parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(parent, key)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=parent))
    try:
        for name, array in _unpack().items():
            with (staging / f"{name}.npy").open("wb") as f:
                np.save(f, array)
                f.flush()
                os.fsync(f.fileno())
        _fsync_folder(staging)
        staging.rename(folder)
        _fsync_folder(parent)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not folder.is_dir():  # another process's rename wins a race; else a real error
            raise
    return folder


def _remove_stale_staging(parent: Path, key: str) -> None:
    """Staging folders a killed writer left (up to 97 MB each); a live one is younger."""
    now = time.time()
    for left in parent.glob(f".{key}-*"):
        with contextlib.suppress(OSError):
            if now - left.stat().st_mtime > STALE_STAGING:
                shutil.rmtree(left, ignore_errors=True)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unpack() -> dict[str, np.ndarray[Any, Any]]:
    # Through a temporary file, as py3langid does: the 68 MB archive is never held in
    # memory beside the arrays read from it.
    with tempfile.TemporaryFile(suffix=".npz") as unpacked:
        with lzma.open(_MODEL) as packed:
            shutil.copyfileobj(packed, unpacked, length=1 << 20)
        unpacked.seek(0)
        with np.load(unpacked) as data:
            arrays = {name: data[name] for name in _ARRAYS}
    arrays["ptc"] = arrays["ptc"].astype(np.float32)
    return arrays


def _mapped(folder: Path) -> dict[str, np.ndarray[Any, Any]]:
    return {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}


def _identifier(arrays: dict[str, np.ndarray[Any, Any]]) -> Any:
    # The DFA walk indexes three tables once per byte of text. py3langid keeps two of
    # them as Python lists of 104,583 ints each, and a third it derives (the rows
    # shifted by 8): about 10 MB of int objects in every process that detects a
    # language, the largest thing a crawl holds beside its imports. Memoryviews of
    # flat arrays give the same plain ints, about 30 us slower on a 400-character
    # sample: the transitions stay mapped, the row tables take 1.5 MB. (The small
    # arrays are copied, so that only the two large files stay mapped.)
    model = LanguageIdentifier(
        arrays["ptc"],
        np.array(arrays["pc"]),
        arrays["classes"].tolist(),
        _ints(arrays["nextmove"]),
        _ints(np.array(arrays["out_feat"])),
        tk_row=(),
    )
    model.tk_row = _ints(np.array(arrays["nextmove_row"]))
    model._rowbase = _ints(arrays["nextmove_row"].astype(np.int64) << 8)
    return model


def _ints(array: np.ndarray[Any, Any]) -> memoryview[int]:
    """A flat integer array as a memoryview: indexing it gives Python ints, uncopied."""
    flat = np.ascontiguousarray(array)
    code: Any = flat.dtype.char  # an integer format: "H", "i", "I" or "l"
    ints: memoryview[int] = flat.data.cast("B").cast(code)
    return ints
