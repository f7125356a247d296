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

import io
import lzma
import os
import shutil
import tempfile
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import py3langid
from py3langid.langid import LanguageIdentifier

_MODEL = Path(py3langid.__file__).parent / "data" / "model.npz.xz"
_ARRAYS = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")


def cache_folder() -> Path:
    """Where unpacked models live: $XDG_CACHE_HOME/trawl, else ~/.cache/trawl."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trawl"


@cache
def identifier() -> Any:
    """The detection model of this process (a py3langid ``LanguageIdentifier``)."""
    try:
        folder = _unpacked_folder()
        try:
            arrays = _mapped(folder)
        except ValueError:  # damaged from outside (it is written whole or not at all)
            shutil.rmtree(folder, ignore_errors=True)
            arrays = _mapped(_unpacked_folder())
    except (OSError, ValueError):  # no writable cache folder
        arrays = _unpack()
    return _identifier(arrays)


def _unpacked_folder() -> Path:
    """The cache folder of this exact model, written first if missing (atomically: a
    folder renamed into place, so a concurrent process never reads half of one)."""
    key = f"py3langid-{version('py3langid')}-{_MODEL.stat().st_size}"
    folder = cache_folder() / key
    if folder.is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=folder.parent))
    try:
        for name, array in _unpack().items():
            np.save(staging / f"{name}.npy", array)
        staging.rename(folder)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not folder.is_dir():  # another process's rename wins a race; else a real error
            raise
    return folder


def _unpack() -> dict[str, np.ndarray[Any, Any]]:
    with lzma.open(_MODEL) as packed, np.load(io.BytesIO(packed.read())) as data:
        arrays = {name: data[name] for name in _ARRAYS}
    arrays["ptc"] = arrays["ptc"].astype(np.float32)
    return arrays


def _mapped(folder: Path) -> dict[str, np.ndarray[Any, Any]]:
    return {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}


def _identifier(arrays: dict[str, np.ndarray[Any, Any]]) -> Any:
    nextmove = arrays["nextmove"]
    # The DFA walk indexes its transitions once per byte of text: a memoryview of the
    # mapped array gives plain ints as fast as py3langid's own array.array, uncopied.
    transitions = np.ascontiguousarray(nextmove).data.cast("B").cast(nextmove.dtype.char)
    return LanguageIdentifier(
        arrays["ptc"],
        np.asarray(arrays["pc"]),
        arrays["classes"].tolist(),
        transitions,
        arrays["out_feat"].tolist(),
        tk_row=arrays["nextmove_row"].tolist(),
    )
